// The cluster DNS server's Prometheus metrics, with CoreDNS's names, labels
// and buckets (plugin/metrics/vars, plugin/cache, plugin/forward), so
// dashboards and alerts written for CoreDNS work unchanged.
import { Counter, exponentialBuckets, Gauge, Histogram, Registry } from '../kube/prom.js';

export class DnsMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'coredns_dns_requests_total',
    help: 'Counter of DNS requests made per zone, protocol and family.',
    labelNames: ['server', 'zone', 'view', 'proto', 'family', 'type'] as const,
    registers: [this.registry],
  });
  readonly responses = new Counter({
    name: 'coredns_dns_responses_total',
    help: 'Counter of response status codes.',
    labelNames: ['server', 'zone', 'view', 'rcode', 'plugin'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'coredns_dns_request_duration_seconds',
    help: 'Histogram of the time (in seconds) each request took per zone.',
    labelNames: ['server', 'zone', 'view', 'type'] as const,
    buckets: exponentialBuckets(0.00025, 2, 16),
    registers: [this.registry],
  });
  readonly requestSize = new Histogram({
    name: 'coredns_dns_request_size_bytes',
    help: 'Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.',
    labelNames: ['server', 'zone', 'view', 'proto'] as const,
    buckets: [0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3],
    registers: [this.registry],
  });
  readonly responseSize = new Histogram({
    name: 'coredns_dns_response_size_bytes',
    help: 'Size of the returned response in bytes.',
    labelNames: ['server', 'zone', 'view', 'proto'] as const,
    buckets: [0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3],
    registers: [this.registry],
  });
  /** Set by the server: how many cache entries of a kind there are, read at scrape time. */
  cacheCount: { server: string; count: (type: 'success' | 'denial') => number } | undefined;
  readonly cacheEntries: Gauge<'server' | 'type' | 'zones' | 'view'> = new Gauge({
    name: 'coredns_cache_entries',
    help: 'The number of elements in the cache.',
    labelNames: ['server', 'type', 'zones', 'view'] as const,
    registers: [this.registry],
    collect: () => {
      const c = this.cacheCount;
      if (c)
        for (const type of ['success', 'denial'] as const)
          this.cacheEntries.set({ server: c.server, type, zones: '.', view: '' }, c.count(type));
    },
  });
  readonly cacheRequests = new Counter({
    name: 'coredns_cache_requests_total',
    help: 'The count of cache requests.',
    labelNames: ['server', 'zones', 'view'] as const,
    registers: [this.registry],
  });
  readonly cacheHits = new Counter({
    name: 'coredns_cache_hits_total',
    help: 'The count of cache hits.',
    labelNames: ['server', 'type', 'zones', 'view'] as const,
    registers: [this.registry],
  });
  readonly cacheMisses = new Counter({
    name: 'coredns_cache_misses_total',
    help: 'The count of cache misses. Deprecated, derive misses from cache hits/requests counters.',
    labelNames: ['server', 'zones', 'view'] as const,
    registers: [this.registry],
  });
  readonly forwardRequests = new Counter({
    name: 'coredns_forward_requests_total',
    help: 'Counter of requests made per upstream.',
    labelNames: ['to'] as const,
    registers: [this.registry],
  });
  readonly forwardResponses = new Counter({
    name: 'coredns_forward_responses_total',
    help: 'Counter of responses received per upstream.',
    labelNames: ['rcode', 'to'] as const,
    registers: [this.registry],
  });
  readonly forwardDuration = new Histogram({
    name: 'coredns_forward_request_duration_seconds',
    help: 'Histogram of the time each request took.',
    labelNames: ['to', 'rcode'] as const,
    buckets: exponentialBuckets(0.00025, 2, 16),
    registers: [this.registry],
  });
  readonly buildInfo = new Gauge({
    name: 'coredns_build_info',
    help: "A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.",
    labelNames: ['version', 'revision', 'goversion'] as const,
    registers: [this.registry],
  });
}
