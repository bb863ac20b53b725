// deployment-controller: one ReplicaSet per pod template, named
// <deployment>-<pod-template-hash>; RollingUpdate moves replicas from the old
// ReplicaSets to the new one within maxSurge/maxUnavailable, Recreate scales
// the old ones to zero first. Status and the Available/Progressing
// conditions follow upstream, which is what `kubectl rollout status` reads.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { selectorString } from '../api/scale.js';
import { condition, progressingCondition, type RolloutCounts } from './deployment-progress.js';
import { isScalingEvent, scaledSizes } from './deployment-scaling.js';
import { RetryingQueue } from './key-queue.js';
import {
  ANN_DESIRED,
  ANN_MAX,
  ANN_REVISION,
  ANN_REVISION_HISTORY,
  controllerRef,
  isActive,
  newRSReplicas,
  ownedBy,
  ownerRefTo,
  POD_TEMPLATE_HASH,
  sameTemplate,
  scaleDownOld,
  surgeAndUnavailable,
  templateHash,
  withDeploymentAnnotations,
} from './workload-model.js';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;
const replicas = (rs: KObj): number => rs.spec?.replicas ?? 0;
/** A ReplicaSet's revision; an int64 upstream, so a BigInt here (a large one must not lose digits). */
const revision = (rs: KObj): bigint => {
  const v = String(rs.metadata.annotations?.[ANN_REVISION] ?? '0');
  return /^\d+$/.test(v) ? BigInt(v) : 0n;
};
const maxRevision = (rss: KObj[]): bigint => rss.map(revision).reduce((a, b) => (b > a ? b : a), 0n);

export class DeploymentController {
  private readonly deployments: Informer;
  private readonly sets: Informer;
  private readonly pods: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
  ) {
    this.queue = new RetryingQueue('deployment-controller', log, (k) => this.sync(k));
    const onErr = (what: string) => (e: Error) => log.warn(`deployment-controller: ${what} watch: ${e.message}`);
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    const enqOwner = (o: KObj): void => {
      const ref = controllerRef(o);
      if (ref?.kind === 'Deployment') this.queue.add(`${o.metadata.namespace}/${ref.name}`);
    };
    this.deployments = new Informer(client, {
      path: '/apis/apps/v1/deployments',
      onAdd: enq,
      onUpdate: enq,
      onDelete: enq,
      onError: onErr('deployment'),
    });
    this.sets = new Informer(client, {
      path: '/apis/apps/v1/replicasets',
      onAdd: enqOwner,
      onUpdate: enqOwner,
      onDelete: enqOwner,
      onError: onErr('replicaset'),
    });
    // Recreate waits for the old pods to be gone.
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      onDelete: (p) => {
        const rs =
          controllerRef(p)?.kind === 'ReplicaSet'
            ? this.sets.cache.get(`${p.metadata.namespace}/${controllerRef(p)!.name}`)
            : undefined;
        if (rs) enqOwner(rs);
      },
      onError: onErr('pod'),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.deployments.start(), this.sets.start(), this.pods.start()]);
    for (const d of this.deployments.list()) this.queue.add(keyOf(d));
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.deployments.stop(), this.sets.stop(), this.pods.stop()]);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const base = `/apis/apps/v1/namespaces/${ns}`;
    const found = await this.client.get(`${base}/deployments/${name}`).catch((e: unknown) => {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    });
    if (!found || found.metadata.deletionTimestamp) return;
    let d: KObj = found;
    const sel = selectorString(d.spec?.selector);
    if (!sel) return;
    const all: KObj[] = [];
    for (const rs of (await this.client.get(`${base}/replicasets`, { labelSelector: sel })).items as KObj[]) {
      if (ownedBy(rs, d)) all.push(rs);
      else if (!controllerRef(rs) && !rs.metadata.deletionTimestamp) {
        all.push(
          await this.client.patch(
            `${base}/replicasets/${rs.metadata.name}`,
            { metadata: { uid: rs.metadata.uid, ownerReferences: [ownerRefTo(d)] } },
            'strategic',
          ),
        );
      }
    }
    let newRS = all.find((rs) => sameTemplate(rs.spec?.template, found.spec?.template));
    const old = all.filter((rs) => rs !== newRS);
    const created = !newRS && !d.spec?.paused;
    if (!d.spec?.paused) {
      newRS = newRS ? await this.copyAnnotations(d, await this.makeNewest(newRS, old)) : await this.createNewRS(d, old);
      d = await this.recordRevision(d, newRS);
      if (isScalingEvent(d, [newRS, ...old])) await this.scaleProportionally(d, newRS, old);
      else if (d.spec?.strategy?.type === 'Recreate') await this.recreate(d, newRS, old);
      else await this.rollingUpdate(d, newRS, old);
      await this.cleanup(d, old);
    }
    const recheckMs = await this.writeStatus(d, newRS, old, created);
    // A rollout that stops moving must still time out: look again at its deadline.
    if (recheckMs !== undefined) this.queue.later(key, recheckMs);
  }

  private async createNewRS(d: KObj, old: KObj[]): Promise<KObj> {
    const ns = d.metadata.namespace;
    const { maxSurge } = surgeAndUnavailable(d);
    const desired = d.spec?.replicas ?? 1;
    for (let collisions = d.status?.collisionCount ?? 0; ; collisions++) {
      const hash = templateHash(d.spec.template, collisions);
      const template = structuredClone(d.spec.template);
      template.metadata = {
        ...(template.metadata ?? {}),
        labels: { ...(template.metadata?.labels ?? {}), [POD_TEMPLATE_HASH]: hash },
      };
      const rev = maxRevision(old) + 1n;
      const body = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: `${d.metadata.name}-${hash}`,
          labels: template.metadata.labels,
          annotations: {
            ...withDeploymentAnnotations(d.metadata.annotations, {}),
            [ANN_REVISION]: String(rev),
            [ANN_DESIRED]: String(desired),
            [ANN_MAX]: String(desired + (d.spec?.strategy?.type === 'Recreate' ? 0 : maxSurge)),
          },
          ownerReferences: [ownerRefTo(d)],
        },
        spec: {
          replicas: 0,
          minReadySeconds: d.spec?.minReadySeconds ?? 0,
          selector: {
            ...d.spec.selector,
            matchLabels: { ...(d.spec.selector?.matchLabels ?? {}), [POD_TEMPLATE_HASH]: hash },
          },
          template,
        },
      };
      try {
        const rs = await this.client.create(`/apis/apps/v1/namespaces/${ns}/replicasets`, body);
        this.log.info(`deployment-controller: ${keyOf(d)}: created replica set ${rs.metadata.name} (revision ${rev})`);
        return rs;
      } catch (e) {
        // A ReplicaSet of that name with another template: take the next hash, as upstream's collisionCount.
        if (!(e instanceof KubeApiError && e.code === 409)) throw e;
        const existing = await this.client.get(`/apis/apps/v1/namespaces/${ns}/replicasets/${body.metadata.name}`);
        if (ownedBy(existing, d) && sameTemplate(existing.spec?.template, d.spec.template)) return existing;
        await this.client.update(`/apis/apps/v1/namespaces/${ns}/deployments/${d.metadata.name}/status`, {
          ...d,
          status: { ...(d.status ?? {}), collisionCount: collisions + 1 },
        });
        d.status = { ...(d.status ?? {}), collisionCount: collisions + 1 };
      }
    }
  }

  /**
   * A template rolled back to: its ReplicaSet takes the next revision and
   * keeps its earlier ones in revision-history, as upstream, so that
   * `kubectl rollout history` and `undo` see it as the newest.
   */
  private async makeNewest(rs: KObj, old: KObj[]): Promise<KObj> {
    const next = maxRevision(old) + 1n;
    const was = revision(rs);
    if (was >= next) return rs;
    const history = [rs.metadata.annotations?.[ANN_REVISION_HISTORY], was ? String(was) : undefined]
      .filter(Boolean)
      .join(',');
    const annotations = {
      ...(rs.metadata.annotations ?? {}),
      [ANN_REVISION]: String(next),
      ...(history ? { [ANN_REVISION_HISTORY]: history } : {}),
    };
    return this.client.update(`/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}`, {
      ...rs,
      metadata: { ...rs.metadata, annotations },
    });
  }

  /** The new ReplicaSet takes the Deployment's annotations as they change (a later change-cause), as upstream. */
  private async copyAnnotations(d: KObj, rs: KObj): Promise<KObj> {
    const annotations = withDeploymentAnnotations(d.metadata.annotations, rs.metadata.annotations);
    if (!annotations) return rs;
    return this.client.update(`/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}`, {
      ...rs,
      metadata: { ...rs.metadata, annotations },
    });
  }

  /** The Deployment carries its new ReplicaSet's revision, as `kubectl describe` shows. */
  private async recordRevision(d: KObj, rs: KObj): Promise<KObj> {
    const rev = rs.metadata.annotations?.[ANN_REVISION];
    if (!rev || d.metadata.annotations?.[ANN_REVISION] === rev) return d;
    return this.client.patch(
      `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}`,
      { metadata: { resourceVersion: d.metadata.resourceVersion, annotations: { [ANN_REVISION]: rev } } },
      'merge',
    );
  }

  private async scale(d: KObj, rs: KObj, to: number): Promise<KObj> {
    const from = replicas(rs);
    const { maxSurge } = surgeAndUnavailable(d);
    const desired = d.spec?.replicas ?? 1;
    const ann = {
      ...(rs.metadata.annotations ?? {}),
      [ANN_DESIRED]: String(desired),
      [ANN_MAX]: String(desired + maxSurge),
    };
    if (from === to && rs.metadata.annotations?.[ANN_DESIRED] === ann[ANN_DESIRED]) return rs;
    const next = await this.client.update(
      `/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}`,
      { ...rs, metadata: { ...rs.metadata, annotations: ann }, spec: { ...rs.spec, replicas: to } },
    );
    if (from !== to) {
      const ref = {
        kind: 'Deployment',
        apiVersion: 'apps/v1',
        namespace: d.metadata.namespace,
        name: d.metadata.name,
        uid: d.metadata.uid,
      };
      this.events.event(
        ref,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${to}`,
      );
    }
    return next;
  }

  /** spec.replicas changed: resize the active ReplicaSets now; the rollout resumes on the next sync. */
  private async scaleProportionally(d: KObj, newRS: KObj, old: KObj[]): Promise<void> {
    const byName = new Map([newRS, ...old].map((rs) => [rs.metadata.name as string, rs]));
    for (const [name, to] of scaledSizes(d, newRS, old)) await this.scale(d, byName.get(name)!, to);
  }

  private async rollingUpdate(d: KObj, newRS: KObj, old: KObj[]): Promise<void> {
    const desired = d.spec?.replicas ?? 1;
    // Nothing old left to move from: a plain scale of the new ReplicaSet.
    if (old.every((rs) => replicas(rs) === 0)) {
      await this.scale(d, newRS, desired);
      return;
    }
    const target = newRSReplicas(d, newRS, [newRS, ...old]);
    const cur = await this.scale(d, newRS, target);
    for (const [rsName, to] of scaleDownOld(d, cur, old))
      await this.scale(
        d,
        old.find((rs) => rs.metadata.name === rsName)!,
        to,
      );
  }

  private async recreate(d: KObj, newRS: KObj, old: KObj[]): Promise<void> {
    for (const rs of old) if (replicas(rs) > 0) await this.scale(d, rs, 0);
    // The new pods start only once no old pod is left.
    for (const rs of old) {
      const pods = (
        await this.client.get(`/api/v1/namespaces/${rs.metadata.namespace}/pods`, {
          labelSelector: selectorString(rs.spec?.selector),
        })
      ).items as KObj[];
      if (pods.some((p) => ownedBy(p, rs) && (isActive(p) || p.metadata.deletionTimestamp))) return;
    }
    await this.scale(d, newRS, d.spec?.replicas ?? 1);
  }

  /** Old ReplicaSets with no replicas beyond revisionHistoryLimit go, oldest first. */
  private async cleanup(d: KObj, old: KObj[]): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit ?? 10;
    const idle = old
      .filter((rs) => replicas(rs) === 0 && (rs.status?.replicas ?? 0) === 0 && !rs.metadata.deletionTimestamp)
      .sort((a, b) => (revision(a) < revision(b) ? -1 : revision(a) > revision(b) ? 1 : 0));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit)))
      await this.client
        .delete(`/apis/apps/v1/namespaces/${rs.metadata.namespace}/replicasets/${rs.metadata.name}`)
        .catch(() => undefined);
  }

  /** Writes status if it changed; returns when to look again for a progress timeout. */
  private async writeStatus(
    d: KObj,
    newRS: KObj | undefined,
    old: KObj[],
    created: boolean,
  ): Promise<number | undefined> {
    const all = newRS ? [newRS, ...old] : old;
    const sum = (f: (rs: KObj) => number): number => all.reduce((s, rs) => s + f(rs), 0);
    const desired = d.spec?.replicas ?? 1;
    const { maxUnavailable } = surgeAndUnavailable(d);
    const counts: RolloutCounts = {
      replicas: sum((rs) => rs.status?.replicas ?? 0),
      updatedReplicas: newRS?.status?.replicas ?? 0,
      readyReplicas: sum((rs) => rs.status?.readyReplicas ?? 0),
      availableReplicas: sum((rs) => rs.status?.availableReplicas ?? 0),
    };
    const nowMs = Date.now();
    const now = rfc3339(new Date(nowMs));
    const prevAvailable = ((d.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Available');
    const minAvailable = d.spec?.strategy?.type === 'Recreate' ? desired : desired - maxUnavailable;
    const availableCond =
      counts.availableReplicas >= minAvailable
        ? condition(
            prevAvailable,
            'Available',
            'True',
            'MinimumReplicasAvailable',
            'Deployment has minimum availability.',
            now,
          )
        : condition(
            prevAvailable,
            'Available',
            'False',
            'MinimumReplicasUnavailable',
            'Deployment does not have minimum availability.',
            now,
          );
    const complete =
      !!newRS &&
      counts.updatedReplicas === desired &&
      counts.replicas === desired &&
      counts.availableReplicas >= desired &&
      (newRS.status?.availableReplicas ?? 0) >= desired;
    const progress = progressingCondition(d, newRS, counts, created, complete, nowMs);
    const status: KObj = {
      observedGeneration: d.metadata.generation,
      ...counts,
      unavailableReplicas: Math.max(0, desired - counts.availableReplicas),
      conditions: [availableCond, progress.condition],
      ...(d.status?.collisionCount ? { collisionCount: d.status.collisionCount } : {}),
    };
    if (JSON.stringify(status) !== JSON.stringify(d.status ?? {})) {
      await this.client.update(
        `/apis/apps/v1/namespaces/${d.metadata.namespace}/deployments/${d.metadata.name}/status`,
        { ...d, status },
      );
    }
    return progress.recheckMs;
  }
}
