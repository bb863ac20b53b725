// Node lifecycle, as kube-controller-manager's node-lifecycle-controller:
// - a node whose Lease (and Ready heartbeat) has not moved for the grace
//   period gets its conditions set to Unknown ("Kubelet stopped posting node
//   status."), and its pods are marked not Ready;
// - taints follow the Ready condition: not-ready (False) or unreachable
//   (Unknown), NoSchedule and NoExecute, and unschedulable for cordoned nodes;
// - NoExecute taints evict pods that do not tolerate them, at once or after
//   their tolerationSeconds.
// Heartbeats are timed by when this controller saw them change, not by the
// kubelet's clock, so skew between machines does not matter.
import type { KObj, KubeApi } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { type Taint, TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE, tolerates } from './scheduling.js';

export interface NodeLifecycleOptions {
  /** --node-monitor-grace-period (40 s). */
  gracePeriodMs?: number;
  /** --node-monitor-period (5 s). */
  monitorPeriodMs?: number;
}

const CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
/** TaintNodesByCondition: a True pressure condition is a NoSchedule taint. */
const PRESSURE_TAINTS: Record<string, string> = {
  MemoryPressure: 'node.kubernetes.io/memory-pressure',
  DiskPressure: 'node.kubernetes.io/disk-pressure',
  PIDPressure: 'node.kubernetes.io/pid-pressure',
};
const MANAGED = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE, ...Object.values(PRESSURE_TAINTS)]);

const readyOf = (n: KObj): KObj | undefined => ((n.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Ready');

/** The taints the node should carry given its Ready condition and spec.unschedulable (others are kept). */
export function desiredTaints(node: KObj, now: string): Taint[] {
  const keep = ((node.spec?.taints ?? []) as (Taint & { timeAdded?: string })[]).filter((t) => !MANAGED.has(t.key));
  const have = (node.spec?.taints ?? []) as (Taint & { timeAdded?: string })[];
  const want: (Taint & { timeAdded?: string })[] = [];
  const status = readyOf(node)?.status ?? 'Unknown';
  const cond = status === 'True' ? undefined : status === 'False' ? TAINT_NOT_READY : TAINT_UNREACHABLE;
  if (cond) {
    want.push({ key: cond, effect: 'NoSchedule' });
    want.push({
      key: cond,
      effect: 'NoExecute',
      timeAdded: have.find((t) => t.key === cond && t.effect === 'NoExecute')?.timeAdded ?? now,
    });
  }
  if (status === 'True') {
    for (const c of (node.status?.conditions ?? []) as KObj[])
      if (c.status === 'True' && PRESSURE_TAINTS[c.type])
        want.push({ key: PRESSURE_TAINTS[c.type]!, effect: 'NoSchedule' });
  }
  if (node.spec?.unschedulable) want.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  return [...keep, ...want];
}

/** Taints compared by key, value and effect (timeAdded aside). */
const taintKey = (ts: Taint[]): string => JSON.stringify(ts.map((t) => `${t.key}=${t.value ?? ''}:${t.effect}`).sort());

export class NodeLifecycle {
  private readonly nodes: Informer;
  private readonly leases: Informer;
  private readonly pods: Informer;
  private readonly seen = new Map<string, { beat: string; at: number }>();
  private readonly wasReady = new Map<string, boolean>();
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private again = false;
  private soonTimer: NodeJS.Timeout | undefined;
  evictions = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    private readonly o: NodeLifecycleOptions = {},
  ) {
    const onError = (what: string) => (e: Error) => this.log.warn(`node-lifecycle: ${what} watch: ${e.message}`);
    // A node whose Ready condition changed gets its taints at once (upstream's NoSchedule tainting pass is driven by
    // node updates), not at the next monitor period: a node that just went Ready takes pods right away.
    const onNode = (n: KObj): void => {
      if (this.timer && taintKey(desiredTaints(n, '')) !== taintKey((n.spec?.taints ?? []) as Taint[])) this.soon();
    };
    this.nodes = new Informer(client, {
      path: '/api/v1/nodes',
      onAdd: onNode,
      onUpdate: onNode,
      onError: onError('node'),
    });
    this.leases = new Informer(client, {
      path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      onError: onError('lease'),
    });
    this.pods = new Informer(client, { path: '/api/v1/pods', onError: onError('pod') });
  }

  async start(): Promise<void> {
    await Promise.all([this.nodes.start(), this.leases.start(), this.pods.start()]);
    this.timer = setInterval(() => void this.monitor(), this.o.monitorPeriodMs ?? 5000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.soonTimer) clearTimeout(this.soonTimer);
    await Promise.all([this.nodes.stop(), this.leases.stop(), this.pods.stop()]);
  }

  private soon(): void {
    if (this.soonTimer) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = undefined;
      void this.monitor();
    }, 20);
  }

  /** One monitor pass over all nodes (exported for tests). */
  async monitor(now = Date.now()): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      for (const n of this.nodes.list()) {
        try {
          await this.monitorNode(n, now);
        } catch (e) {
          this.log.warn(`node-lifecycle: node ${n.metadata.name}: ${(e as Error).message}`);
        }
      }
      await this.evict(now);
    } finally {
      this.busy = false;
      if (this.again) {
        this.again = false;
        this.soon();
      }
    }
  }

  private async monitorNode(node: KObj, now: number): Promise<void> {
    const name = node.metadata.name as string;
    const lease = this.leases.cache.get(`kube-node-lease/${name}`);
    const ready = readyOf(node);
    const beat = `${lease?.spec?.renewTime ?? ''}|${ready?.lastHeartbeatTime ?? ''}`;
    const prev = this.seen.get(name);
    if (!prev || prev.beat !== beat) this.seen.set(name, { beat, at: now });
    const silentMs = now - (this.seen.get(name)?.at ?? now);
    let current = node;
    if (silentMs > (this.o.gracePeriodMs ?? 40_000) && ready?.status !== 'Unknown')
      current = await this.markUnknown(node, now);
    const isReady = readyOf(current)?.status === 'True';
    if (this.wasReady.get(name) === true && !isReady) await this.markPodsNotReady(name);
    if (this.wasReady.get(name) !== isReady && this.wasReady.has(name)) {
      this.events.event(
        { kind: 'Node', name, uid: node.metadata.uid },
        'Normal',
        isReady ? 'NodeReady' : 'NodeNotReady',
        `Node ${name} status is now: ${isReady ? 'NodeReady' : 'NodeNotReady'}`,
      );
    }
    this.wasReady.set(name, isReady);
    await this.reconcileTaints(current, now);
  }

  private async markUnknown(node: KObj, now: number): Promise<KObj> {
    const at = rfc3339(new Date(now));
    const have = (node.status?.conditions ?? []) as KObj[];
    const conditions = have.length
      ? have
          .filter((c) => CONDITIONS.includes(c.type))
          .map((c) => ({
            ...c,
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: 'Kubelet stopped posting node status.',
            lastTransitionTime: at,
          }))
      : [
          {
            type: 'Ready',
            status: 'Unknown',
            reason: 'NodeStatusNeverUpdated',
            message: 'Kubelet never posted node status.',
            lastHeartbeatTime: node.metadata.creationTimestamp,
            lastTransitionTime: at,
          },
        ];
    this.log.info(
      `node-lifecycle: node ${node.metadata.name} has not renewed its lease for ${Math.round((this.o.gracePeriodMs ?? 40_000) / 1000)} s; its status is now Unknown`,
    );
    return this.client.patch(`/api/v1/nodes/${node.metadata.name}/status`, { status: { conditions } }, 'strategic');
  }

  private async reconcileTaints(node: KObj, now: number): Promise<void> {
    const want = desiredTaints(node, rfc3339(new Date(now)));
    if (taintKey(want) === taintKey((node.spec?.taints ?? []) as Taint[])) return;
    // Taints share keys across effects, so a strategic merge (keyed by taint key) cannot express them: PUT with the resourceVersion.
    await this.client.update(`/api/v1/nodes/${node.metadata.name}`, {
      ...node,
      spec: { ...node.spec, taints: want.length ? want : undefined },
    });
  }

  private async markPodsNotReady(nodeName: string): Promise<void> {
    for (const p of this.pods.list()) {
      if (p.spec?.nodeName !== nodeName || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
      const ready = ((p.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Ready');
      if (ready?.status === 'False') continue;
      await this.client
        .patch(
          `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}/status`,
          {
            metadata: { uid: p.metadata.uid },
            status: {
              conditions: [{ type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: rfc3339() }],
            },
          },
          'strategic',
        )
        .catch((e: Error) =>
          this.log.debug(`node-lifecycle: pod ${p.metadata.namespace}/${p.metadata.name}: ${e.message}`),
        );
      this.events.event(
        { kind: 'Pod', namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid },
        'Warning',
        'NodeNotReady',
        'Node is not ready',
      );
    }
  }

  /** Taint-based eviction: delete pods that do not tolerate a NoExecute taint of their node (in time). */
  private async evict(now: number): Promise<void> {
    const byNode = new Map(
      this.nodes
        .list()
        .map((n) => [
          n.metadata.name as string,
          ((n.spec?.taints ?? []) as (Taint & { timeAdded?: string })[]).filter((t) => t.effect === 'NoExecute'),
        ]),
    );
    for (const p of this.pods.list()) {
      const taints = byNode.get(p.spec?.nodeName ?? '');
      if (!taints?.length || p.metadata.deletionTimestamp) continue;
      let due = false;
      for (const t of taints) {
        const tol = tolerates(p.spec?.tolerations, t);
        if (!tol) due = true;
        else if (typeof tol.tolerationSeconds === 'number')
          due ||= Date.parse(t.timeAdded ?? '') + tol.tolerationSeconds * 1000 <= now;
      }
      if (!due) continue;
      this.events.event(
        { kind: 'Pod', namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid },
        'Normal',
        'TaintManagerEviction',
        `Marking for deletion Pod ${p.metadata.namespace}/${p.metadata.name}`,
      );
      await this.client.delete(`/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`).then(
        () => this.evictions++,
        (e: Error) => this.log.debug(`node-lifecycle: evicting ${p.metadata.name}: ${e.message}`),
      );
    }
  }
}
