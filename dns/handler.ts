// One query in, one response out: read it, answer from the zone or the
// cache or the upstreams, fit it to the transport, count it as CoreDNS does.
import type { Question } from 'dns-packet';

import { type Reply, resolve, type ZoneConfig } from './answer.js';
import { cacheKey, type ResponseCache } from './cache.js';
import type { Forwarder } from './forward.js';
import {
  encodeWithin,
  errorResponse,
  MAX_TCP,
  parseQuery,
  type Query,
  rcodeName,
  responsePacket,
  udpLimit,
} from './message.js';
import type { DnsMetrics } from './metrics.js';
import type { ZoneData } from './zone.js';

export type Proto = 'udp' | 'tcp';

const COUNTED_TYPES = new Set([
  'A',
  'AAAA',
  'NS',
  'PTR',
  'SOA',
  'SRV',
  'TXT',
  'CNAME',
  'MX',
  'ANY',
  'HTTPS',
  'DS',
  'DNSKEY',
  'NSEC3',
  'NSEC',
  'RRSIG',
  'IXFR',
  'AXFR',
]);

export interface HandlerDeps {
  zone: ZoneData;
  config: ZoneConfig;
  cache: ResponseCache;
  forwarder: Forwarder;
  metrics: DnsMetrics;
  /** The `server` label, e.g. dns://:53 */
  server: string;
}

export class QueryHandler {
  constructor(private readonly d: HandlerDeps) {
    d.metrics.cacheCount = { server: d.server, count: (type) => d.cache.count(type) };
  }

  /** The bytes to send back, or undefined when nothing should be (a packet that is not a query). */
  async handle(buf: Buffer, proto: Proto, family: 4 | 6): Promise<Buffer | undefined> {
    const t0 = process.hrtime.bigint();
    const parsed = parseQuery(buf);
    if (!parsed.ok) {
      if (parsed.id === undefined) return undefined;
      const out = errorResponse(parsed.id, parsed.rcode);
      this.count(undefined, buf.length, proto, family, out, 'invalid', t0);
      return out;
    }
    const q = parsed.query;
    let reply: Reply;
    let plugin: string;
    if (q.question.class !== 'IN' && q.question.class !== 'ANY') {
      reply = { rcode: 'REFUSED', authoritative: false, answers: [], authorities: [], additionals: [] };
      plugin = '';
    } else if (q.question.type === 'AXFR' || q.question.type === 'IXFR') {
      // Zone transfers are not offered (CoreDNS needs the transfer plugin for them).
      reply = { rcode: 'REFUSED', authoritative: false, answers: [], authorities: [], additionals: [] };
      plugin = '';
    } else {
      const r = resolve(this.d.zone, q.question, this.d.config);
      if (!r.forward) {
        reply = r;
        plugin = 'kubernetes';
      } else {
        ({ reply, plugin } = await this.forwarded(q.question, q.edns?.dnssecOk ?? false));
      }
    }
    const { buf: out } = encodeWithin(responsePacket(q, reply), proto === 'udp' ? udpLimit(q) : MAX_TCP);
    this.count(q, buf.length, proto, family, out, plugin, t0);
    return out;
  }

  private async forwarded(question: Question, dnssecOk: boolean): Promise<{ reply: Reply; plugin: string }> {
    const { cache, metrics, server } = this.d;
    const key = cacheKey(question, dnssecOk);
    metrics.cacheRequests.inc({ server, zones: '.', view: '' });
    const hit = cache.get(key);
    if (hit) {
      metrics.cacheHits.inc({ server, type: hit.kind, zones: '.', view: '' });
      return { reply: hit.reply, plugin: 'cache' };
    }
    metrics.cacheMisses.inc({ server, zones: '.', view: '' });
    const reply = await this.d.forwarder.forward(question, (u, rcode, seconds) => {
      const to = `${u.host}:${u.port}`;
      metrics.forwardRequests.inc({ to });
      if (rcode !== 'timeout') {
        metrics.forwardResponses.inc({ rcode, to });
        metrics.forwardDuration.observe({ to, rcode }, seconds);
      }
    });
    // What was cached is what is served, TTLs capped, this time too.
    return { reply: cache.put(key, reply)?.reply ?? reply, plugin: 'forward' };
  }

  /** Label sets resolved once: looking children up by label object on every query costs more than answering it. */
  private readonly series = new Map<
    string,
    {
      requests: { inc(): void };
      requestSize: { observe(v: number): void };
      responses: { inc(): void };
      responseSize: { observe(v: number): void };
      duration: { observe(v: number): void };
    }
  >();

  private count(
    q: Query | undefined,
    size: number,
    proto: Proto,
    family: 4 | 6,
    out: Buffer,
    plugin: string,
    t0: bigint,
  ): void {
    const type = q && COUNTED_TYPES.has(q.question.type) ? q.question.type : 'other';
    const rcode = rcodeName(out);
    const key = `${proto}|${family}|${type}|${rcode}|${plugin}`;
    let s = this.series.get(key);
    if (!s) {
      const { metrics, server } = this.d;
      const zone = '.';
      s = {
        requests: metrics.requests.labels({ server, zone, view: '', proto, family: family === 4 ? '1' : '2', type }),
        requestSize: metrics.requestSize.labels({ server, zone, view: '', proto }),
        responses: metrics.responses.labels({ server, zone, view: '', rcode, plugin }),
        responseSize: metrics.responseSize.labels({ server, zone, view: '', proto }),
        duration: metrics.duration.labels({ server, zone, view: '', type }),
      };
      this.series.set(key, s);
    }
    s.requests.inc();
    s.requestSize.observe(size);
    s.responses.inc();
    s.responseSize.observe(out.length);
    s.duration.observe(Number(process.hrtime.bigint() - t0) / 1e9);
  }
}
