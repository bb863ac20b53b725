// daemonset-controller: one pod per eligible node for each DaemonSet, made
// through the default scheduler (node affinity to that node), replaced on a
// template change as its updateStrategy says, with ControllerRevisions for
// `kubectl rollout history|undo` and status for `rollout status`. Decisions
// are daemonset-model.ts's; pods are read fresh, informers only trigger.
import type { KObj, KubeApi } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { LABEL_REVISION_HASH } from './controller-history.js';
import { daemonPod, planDaemonSet } from './daemonset-model.js';
import { PodOwnerController } from './pod-owner-controller.js';
import { currentRevision, ownedPods, pruneRevisions } from './revision-store.js';
import { isReady, notFoundOk, ownerRefTo } from './workload-model.js';

const MAX_BATCH = 500;

export class DaemonSetController extends PodOwnerController {
  private readonly nodes: Informer;

  constructor(
    client: KubeApi,
    log: Logger,
    private readonly events: EventRecorder,
  ) {
    super(client, log, 'daemonset-controller', 'DaemonSet', '/apis/apps/v1/daemonsets');
    const all = (): void => this.enqueueAll();
    this.nodes = this.watch({
      path: '/api/v1/nodes',
      onAdd: all,
      onUpdate: (n, old) => this.onNode(n, old),
      onDelete: all,
      onError: this.onError('node'),
    });
  }

  /** Only what eligibility reads: labels, taints, unschedulable and Ready (status heartbeats change nothing). */
  private onNode(n: KObj, old?: KObj): void {
    const facts = (x: KObj | undefined): string =>
      JSON.stringify([x?.metadata?.labels, x?.spec?.taints, x?.spec?.unschedulable, isReady(x ?? { metadata: {} })]);
    if (!old || facts(n) !== facts(old)) this.enqueueAll();
  }

  protected async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const base = `/apis/apps/v1/namespaces/${ns}/daemonsets`;
    let ds = await this.client.get(`${base}/${name}`).catch(notFoundOk);
    if (!ds || ds.metadata.deletionTimestamp) return;
    const rev = await currentRevision(this.client, ds, `${base}/${name}/status`);
    ds = rev.owner;
    const hash = rev.current.metadata.labels?.[LABEL_REVISION_HASH] as string;
    const pods = await ownedPods(this.client, ds);
    const plan = planDaemonSet(ds, this.nodes.list(), pods, hash);
    const ref = { kind: 'DaemonSet', apiVersion: 'apps/v1', namespace: ns, name, uid: ds.metadata.uid };
    for (const d of plan.delete) {
      if (d.failed)
        this.events.event(
          ref,
          'Warning',
          'FailedDaemonPod',
          `Found failed daemon pod ${ns}/${d.name} on node ${d.failed.node}, will try to kill it`,
        );
      await this.client.delete(`/api/v1/namespaces/${ns}/pods/${d.name}`).catch(notFoundOk);
      this.events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted pod: ${d.name}`);
    }
    // Slow start (1, 2, 4, …) as upstream's syncNodes, so a bad template fails cheaply.
    let todo = plan.create.slice(0, MAX_BATCH);
    for (let batch = 1; todo.length; batch *= 2) {
      const results = await Promise.allSettled(todo.slice(0, batch).map((node) => this.createPod(ds, node, hash)));
      for (const r of results)
        if (r.status === 'fulfilled') this.events.event(ref, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value}`);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        this.events.event(ref, 'Warning', 'FailedCreate', `Error creating: ${(failed.reason as Error).message}`);
        this.queue.later(key, 5000);
        break;
      }
      todo = todo.slice(batch);
    }
    await pruneRevisions(
      this.client,
      ds,
      rev.revisions,
      rev.current,
      pods,
      (p) => p.metadata.labels?.[LABEL_REVISION_HASH],
    );
    const minReady = ds.spec?.minReadySeconds ?? 0;
    if (minReady && plan.status.numberReady > (plan.status.numberAvailable ?? 0))
      this.queue.later(key, minReady * 1000 + 100);
    if (JSON.stringify(plan.status) !== JSON.stringify(ds.status ?? {}))
      await this.client.update(`${base}/${name}/status`, { ...ds, status: plan.status });
  }

  private async createPod(ds: KObj, node: string, hash: string): Promise<string> {
    const p = daemonPod(ds, node, hash);
    const made = await this.client.create(`/api/v1/namespaces/${ds.metadata.namespace}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...p.metadata, generateName: `${ds.metadata.name}-`, ownerReferences: [ownerRefTo(ds)] },
      spec: p.spec,
    });
    return made.metadata.name;
  }
}
