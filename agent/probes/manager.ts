// The prober manager: one ProbeWorker per probe of each container of each
// pod, their results by container ID, and what follows from them: readiness
// and startup feed pod status, and liveness or startup failures ask the pod
// worker to restart the container. Events and metrics as upstream.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import type { EventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import type { KubeletMetrics } from '../metrics.js';
import { containerFieldPath, probedContainers } from '../pods/sidecars.js';
import { runProbe } from './prober.js';
import { probeOf, type ProbeResult, type ProbeType, withDefaults } from './types.js';
import { type ContainerView, ProbeWorker } from './worker.js';

const TYPES: ProbeType[] = ['Startup', 'Liveness', 'Readiness'];
const METRIC_RESULT: Record<ProbeResult, string> = {
  success: 'successful',
  warning: 'successful',
  failure: 'failed',
  unknown: 'unknown',
};

export interface ProberDeps {
  cri: CriClient;
  events: EventRecorder;
  log: Logger;
  metrics?: KubeletMetrics;
  /** Readiness or startup changed: pod status should be recomputed. */
  onStatusChange(uid: string): void;
  /** A liveness or startup probe failed past its threshold: the pod worker should restart the container. */
  onUnhealthy(uid: string): void;
  /** A container passed its startup probe: the pod worker may have a next step (what waits on a sidecar). */
  onStarted?(uid: string): void;
  /** When the kubelet started (ms); probes started within a period of it get a full-period jitter, as upstream. */
  startedAt?: number;
  /** Every probe run, for benchmarks: worker key and when it ran. */
  onRun?: (key: string, at: number) => void;
}

/** Per pod: the current spec and how to see each container's latest runtime state. */
type ViewFn = (c: Container) => Omit<ContainerView, 'started'> | undefined;

interface PodProbes {
  pod: Pod;
  key: string;
  view: ViewFn;
  workers: ProbeWorker[];
}

const probesKey = (pod: Pod): string =>
  JSON.stringify(probedContainers(pod).map((c) => [c.name, c.livenessProbe, c.readinessProbe, c.startupProbe]));

export class ProberManager {
  private readonly pods = new Map<string, PodProbes>();
  private readonly results = new Map<string, Map<ProbeType, ProbeResult>>();
  /** prom-client children per series, so the hot path does not hash label sets (220 probes a second at 110 pods). */
  private readonly series = new Map<
    string,
    { labels: Record<string, string>; child: { inc(): void } | { observe(v: number): void } }
  >();

  constructor(private readonly d: ProberDeps) {}

  get workerCount(): number {
    let n = 0;
    for (const p of this.pods.values()) n += p.workers.length;
    return n;
  }

  /** Adds workers for a pod's probes, or replaces them when its probes changed. */
  update(uid: string, pod: Pod, view: ViewFn): void {
    const key = probesKey(pod);
    const cur = this.pods.get(uid);
    if (cur && cur.key === key) {
      cur.pod = pod;
      cur.view = view;
      return;
    }
    if (cur) this.remove(uid);
    const entry: PodProbes = { pod, key, view, workers: [] };
    this.pods.set(uid, entry);
    for (const c of probedContainers(pod)) {
      for (const type of TYPES) {
        const p = probeOf(c, type);
        if (!p) continue;
        const spec = withDefaults(p);
        const period = spec.periodSeconds * 1000;
        const w: ProbeWorker = new ProbeWorker(type, spec, {
          view: () => {
            const v = entry.view(c);
            return v && { ...v, started: this.started(entry.pod, c.name, v.id) };
          },
          run: (s, v) =>
            runProbe(s, { pod: v.pod, container: v.container, containerId: v.id, podIP: v.podIP }, this.d.cri),
          set: (id, r) => this.set(uid, entry.pod, c, type, id, r),
          observed: (v, o, ms) => {
            this.observe(v, type, o, ms);
            this.d.onRun?.(`${uid}/${c.name}/${type}`, w.lastRunAt);
          },
        });
        entry.workers.push(w);
        // Upstream: a full-period jitter right after a kubelet start; otherwise a short one still spreads workers started together.
        const recent = Date.now() - (this.d.startedAt ?? 0) < period;
        w.start(Math.random() * (recent ? period : Math.min(period, 1000)));
      }
    }
  }

  remove(uid: string): void {
    const p = this.pods.get(uid);
    if (!p) return;
    for (const w of p.workers) w.stop();
    this.pods.delete(uid);
    // As upstream's worker stop: a gone pod's series are dropped.
    const m = this.d.metrics;
    for (const [k, { labels }] of this.series) {
      if (!k.startsWith(`${uid}/`)) continue;
      if ('result' in labels) m?.proberTotal.remove(labels);
      else m?.proberDuration.remove(labels);
      this.series.delete(k);
    }
  }

  /** Termination began: liveness and startup stop (no restarts while shutting down); readiness goes on. */
  stopLivenessAndStartup(uid: string): void {
    const p = this.pods.get(uid);
    if (!p) return;
    for (const w of p.workers) if (w.type !== 'Readiness') w.stop();
    p.workers = p.workers.filter((w) => w.type === 'Readiness');
    p.key = 'terminating';
  }

  /** The pod worker synced: probe new containers without waiting for the next period. */
  poke(uid: string): void {
    for (const w of this.pods.get(uid)?.workers ?? []) w.poke();
  }

  stop(): void {
    for (const uid of [...this.pods.keys()]) this.remove(uid);
  }

  result(id: string, type: ProbeType): ProbeResult | undefined {
    return this.results.get(id)?.get(type);
  }

  /** Container `ready`: running, and its readiness probe (if any) last succeeded. */
  ready(pod: Pod, name: string, id: string): boolean {
    const c = probedContainers(pod).find((x) => x.name === name);
    if (!c?.readinessProbe) return this.started(pod, name, id);
    return this.result(id, 'Readiness') === 'success';
  }

  /** Container `started`: its startup probe (if any) succeeded. */
  started(pod: Pod, name: string, id: string): boolean {
    const c = probedContainers(pod).find((x) => x.name === name);
    if (!c?.startupProbe) return true;
    return this.result(id, 'Startup') === 'success';
  }

  private set(uid: string, pod: Pod, c: Container, type: ProbeType, id: string, r: ProbeResult): void {
    let m = this.results.get(id);
    if (!m) this.results.set(id, (m = new Map()));
    m.set(type, r);
    this.pruneResults();
    if (type === 'Readiness') this.d.onStatusChange(uid);
    if (type === 'Startup' && r === 'success') {
      this.d.onStatusChange(uid);
      this.d.onStarted?.(uid);
      this.poke(uid); // liveness and readiness may start now
    }
    if ((type === 'Liveness' || type === 'Startup') && r === 'failure') {
      this.d.log.info(
        `container ${pod.metadata!.namespace!}/${pod.metadata!.name!}/${c.name} failed its ${type.toLowerCase()} probe; restarting it`,
        { containerID: id },
      );
      this.d.onUnhealthy(uid);
    }
  }

  /** Results of containers no worker looks at any more are dropped. */
  private pruneResults(): void {
    if (this.results.size < 4 * (this.workerCount + 16)) return;
    const live = new Set<string>();
    for (const p of this.pods.values())
      for (const c of probedContainers(p.pod)) {
        const v = p.view(c);
        if (v) live.add(v.id);
      }
    for (const id of this.results.keys()) if (!live.has(id)) this.results.delete(id);
  }

  private observe(
    v: ContainerView,
    type: ProbeType,
    o: { result: ProbeResult; output: string; error?: string },
    ms: number,
  ): void {
    const md = v.pod.metadata!;
    const ref = {
      kind: 'Pod',
      namespace: md.namespace!,
      name: md.name!,
      uid: md.uid!,
      fieldPath: containerFieldPath(v.pod, v.container.name),
    };
    if (o.error)
      this.d.events.event(
        ref,
        'Warning',
        'Unhealthy',
        `${type} probe errored and resulted in unknown state: ${o.error}`,
      );
    else if (o.result === 'failure')
      this.d.events.event(ref, 'Warning', 'Unhealthy', `${type} probe failed: ${o.output}`);
    else if (o.result === 'warning')
      this.d.events.event(ref, 'Warning', 'ProbeWarning', `${type} probe warning: ${o.output}`);
    const m = this.d.metrics;
    if (!m) return;
    // Labels in Prometheus' (alphabetical) order, so the text output reads as upstream's.
    const result = o.error ? 'unknown' : METRIC_RESULT[o.result];
    const base = `${md.uid!}/${v.container.name}/${type}`;
    this.child(
      `${base}/${result}`,
      {
        container: v.container.name,
        namespace: md.namespace!,
        pod: md.name!,
        pod_uid: md.uid!,
        probe_type: type,
        result,
      },
      (l) => m.proberTotal.labels(l),
    ).inc();
    this.child(
      `${base}`,
      { container: v.container.name, namespace: md.namespace!, pod: md.name!, probe_type: type },
      (l) => m.proberDuration.labels(l),
    ).observe(ms / 1000);
  }

  private child<T extends { inc(): void } | { observe(v: number): void }>(
    key: string,
    labels: Record<string, string>,
    make: (l: Record<string, string>) => T,
  ): T {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = { labels, child: make(labels) }));
    return s.child as T;
  }
}
