// replicaset-controller and replicationcontroller-controller: keep each ReplicaSet's (ReplicationController's)
// number of active pods at spec.replicas (creating from the template with a controller reference, deleting the
// least useful first), adopt matching orphans and release pods that no longer match, and write status (replicas,
// fullyLabeled, ready, available, observedGeneration, the ReplicaFailure condition while pods cannot be created).
// Decisions use a fresh list of the namespace's pods; informers only trigger.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import { podSelector, selectorString } from '../api/scale.js';
import { keyOf, PodOwnerController } from './pod-owner-controller.js';
import { ownedPods } from './revision-store.js';
import { deletionOrder, isActive, isAvailable, isReady, ownerRefTo } from './workload-model.js';

/** Pods created per round grow 1, 2, 4, … as upstream's slow start, so a bad template fails cheaply. */
const MAX_BATCH = 500;

/** The kind a replica controller keeps: ReplicaSet or ReplicationController. */
export interface ReplicaKind {
  controller: string;
  kind: string;
  apiVersion: string;
  /** The collection path of the kind in a namespace, and in all. */
  collection: (ns: string) => string;
  all: string;
}

export const REPLICA_SET: ReplicaKind = {
  controller: 'replicaset-controller',
  kind: 'ReplicaSet',
  apiVersion: 'apps/v1',
  collection: (ns) => `/apis/apps/v1/namespaces/${ns}/replicasets`,
  all: '/apis/apps/v1/replicasets',
};

export const REPLICATION_CONTROLLER: ReplicaKind = {
  controller: 'replicationcontroller-controller',
  kind: 'ReplicationController',
  apiVersion: 'v1',
  collection: (ns) => `/api/v1/namespaces/${ns}/replicationcontrollers`,
  all: '/api/v1/replicationcontrollers',
};

export class ReplicaSetController extends PodOwnerController {
  constructor(
    client: KubeApi,
    log: Logger,
    private readonly events: EventRecorder,
    private readonly k: ReplicaKind = REPLICA_SET,
  ) {
    super(client, log, k.controller, k.kind, k.all);
  }

  protected async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const rs = await this.client.get(`${this.k.collection(ns)}/${name}`).catch((e: unknown) => {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    });
    if (!rs || rs.metadata.deletionTimestamp) return;
    if (!selectorString(podSelector(rs))) return;
    const mine = await ownedPods(this.client, rs);
    const active = mine.filter(isActive);
    const want = rs.spec?.replicas ?? 1;
    const ref = { kind: this.k.kind, apiVersion: this.k.apiVersion, namespace: ns, name, uid: rs.metadata.uid };
    let failure: string | undefined;
    if (active.length < want) {
      let todo = Math.min(want - active.length, MAX_BATCH);
      for (let batch = 1; todo > 0; batch *= 2) {
        const n = Math.min(batch, todo);
        const results = await Promise.allSettled(Array.from({ length: n }, () => this.createPod(rs)));
        const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        for (const r of results)
          if (r.status === 'fulfilled') this.events.event(ref, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value}`);
        if (failed.length) {
          failure = (failed[0]!.reason as Error).message;
          this.events.event(ref, 'Warning', 'FailedCreate', `Error creating: ${failure}`);
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
    await this.writeStatus(rs, active, failure);
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

  private async writeStatus(rs: KObj, active: KObj[], failure: string | undefined): Promise<void> {
    const minReady = rs.spec?.minReadySeconds ?? 0;
    const labels = Object.entries((rs.spec?.template?.metadata?.labels ?? {}) as Record<string, string>);
    const conditions = replicaFailure(rs.status?.conditions as KObj[] | undefined, failure);
    const { conditions: _, ...rest } = (rs.status ?? {}) as KObj;
    const status = {
      ...rest,
      ...(conditions.length ? { conditions } : {}),
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) => labels.every(([k, v]) => p.metadata.labels?.[k] === v)).length,
      readyReplicas: active.filter(isReady).length,
      availableReplicas: active.filter((p) => isAvailable(p, minReady)).length,
      observedGeneration: rs.metadata.generation,
    };
    // Ready but not yet available for minReadySeconds: look again when it will be.
    if (minReady && status.readyReplicas > status.availableReplicas) this.queue.later(keyOf(rs), minReady * 1000 + 100);
    if (JSON.stringify(status) === JSON.stringify(rs.status ?? {})) return;
    await this.client.update(`${this.k.collection(rs.metadata.namespace)}/${rs.metadata.name}/status`, {
      ...rs,
      status,
    });
  }
}

/**
 * The ReplicaFailure condition: set (reason FailedCreate) when pods cannot be created and kept as first set while they
 * still cannot (each attempt's error names another generated pod), removed once they can.
 */
export function replicaFailure(conditions: KObj[] | undefined, failure: string | undefined, now = new Date()): KObj[] {
  const others = (conditions ?? []).filter((c) => c.type !== 'ReplicaFailure');
  if (failure === undefined) return others;
  const prev = (conditions ?? []).find((c) => c.type === 'ReplicaFailure');
  if (prev) return conditions!;
  return [
    ...others,
    {
      type: 'ReplicaFailure',
      status: 'True',
      lastTransitionTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      reason: 'FailedCreate',
      message: failure,
    },
  ];
}
