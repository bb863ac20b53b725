// The kubelet's Prometheus metrics (prom-client), with upstream names. Each
// kubelet has its own registries, so tests can run several.
import { Counter, Histogram, Registry } from 'prom-client';

export class KubeletMetrics {
  /** /metrics */
  readonly registry = new Registry();
  /** /metrics/probes, as upstream serves prober metrics on their own path. */
  readonly probes = new Registry();
  readonly proberTotal = new Counter({
    name: 'prober_probe_total',
    help: 'Cumulative number of a liveness, readiness or startup probe for a container by result.',
    labelNames: ['container', 'namespace', 'pod', 'pod_uid', 'probe_type', 'result'] as const,
    registers: [this.probes],
  });
  readonly proberDuration = new Histogram({
    name: 'prober_probe_duration_seconds',
    help: 'Duration in seconds for a probe response.',
    labelNames: ['container', 'namespace', 'pod', 'probe_type'] as const,
    registers: [this.probes],
  });
}
