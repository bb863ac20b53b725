// The kubelet's Prometheus metrics (prom-client), with upstream names. Each
// kubelet has its own registries, so tests can run several.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

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
  readonly runtimeOps = new Counter({
    name: 'kubelet_runtime_operations_total',
    help: 'Cumulative number of runtime operations by operation type.',
    labelNames: ['operation_type'] as const,
    registers: [this.registry],
  });
  readonly runtimeOpErrors = new Counter({
    name: 'kubelet_runtime_operations_errors_total',
    help: 'Cumulative number of runtime operation errors by operation type.',
    labelNames: ['operation_type'] as const,
    registers: [this.registry],
  });
  readonly runtimeOpDuration = new Histogram({
    name: 'kubelet_runtime_operations_duration_seconds',
    help: 'Duration in seconds of runtime operations. Broken down by operation type.',
    labelNames: ['operation_type'] as const,
    buckets: [0.005, 0.0125, 0.03125, 0.078125, 0.1953125, 0.48828125, 1.220703125, 3.0517578125, 7.62939453125, 19.073486328125, 47.6837158203125, 119.20928955078125, 298.0232238769531, 745.0580596923828],
    registers: [this.registry],
  });
  readonly plegRelist = new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: 'Duration in seconds for relisting pods in PLEG.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: 'kubelet_http_requests_total',
    help: 'Number of the http requests received since the server started',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'kubelet_http_requests_duration_seconds',
    help: 'Duration in seconds to serve http requests',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly httpInflight = new Gauge({
    name: 'kubelet_http_inflight_requests',
    help: 'Number of the inflight http requests',
    labelNames: ['method', 'path', 'server_type', 'long_running'] as const,
    registers: [this.registry],
  });

  /** Gauges read from the kubelet at scrape time. */
  observeKubelet(nodeName: string, read: () => KubeletCounts): void {
    new Gauge({ name: 'kubelet_node_name', help: "The node's name. The count is always 1.", labelNames: ['node'] as const, registers: [this.registry] }).set({ node: nodeName }, 1);
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, c: KubeletCounts) => void): void => {
      new Gauge({
        name,
        help,
        labelNames,
        registers: [this.registry],
        collect() {
          this.reset();
          fill(this, read());
        },
      });
    };
    gauge('kubelet_running_pods', 'Number of pods that have a running pod sandbox', [], (g, c) => g.set(c.runningPods));
    gauge('kubelet_running_containers', 'Number of containers currently running', ['container_state'], (g, c) => {
      for (const [state, n] of Object.entries(c.containersByState)) g.set({ container_state: state }, n);
    });
    gauge('kubelet_desired_pods', 'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.', ['static'], (g, c) => {
      g.set({ static: 'true' }, c.desiredStatic);
      g.set({ static: 'false' }, c.desiredApi);
    });
    gauge('kubelet_working_pods', 'Number of pods the kubelet is actually running, broken down by lifecycle phase.', ['lifecycle', 'static'], (g, c) => {
      for (const [k, n] of Object.entries(c.working)) {
        const [lifecycle, stat] = k.split('/');
        g.set({ lifecycle: lifecycle!, static: stat! }, n);
      }
    });
    gauge('kubelet_mirror_pods', 'The number of mirror pods the kubelet will try to create (one per admitted static pod)', [], (g, c) => g.set(c.desiredStatic));
  }
}

export interface KubeletCounts {
  runningPods: number;
  containersByState: Record<string, number>;
  desiredStatic: number;
  desiredApi: number;
  /** `<sync|terminating>/<true|false>` -> pods */
  working: Record<string, number>;
}

/** Upstream operation_type labels: the CRI method in snake case, PodSandbox as one word. */
export const operationType = (method: string): string =>
  method
    .replace(/PodSandbox/g, 'Podsandbox')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
