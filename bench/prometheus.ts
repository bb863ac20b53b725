// Reads a Prometheus endpoint in its protobuf exposition format (delimited
// io.prometheus.client.MetricFamily messages), so figures come from a
// structured answer rather than from parsing the text format.
import protobuf from 'protobufjs';

const root = protobuf.Root.fromJSON({
  nested: {
    LabelPair: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
    Value: { fields: { value: { type: 'double', id: 1 } } },
    Aggregate: { fields: { sampleCount: { type: 'uint64', id: 1 }, sampleSum: { type: 'double', id: 2 } } },
    Metric: {
      fields: {
        label: { rule: 'repeated', type: 'LabelPair', id: 1 },
        gauge: { type: 'Value', id: 2 },
        counter: { type: 'Value', id: 3 },
        summary: { type: 'Aggregate', id: 4 },
        untyped: { type: 'Value', id: 5 },
        histogram: { type: 'Aggregate', id: 7 },
      },
    },
    MetricFamily: {
      fields: {
        name: { type: 'string', id: 1 },
        metric: { rule: 'repeated', type: 'Metric', id: 4 },
      },
    },
  },
});
const MetricFamily = root.lookupType('MetricFamily');

export const PROTOBUF_ACCEPT =
  'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

interface DecodedMetric {
  label?: { name: string; value: string }[];
  gauge?: { value: number };
  counter?: { value: number };
  untyped?: { value: number };
  summary?: { sampleCount: number; sampleSum: number };
  histogram?: { sampleCount: number; sampleSum: number };
}

/** One sample: a gauge's, counter's or untyped value, or a histogram's or summary's count and sum. */
export interface Sample {
  labels: Record<string, string>;
  value?: number;
  count?: number;
  sum?: number;
}

/** Decodes a delimited MetricFamily stream into samples by metric name. */
export function decodeMetricFamilies(body: Uint8Array): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>();
  const reader = protobuf.Reader.create(body);
  while (reader.pos < reader.len) {
    const family = MetricFamily.toObject(MetricFamily.decodeDelimited(reader), { longs: Number }) as {
      name: string;
      metric?: DecodedMetric[];
    };
    out.set(
      family.name,
      (family.metric ?? []).map((m) => {
        const agg = m.histogram ?? m.summary;
        return {
          labels: Object.fromEntries((m.label ?? []).map((l) => [l.name, l.value])),
          ...(agg ? { count: agg.sampleCount, sum: agg.sampleSum } : {}),
          ...((m.gauge ?? m.counter ?? m.untyped) ? { value: (m.gauge ?? m.counter ?? m.untyped)!.value } : {}),
        };
      }),
    );
  }
  return out;
}

/** The sample of `name` whose labels include `labels`, if any. */
export function sample(
  metrics: Map<string, Sample[]>,
  name: string,
  labels: Record<string, string> = {},
): Sample | undefined {
  return metrics.get(name)?.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** GETs a metrics endpoint asking for the protobuf format; undefined while it does not answer. */
export async function scrape(url: string): Promise<Map<string, Sample[]> | undefined> {
  const res = await fetch(url, { headers: { accept: PROTOBUF_ACCEPT } }).catch(() => undefined);
  if (!res?.ok) return undefined;
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/vnd.google.protobuf'))
    throw new Error(`${url}: answered ${type}, not the protobuf exposition format`);
  return decodeMetricFamilies(new Uint8Array(await res.arrayBuffer()));
}
