// The kubelet's Prometheus metrics (prom-client), with upstream names. Each
// kubelet has its own registries, so tests can run several.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from '../kube/prom.js';

const OP = ['operation_type'] as const;
const HTTP = ['method', 'path', 'server_type', 'long_running'] as const;
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Upstream's runtime operation buckets: 0.005 s growing by 2.5 fourteen times. */
const EXP_BUCKETS = Array.from({ length: 14 }, (_, i) => 0.005 * 2.5 ** i);

const counter = <L extends string>(r: Registry, name: string, help: string, labelNames: readonly L[]) =>
  new Counter<L>({ name, help, labelNames, registers: [r] });
const histogram = <L extends string>(
  r: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
) => new Histogram<L>({ name, help, labelNames, buckets, registers: [r] });

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
  readonly runtimeOps = counter(
    this.registry,
    'kubelet_runtime_operations_total',
    'Cumulative number of runtime operations by operation type.',
    OP,
  );
  readonly runtimeOpErrors = counter(
    this.registry,
    'kubelet_runtime_operations_errors_total',
    'Cumulative number of runtime operation errors by operation type.',
    OP,
  );
  readonly runtimeOpDuration = histogram(
    this.registry,
    'kubelet_runtime_operations_duration_seconds',
    'Duration in seconds of runtime operations. Broken down by operation type.',
    OP,
    EXP_BUCKETS,
  );
  readonly plegRelist = histogram(
    this.registry,
    'kubelet_pleg_relist_duration_seconds',
    'Duration in seconds for relisting pods in PLEG.',
    [],
    DEFAULT_BUCKETS,
  );
  readonly httpRequests = counter(
    this.registry,
    'kubelet_http_requests_total',
    'Number of the http requests received since the server started',
    HTTP,
  );
  readonly httpDuration = histogram(
    this.registry,
    'kubelet_http_requests_duration_seconds',
    'Duration in seconds to serve http requests',
    HTTP,
    DEFAULT_BUCKETS,
  );
  readonly httpInflight = new Gauge({
    name: 'kubelet_http_inflight_requests',
    help: 'Number of the inflight http requests',
    labelNames: HTTP,
    registers: [this.registry],
  });

  /** process_* and nodejs_* (RSS, heap, fds, event loop lag) on /metrics, as upstream's kubelet serves process_* and go_memstats_*: a soak reads its memory there. */
  collectProcessMetrics(): this {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 1000 });
    return this;
  }

  /** Gauges read from the kubelet at scrape time. */
  observeKubelet(nodeName: string, read: () => KubeletCounts): void {
    new Gauge({
      name: 'kubelet_node_name',
      help: "The node's name. The count is always 1.",
      labelNames: ['node'] as const,
      registers: [this.registry],
    }).set({ node: nodeName }, 1);
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (g: Gauge, c: KubeletCounts) => void,
    ): void => {
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
    gauge(
      'kubelet_desired_pods',
      'The number of pods the kubelet is being instructed to run. static is true if the pod is not from the apiserver.',
      ['static'],
      (g, c) => {
        g.set({ static: 'true' }, c.desiredStatic);
        g.set({ static: 'false' }, c.desiredApi);
      },
    );
    gauge(
      'kubelet_working_pods',
      'Number of pods the kubelet is actually running, broken down by lifecycle phase.',
      ['lifecycle', 'static'],
      (g, c) => {
        for (const [k, n] of Object.entries(c.working)) {
          const [lifecycle, stat] = k.split('/');
          g.set({ lifecycle: lifecycle!, static: stat! }, n);
        }
      },
    );
    gauge(
      'kubelet_mirror_pods',
      'The number of mirror pods the kubelet will try to create (one per admitted static pod)',
      [],
      (g, c) => g.set(c.desiredStatic),
    );
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
