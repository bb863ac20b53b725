// replicaset-controller: keeps each ReplicaSet's number of active pods at
// spec.replicas (creating from the template with a controller reference,
// deleting the least useful first), adopts matching orphans, and writes
// status (replicas, fullyLabeled, ready, available, observedGeneration).
// Decisions use a fresh list of the namespace's pods; informers only trigger.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import { selectorString } from '../api/scale.js';
import { keyOf, PodOwnerController } from './pod-owner-controller.js';
import { ownedPods } from './revision-store.js';
import { deletionOrder, isActive, isAvailable, isReady, ownerRefTo } from './workload-model.js';

/** Pods created per round grow 1, 2, 4, … as upstream's slow start, so a bad template fails cheaply. */
const MAX_BATCH = 500;

export class ReplicaSetController extends PodOwnerController {
  constructor(
    client: KubeApi,
    log: Logger,
    private readonly events: EventRecorder,
  ) {
    super(client, log, 'replicaset-controller', 'ReplicaSet', '/apis/apps/v1/replicasets');
  }

  protected async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const base = `/apis/apps/v1/namespaces/${ns}/replicasets`;
    const rs = await this.client.get(`${base}/${name}`).catch((e: unknown) => {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    });
    if (!rs || rs.metadata.deletionTimestamp) return;
    if (!selectorString(rs.spec?.selector)) return;
    const mine = await ownedPods(this.client, rs);
    const active = mine.filter(isActive);
    const want = rs.spec?.replicas ?? 1;
    const ref = { kind: 'ReplicaSet', apiVersion: 'apps/v1', namespace: ns, name, uid: rs.metadata.uid };
    if (active.length < want) {
      let todo = Math.min(want - active.length, MAX_BATCH);
      for (let batch = 1; todo > 0; batch *= 2) {
        const n = Math.min(batch, todo);
        const results = await Promise.allSettled(Array.from({ length: n }, () => this.createPod(rs)));
        const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        for (const r of results)
          if (r.status === 'fulfilled') this.events.event(ref, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value}`);
        if (failed.length) {
          this.events.event(ref, 'Warning', 'FailedCreate', `Error creating: ${(failed[0]!.reason as Error).message}`);
          this.queue.later(key, 5000);
          break;
        }
        todo -= n;
      }
    } else if (active.length > want) {
      for (const p of deletionOrder(active).slice(0, active.length - want)) {
        await this.client.delete(`/api/v1/namespaces/${ns}/pods/${p.metadata.name}`).catch((e: unknown) => {
          if (!(e instanceof KubeApiError && e.code === 404)) throw e;
        });
        this.events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
      }
    }
    await this.writeStatus(rs, active);
  }

  private async createPod(rs: KObj): Promise<string> {
    const t = rs.spec.template ?? {};
    const p = await this.client.create(`/api/v1/namespaces/${rs.metadata.namespace}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${rs.metadata.name}-`,
        labels: t.metadata?.labels ?? {},
        ...(t.metadata?.annotations ? { annotations: t.metadata.annotations } : {}),
        ownerReferences: [ownerRefTo(rs)],
      },
      spec: structuredClone(t.spec ?? {}),
    });
    return p.metadata.name;
  }

  private async writeStatus(rs: KObj, active: KObj[]): Promise<void> {
    const minReady = rs.spec?.minReadySeconds ?? 0;
    const labels = Object.entries((rs.spec?.template?.metadata?.labels ?? {}) as Record<string, string>);
    const status = {
      ...(rs.status ?? {}),
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) => labels.every(([k, v]) => p.metadata.labels?.[k] === v)).length,
      readyReplicas: active.filter(isReady).length,
      availableReplicas: active.filter((p) => isAvailable(p, minReady)).length,
      observedGeneration: rs.metadata.generation,
    };
    // Ready but not yet available for minReadySeconds: look again when it will be.
    if (minReady && status.readyReplicas > status.availableReplicas) this.queue.later(keyOf(rs), minReady * 1000 + 100);
    if (JSON.stringify(status) === JSON.stringify(rs.status ?? {})) return;
    await this.client.update(
      `/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}/status`,
      { ...rs, status },
    );
  }
}
