// The cache in front of the upstream resolvers, as the default Corefile's
// `cache 30`: answers kept for their smallest TTL (negative ones for the SOA
// minimum), never longer than 30 s, at most `capacity` entries (oldest out
// first), and served with their TTLs counted down.
import type { Answer, Question } from 'dns-packet';

import type { Reply } from './answer.js';

export const CACHE_MAX_TTL = 30;
export const CACHE_CAPACITY = 9984; // CoreDNS's default

export type CacheKind = 'success' | 'denial';

interface Entry {
  reply: Reply;
  kind: CacheKind;
  storedMs: number;
  expiresMs: number;
}

export const cacheKey = (q: Question, dnssecOk: boolean): string =>
  `${q.name.toLowerCase().replace(/\.$/, '')}|${q.type}|${q.class ?? 'IN'}|${dnssecOk ? 1 : 0}`;

const ttlOf = (a: Answer): number => (a as { ttl?: number }).ttl ?? 0;

/** How long a reply may be cached, and as what; undefined when it must not be (errors, no TTL). */
export function cachePolicy(r: Reply, maxTtl = CACHE_MAX_TTL): { kind: CacheKind; ttl: number } | undefined {
  if (r.rcode !== 'NOERROR' && r.rcode !== 'NXDOMAIN') return undefined;
  const negative = r.rcode === 'NXDOMAIN' || r.answers.length === 0;
  let ttl: number;
  if (negative) {
    const soa = r.authorities.find((a) => a.type === 'SOA') as
      { ttl?: number; data?: { minimum?: number } } | undefined;
    if (!soa) return undefined;
    ttl = Math.min(soa.ttl ?? 0, soa.data?.minimum ?? 0);
  } else {
    ttl = Math.min(...r.answers.map(ttlOf), ...r.authorities.map(ttlOf));
  }
  ttl = Math.min(ttl, maxTtl);
  return ttl > 0 ? { kind: negative ? 'denial' : 'success', ttl } : undefined;
}

const age = (list: Answer[], by: number): Answer[] =>
  list.map((a) => (a.type === 'OPT' ? a : ({ ...a, ttl: Math.max(0, ttlOf(a) - by) } as Answer)));

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly capacity = CACHE_CAPACITY,
    private readonly now: () => number = Date.now,
    private readonly maxTtl = CACHE_MAX_TTL,
  ) {}

  get(key: string): { reply: Reply; kind: CacheKind } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const t = this.now();
    if (t >= e.expiresMs) {
      this.entries.delete(key);
      return undefined;
    }
    const by = Math.floor((t - e.storedMs) / 1000);
    return {
      kind: e.kind,
      reply: {
        ...e.reply,
        answers: age(e.reply.answers, by),
        authorities: age(e.reply.authorities, by),
        additionals: age(e.reply.additionals, by),
      },
    };
  }

  /** Stores a reply if it may be cached; returns what was stored (TTLs capped) and as what. */
  put(key: string, reply: Reply): { reply: Reply; kind: CacheKind } | undefined {
    const p = cachePolicy(reply, this.maxTtl);
    if (!p) return undefined;
    const t = this.now();
    this.entries.delete(key);
    while (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    // Served TTLs never exceed how long the entry is kept (CoreDNS rewrites them the same way).
    const cap = (list: Answer[]): Answer[] =>
      list.map((a) => (a.type === 'OPT' || ttlOf(a) <= p.ttl ? a : ({ ...a, ttl: p.ttl } as Answer)));
    const stored = {
      ...reply,
      answers: cap(reply.answers),
      authorities: cap(reply.authorities),
      additionals: cap(reply.additionals),
    };
    this.entries.set(key, { reply: stored, kind: p.kind, storedMs: t, expiresMs: t + p.ttl * 1000 });
    return { reply: stored, kind: p.kind };
  }

  count(kind: CacheKind): number {
    let n = 0;
    for (const e of this.entries.values()) if (e.kind === kind) n++;
    return n;
  }
}
