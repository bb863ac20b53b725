// kube-proxy's Prometheus metrics (prefix kubeproxy_), with upstream names and buckets.
import { Counter, exponentialBuckets, Gauge, Histogram, Registry } from '../kube/prom.js';

const range = (from: number, to: number, step: number): number[] =>
  Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);

export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly syncBuckets = exponentialBuckets(0.001, 2, 15);
  readonly syncDuration = new Histogram({
    name: 'kubeproxy_sync_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds',
    buckets: this.syncBuckets,
    registers: [this.registry],
  });
  readonly syncFullDuration = new Histogram({
    name: 'kubeproxy_sync_full_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds for full resyncs',
    buckets: this.syncBuckets,
    registers: [this.registry],
  });
  readonly syncPartialDuration = new Histogram({
    name: 'kubeproxy_sync_partial_proxy_rules_duration_seconds',
    help: 'SyncProxyRules latency in seconds for partial resyncs',
    buckets: this.syncBuckets,
    registers: [this.registry],
  });
  readonly lastSync = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
    help: 'The last time proxy rules were successfully synced',
    registers: [this.registry],
  });
  readonly lastQueued = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
    help: 'The last time a sync of proxy rules was queued',
    registers: [this.registry],
  });
  readonly networkProgramming = new Histogram({
    name: 'kubeproxy_network_programming_duration_seconds',
    help: 'In Cluster Network Programming Latency in seconds',
    buckets: [0.25, 0.5, ...range(1, 59, 1), ...range(60, 115, 5), ...range(120, 300, 30)],
    registers: [this.registry],
  });
  readonly endpointChangesPending = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_endpoint_changes_pending',
    help: 'Pending proxy rules Endpoint changes',
    registers: [this.registry],
  });
  readonly endpointChangesTotal = new Counter({
    name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total',
    help: 'Cumulative proxy rules Endpoint changes',
    registers: [this.registry],
  });
  readonly serviceChangesPending = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_service_changes_pending',
    help: 'Pending proxy rules Service changes',
    registers: [this.registry],
  });
  readonly serviceChangesTotal = new Counter({
    name: 'kubeproxy_sync_proxy_rules_service_changes_total',
    help: 'Cumulative proxy rules Service changes',
    registers: [this.registry],
  });
  readonly restoreFailures = new Counter({
    name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
    help: 'Cumulative proxy iptables restore failures',
    registers: [this.registry],
  });
  readonly partialRestoreFailures = new Counter({
    name: 'kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total',
    help: 'Cumulative proxy iptables partial restore failures',
    registers: [this.registry],
  });
  readonly nftSyncFailures = new Counter({
    name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
    help: 'Cumulative proxy nftables sync failures',
    registers: [this.registry],
  });
  readonly nftCleanupFailures = new Counter({
    name: 'kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total',
    help: 'Cumulative proxy nftables cleanup failures',
    registers: [this.registry],
  });
  readonly rulesTotal = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_iptables_total',
    help: 'Total number of iptables rules owned by kube-proxy',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });
  readonly rulesLast = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_iptables_last',
    help: 'Number of iptables rules written by kube-proxy in last sync',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });
  readonly noLocalEndpoints = new Gauge({
    name: 'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
    help: 'Number of services with a Local traffic policy and no endpoints',
    labelNames: ['traffic_policy'] as const,
    registers: [this.registry],
  });
  readonly healthzTotal = new Counter({
    name: 'kubeproxy_proxy_healthz_total',
    help: 'Cumulative proxy healthz HTTP status',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly livezTotal = new Counter({
    name: 'kubeproxy_proxy_livez_total',
    help: 'Cumulative proxy livez HTTP status',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
}
