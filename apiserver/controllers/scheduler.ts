// default-scheduler: watches pods without a node and binds each, through
// pods/binding, to the fitting node with the least requested resources.
// Pods that fit nowhere stay Pending with PodScheduled=False/Unschedulable
// and a FailedScheduling event; they are retried when nodes or pods change,
// and every retry period.
import type { KObj, KubeApi } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { KeyQueue } from './key-queue.js';
import {
  fitErrorMessage,
  leastAllocatedScore,
  pickPreemptionNode,
  type PreemptionCandidate,
  unfit,
  victimsOn,
} from './scheduling.js';
import {
  allBound,
  ANN_SELECTED_NODE,
  claimNamesOf,
  claimsAwaitingNode,
  classOf,
  type PodVolumes,
  volumeNodeReason,
  volumePreFilter,
} from './volume-binding-model.js';
import { notFoundOk } from './workload-model.js';

export const SCHEDULER_NAME = 'default-scheduler';

const key = (p: KObj): string => `${p.metadata.namespace}/${p.metadata.name}`;
const terminal = (p: KObj): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

export class Scheduler {
  private readonly pods: Informer;
  private readonly nodes: Informer;
  /** The activeQ's order: higher spec.priority first, then arrival (upstream's PrioritySort). */
  private readonly queue = new KeyQueue<undefined>(
    async (k) => {
      const p = this.pods.cache.get(k);
      if (p && this.wants(p)) await this.scheduleOne(p);
    },
    (a, b) => (this.pods.cache.get(a)?.spec?.priority ?? 0) > (this.pods.cache.get(b)?.spec?.priority ?? 0),
  );
  private readonly unschedulable = new Set<string>();
  /** Bound by us but not yet seen bound in the watch: pod uid -> node. */
  private readonly assumed = new Map<string, string>();
  private retryTimer: NodeJS.Timeout | undefined;
  binds = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    private readonly o: { retryMs?: number } = {},
  ) {
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      onAdd: (p) => this.onPod(p),
      onUpdate: (p) => this.onPod(p),
      onDelete: (p) => {
        this.assumed.delete(p.metadata.uid);
        this.queue.delete(key(p));
        this.unschedulable.delete(key(p));
        this.retryUnschedulable(); // freed room
      },
      onError: (e) => this.log.warn(`scheduler: pod watch: ${e.message}`),
    });
    this.nodes = new Informer(client, {
      path: '/api/v1/nodes',
      onAdd: () => this.retryUnschedulable(),
      onUpdate: () => this.retryUnschedulable(),
      onError: (e) => this.log.warn(`scheduler: node watch: ${e.message}`),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.nodes.start(), this.pods.start()]);
    this.retryTimer = setInterval(() => this.retryUnschedulable(), this.o.retryMs ?? 30_000);
    this.retryTimer.unref();
    for (const p of this.pods.list()) this.onPod(p);
  }

  async stop(): Promise<void> {
    if (this.retryTimer) clearInterval(this.retryTimer);
    await Promise.all([this.pods.stop(), this.nodes.stop()]);
  }

  private wants(p: KObj): boolean {
    return (
      !p.spec?.nodeName &&
      (p.spec?.schedulerName ?? SCHEDULER_NAME) === SCHEDULER_NAME &&
      !p.metadata.deletionTimestamp &&
      !terminal(p) &&
      !this.assumed.has(p.metadata.uid)
    );
  }

  private onPod(p: KObj): void {
    if (p.spec?.nodeName) {
      this.assumed.delete(p.metadata.uid);
      return;
    }
    if (!this.wants(p) || this.unschedulable.has(key(p))) return;
    this.queue.add(key(p), undefined);
  }

  private retryUnschedulable(): void {
    if (this.unschedulable.size === 0) return;
    for (const k of this.unschedulable) this.queue.add(k, undefined);
    this.unschedulable.clear();
  }

  private podsOn(node: string): KObj[] {
    return this.pods
      .list()
      .filter((p) => !terminal(p) && (p.spec?.nodeName === node || this.assumed.get(p.metadata.uid) === node));
  }

  /** The pod's claims, their classes and every volume, read fresh (only for pods with claims). */
  private async podVolumes(pod: KObj): Promise<PodVolumes | undefined> {
    const names = claimNamesOf(pod);
    if (!names.length) return undefined;
    const ns = pod.metadata.namespace;
    const claims = new Map<string, KObj | undefined>();
    for (const n of names)
      claims.set(n, await this.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${n}`).catch(notFoundOk));
    const classes = new Map<string, KObj | undefined>();
    for (const c of claims.values())
      if (c && classOf(c) && !classes.has(classOf(c)))
        classes.set(
          classOf(c),
          await this.client.get(`/apis/storage.k8s.io/v1/storageclasses/${classOf(c)}`).catch(notFoundOk),
        );
    const pvs = (await this.client.get('/api/v1/persistentvolumes')).items as KObj[];
    return { claims, classes, pvs };
  }

  /** Look at a pod again shortly: its volumes are being bound or provisioned. */
  private retrySoon(pod: KObj): void {
    setTimeout(() => {
      const p = this.pods.cache.get(key(pod));
      if (p && this.wants(p)) this.queue.add(key(p), undefined);
    }, 500).unref();
  }

  private async unschedulableNow(pod: KObj, message: string): Promise<void> {
    const ref = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
    this.unschedulable.add(key(pod));
    this.events.event(ref, 'Warning', 'FailedScheduling', message);
    const cur = ((pod.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'PodScheduled');
    if (cur?.status !== 'False' || cur.message !== message) {
      const condition = {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message,
        lastProbeTime: null,
        lastTransitionTime: cur?.status === 'False' ? cur.lastTransitionTime : rfc3339(),
      };
      await this.client
        .patch(
          `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`,
          { metadata: { uid: pod.metadata.uid }, status: { conditions: [condition] } },
          'strategic',
        )
        .catch((e: Error) => this.log.debug(`scheduler: status of ${key(pod)}: ${e.message}`));
    }
  }

  /**
   * DefaultPreemption (PostFilter): for a pod that fits nowhere, the node where
   * evicting the fewest, least important lower-priority pods makes room; they
   * are deleted (DisruptionTarget PreemptionByScheduler, a Preempted event)
   * and the pod is nominated there, to be bound once they are gone.
   */
  private async preempt(pod: KObj, nodes: KObj[]): Promise<void> {
    if ((pod.spec?.preemptionPolicy ?? 'PreemptLowerPriority') === 'Never') return;
    // Already nominated and its victims still terminating: wait for them rather than preempt again.
    const nominated = pod.status?.nominatedNodeName;
    if (
      nominated &&
      this.podsOn(nominated).some(
        (p) => p.metadata.deletionTimestamp && (p.spec?.priority ?? 0) < (pod.spec?.priority ?? 0),
      )
    )
      return;
    const cands: PreemptionCandidate[] = [];
    for (const n of nodes) {
      const victims = victimsOn(pod, n, this.podsOn(n.metadata.name));
      if (victims) cands.push({ node: n.metadata.name, victims });
    }
    const pick = pickPreemptionNode(cands);
    if (!pick) return;
    const who = `${pod.metadata.namespace}/${pod.metadata.name}`;
    for (const v of pick.victims) {
      const path = `/api/v1/namespaces/${v.metadata.namespace}/pods/${v.metadata.name}`;
      const condition = {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'PreemptionByScheduler',
        message: `${SCHEDULER_NAME}: preempting to accommodate a higher priority pod`,
        lastTransitionTime: rfc3339(),
      };
      await this.client
        .patch(
          `${path}/status`,
          { metadata: { uid: v.metadata.uid }, status: { conditions: [condition] } },
          'strategic',
        )
        .catch((e: Error) => this.log.debug(`scheduler: condition on victim ${v.metadata.name}: ${e.message}`));
      await this.client.delete(path).catch(notFoundOk);
      this.events.event(
        { kind: 'Pod', namespace: v.metadata.namespace, name: v.metadata.name, uid: v.metadata.uid },
        'Normal',
        'Preempted',
        `Preempted by pod ${pod.metadata.uid} on node ${pick.node}`,
      );
    }
    this.log.info(`scheduler: preempted ${pick.victims.length} pod(s) on ${pick.node} for ${who}`);
    await this.client
      .patch(
        `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`,
        { metadata: { uid: pod.metadata.uid }, status: { nominatedNodeName: pick.node } },
        'strategic',
      )
      .catch((e: Error) => this.log.debug(`scheduler: nominating ${who}: ${e.message}`));
  }

  /** One scheduling cycle: filter, score, bind (or report why not). */
  async scheduleOne(pod: KObj): Promise<void> {
    const nodes = this.nodes.list();
    const perNode: string[][] = [];
    let best: { node: string; score: number }[] = [];
    const volumes = await this.podVolumes(pod);
    const pre = volumes && volumePreFilter(volumes);
    if (pre) {
      // Claims come and go without waking the scheduler: look again within the retry period.
      await this.unschedulableNow(
        pod,
        `0/${nodes.length} nodes are available: ${pre}. preemption: 0/${nodes.length} nodes are available: ${nodes.length} Preemption is not helpful for scheduling.`,
      );
      return;
    }
    for (const n of nodes) {
      const on = this.podsOn(n.metadata.name);
      const volumeReason = volumes && volumeNodeReason(volumes, n);
      const why = volumeReason ? [volumeReason] : unfit(pod, n, on);
      if (why.length) {
        perNode.push(why);
        continue;
      }
      const score = leastAllocatedScore(pod, n, on);
      if (!best.length || score > best[0]!.score) best = [{ node: n.metadata.name, score }];
      else if (score === best[0]!.score) best.push({ node: n.metadata.name, score });
    }
    const ref = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
    if (!best.length) {
      await this.unschedulableNow(pod, fitErrorMessage(nodes.length, perNode));
      await this.preempt(pod, nodes);
      return;
    }
    // Ties go to a random node, as upstream's selectHost, so equal nodes share the load.
    const target = best[Math.floor(Math.random() * best.length)]!.node;
    if (volumes) {
      // Delayed binding (VolumeBinding's PreBind): the claims learn the node, the binder or provisioner makes their
      // volumes there, and the pod is bound once every claim is.
      for (const c of claimsAwaitingNode(volumes)) {
        await this.client.patch(
          `/api/v1/namespaces/${c.metadata.namespace}/persistentvolumeclaims/${c.metadata.name}`,
          { metadata: { annotations: { [ANN_SELECTED_NODE]: target } } },
          'merge',
        );
      }
      if (!allBound(volumes)) {
        this.retrySoon(pod);
        return;
      }
    }
    this.assumed.set(pod.metadata.uid, target);
    try {
      await this.client.create(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/binding`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, uid: pod.metadata.uid },
        target: { apiVersion: 'v1', kind: 'Node', name: target },
      });
      this.binds++;
      this.events.event(ref, 'Normal', 'Scheduled', `Successfully assigned ${key(pod)} to ${target}`);
    } catch (e) {
      this.assumed.delete(pod.metadata.uid);
      this.log.warn(`scheduler: binding ${key(pod)} to ${target} failed: ${(e as Error).message}`);
      this.unschedulable.add(key(pod));
    }
  }
}
