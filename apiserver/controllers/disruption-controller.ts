// disruption-controller (upstream pkg/controller/disruption): keeps each
// PodDisruptionBudget's status — expected, desired and current healthy pods,
// disruptionsAllowed, the DisruptionAllowed condition — and forgets evicted
// pods (status.disruptedPods) once they are gone or after 2 minutes.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { selectorString } from '../api/scale.js';
import { budget, disruptionCondition } from './disruption-model.js';
import { RetryingQueue } from './key-queue.js';
import { controllerRef } from './workload-model.js';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;
/** How long an evicted pod may take to go before the budget stops counting it as disrupted (upstream DeletionTimeout). */
const DELETION_TIMEOUT_MS = 2 * 60_000;
/** Controllers whose replicas a percentage or maxUnavailable is taken of, by kind. */
const SCALABLE: Record<string, string> = {
  ReplicaSet: '/apis/apps/v1/namespaces/%s/replicasets/',
  StatefulSet: '/apis/apps/v1/namespaces/%s/statefulsets/',
  ReplicationController: '/api/v1/namespaces/%s/replicationcontrollers/',
};

export class DisruptionController {
  private readonly pdbs: Informer;
  private readonly pods: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new RetryingQueue('disruption-controller', log, (k) => this.sync(k));
    const onErr = (what: string) => (e: Error) => log.warn(`disruption-controller: ${what} watch: ${e.message}`);
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    this.pdbs = new Informer(client, {
      path: '/apis/policy/v1/poddisruptionbudgets',
      onAdd: enq,
      onUpdate: enq,
      onError: onErr('pdb'),
    });
    const onPod = (p: KObj): void => {
      for (const b of this.pdbs.list()) if (b.metadata.namespace === p.metadata.namespace) this.queue.add(keyOf(b));
    };
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      onAdd: onPod,
      onUpdate: onPod,
      onDelete: onPod,
      onError: onErr('pod'),
      transform: (p) => ({ metadata: { name: p.metadata?.name, namespace: p.metadata?.namespace } }),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.pdbs.start(), this.pods.start()]);
    for (const b of this.pdbs.list()) this.queue.add(keyOf(b));
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.pdbs.stop(), this.pods.stop()]);
  }

  /** The replicas the pods' controllers want, or undefined when a pod has none that scales. */
  private async controllerScale(ns: string, pods: KObj[]): Promise<number | undefined> {
    const seen = new Map<string, number>();
    for (const p of pods) {
      const ref = controllerRef(p);
      const base = ref && SCALABLE[ref.kind];
      if (!ref || !base) return undefined;
      if (seen.has(ref.uid)) continue;
      const o = await this.client.get(`${base.replace('%s', ns)}${ref.name}`).catch(() => undefined);
      if (!o) return undefined;
      seen.set(ref.uid, o.spec?.replicas ?? 1);
    }
    return [...seen.values()].reduce((a, b) => a + b, 0);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const pdb = await this.client
      .get(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}`)
      .catch((e: unknown) => {
        if (e instanceof KubeApiError && e.code === 404) return undefined;
        throw e;
      });
    if (!pdb || pdb.metadata.deletionTimestamp) return;
    const sel = selectorString(pdb.spec?.selector);
    // policy/v1: an empty selector matches every pod of the namespace, a missing one none.
    const pods = !pdb.spec?.selector
      ? []
      : (((await this.client.get(`/api/v1/namespaces/${ns}/pods`, { labelSelector: sel })).items ?? []) as KObj[]);
    const now = this.now();
    // Evicted pods stay "disrupted" until they are gone, or for at most 2 minutes.
    const byName = new Map(pods.map((p) => [p.metadata.name as string, p]));
    const disrupted: Record<string, string> = {};
    let recheck = Infinity;
    for (const [pod, at] of Object.entries((pdb.status?.disruptedPods ?? {}) as Record<string, string>)) {
      const p = byName.get(pod);
      const until = Date.parse(at) + DELETION_TIMEOUT_MS;
      if (!p || p.metadata.deletionTimestamp || until <= now) continue;
      disrupted[pod] = at;
      recheck = Math.min(recheck, until - now);
    }
    const b = budget({ pdb, pods, controllerScale: await this.controllerScale(ns, pods), disrupted });
    const old = ((pdb.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'DisruptionAllowed');
    const status: KObj =
      'error' in b
        ? {
            ...(pdb.status ?? {}),
            disruptionsAllowed: 0,
            observedGeneration: pdb.metadata.generation,
            conditions: [disruptionCondition(0, old, rfc3339(new Date(now)), b.error)],
          }
        : {
            disruptedPods: Object.keys(disrupted).length ? disrupted : undefined,
            disruptionsAllowed: Math.max(0, b.disruptionsAllowed - Object.keys(disrupted).length),
            currentHealthy: b.currentHealthy,
            desiredHealthy: b.desiredHealthy,
            expectedPods: b.expectedPods,
            observedGeneration: pdb.metadata.generation,
            conditions: [],
          };
    if (!('error' in b))
      status.conditions = [disruptionCondition(status.disruptionsAllowed, old, rfc3339(new Date(now)))];
    if (Number.isFinite(recheck)) this.queue.later(key, recheck + 100);
    const clean = JSON.parse(JSON.stringify(status)) as KObj;
    if (JSON.stringify(clean) === JSON.stringify(pdb.status ?? {})) return;
    await this.client.update(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/${name}/status`, {
      ...pdb,
      status: clean,
    });
  }
}
