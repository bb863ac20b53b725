// GET /metrics/resource: the resource metrics metrics-server scrapes, in
// Prometheus text, from the same figures as /stats/summary.
type Obj = Record<string, any>;

const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>): string => {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
};

export function resourceMetrics(summary: Obj): string {
  const families: Record<string, { help: string; type: string; lines: string[] }> = {};
  const put = (
    name: string,
    help: string,
    type: string,
    l: Record<string, string>,
    v: number | undefined,
    atIso?: string,
  ): void => {
    if (v === undefined || Number.isNaN(v)) return;
    const f = (families[name] ??= { help, type, lines: [] });
    f.lines.push(`${name}${labels(l)} ${v}${atIso ? ` ${Date.parse(atIso)}` : ''}`);
  };
  const node = summary.node ?? {};
  put(
    'node_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
    'counter',
    {},
    node.cpu?.usageCoreNanoSeconds / 1e9,
    node.cpu?.time,
  );
  put(
    'node_memory_working_set_bytes',
    '[STABLE] Current working set of the node in bytes',
    'gauge',
    {},
    node.memory?.workingSetBytes,
    node.memory?.time,
  );
  for (const p of summary.pods ?? []) {
    const pl = { namespace: p.podRef.namespace, pod: p.podRef.name };
    put(
      'pod_cpu_usage_seconds_total',
      '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
      'counter',
      pl,
      p.cpu?.usageCoreNanoSeconds / 1e9,
      p.cpu?.time,
    );
    put(
      'pod_memory_working_set_bytes',
      '[STABLE] Current working set of the pod in bytes',
      'gauge',
      pl,
      p.memory?.workingSetBytes,
      p.memory?.time,
    );
    for (const c of p.containers ?? []) {
      const cl = { container: c.name, ...pl };
      put(
        'container_cpu_usage_seconds_total',
        '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
        'counter',
        cl,
        c.cpu?.usageCoreNanoSeconds / 1e9,
        c.cpu?.time,
      );
      put(
        'container_memory_working_set_bytes',
        '[STABLE] Current working set of the container in bytes',
        'gauge',
        cl,
        c.memory?.workingSetBytes,
        c.memory?.time,
      );
      if (c.startTime)
        put(
          'container_start_time_seconds',
          '[STABLE] Start time of the container since unix epoch in seconds',
          'gauge',
          cl,
          Date.parse(c.startTime) / 1000,
        );
    }
  }
  put('scrape_error', '[ALPHA] 1 if there was an error while getting container metrics, 0 otherwise', 'gauge', {}, 0);
  return Object.entries(families)
    .map(([name, f]) => `# HELP ${name} ${f.help}\n# TYPE ${name} ${f.type}\n${f.lines.join('\n')}\n`)
    .join('');
}
