// garbage-collector: an object whose owners (metadata.ownerReferences) are
// all gone is deleted, as upstream's background cascading deletion does: a
// Deployment's ReplicaSets, their Pods, a CronJob's Jobs, a Job's Pods, a Service's EndpointSlices, a Node's
// mirror pods. Owners being deleted in the foreground (foregroundDeletion
// finalizer) lose their blocking dependents first, then the finalizer.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { apiVersionOf, findByKind, RESOURCES, type ResourceDef } from '../resources.js';

export const FOREGROUND = 'foregroundDeletion';

/** Kinds that have dependents in practice, and kinds that are dependents. */
const OWNERS = ['apps/deployments', 'apps/replicasets', 'apps/daemonsets', 'apps/statefulsets', 'batch/cronjobs', 'batch/jobs', '/services', '/nodes', '/pods'];
const DEPENDENTS = ['apps/replicasets', 'apps/controllerrevisions', '/persistentvolumeclaims', 'batch/jobs', '/pods', 'discovery.k8s.io/endpointslices', '/endpoints', '/configmaps', '/secrets', '/services'];

export function resourcePath(r: ResourceDef, ns?: string, name?: string): string {
  const base = r.group ? `/apis/${apiVersionOf(r)}` : '/api/v1';
  return `${base}${r.namespaced && ns ? `/namespaces/${ns}` : ''}/${r.resource}${name ? `/${name}` : ''}`;
}

const def = (key: string): ResourceDef => {
  const [group, resource] = key.split('/') as [string, string];
  return RESOURCES.find((r) => r.group === group && r.resource === resource)!;
};

export class GarbageCollector {
  private readonly dependents: Informer[];
  private readonly owners: Informer[];
  private timer: NodeJS.Timeout | undefined;
  private scanning = false;
  private again = false;
  deleted = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly periodMs = 30_000,
  ) {
    const onErr = (e: Error) => log.warn(`garbage-collector: watch: ${e.message}`);
    const kick = (): void => void this.scan();
    // A new dependent is checked on its own (an owner deleted just before it was made); owner deletions rescan all.
    this.dependents = DEPENDENTS.map((k) => new Informer(client, { path: resourcePath(def(k)), onAdd: (o) => void this.checkOne(def(k), o), onError: onErr }));
    this.owners = OWNERS.map((k) => new Informer(client, { path: resourcePath(def(k)), onDelete: kick, onUpdate: (o) => o.metadata.finalizers?.includes(FOREGROUND) && kick(), onError: onErr }));
  }

  async start(): Promise<void> {
    await Promise.all([...this.dependents, ...this.owners].map((i) => i.start()));
    this.timer = setInterval(() => void this.scan(), this.periodMs);
    this.timer.unref();
    void this.scan();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.dependents, ...this.owners].map((i) => i.stop()));
  }

  /** The owner object a reference points to, if it still exists with that uid. */
  private async owner(ref: KObj, ns: string): Promise<KObj | undefined> {
    const r = findByKind(ref.apiVersion, ref.kind);
    if (!r) return { metadata: {} }; // a kind we do not serve: never collect on its account
    try {
      const o = await this.client.get(resourcePath(r, ns, ref.name));
      return o.metadata.uid === ref.uid ? o : undefined;
    } catch (e) {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  /** One pass; coalesces calls made while it runs. */
  async scan(): Promise<void> {
    if (this.scanning) {
      this.again = true;
      return;
    }
    this.scanning = true;
    try {
      do {
        this.again = false;
        await this.collectOrphans();
        await this.finishForeground();
      } while (this.again);
    } catch (e) {
      this.log.warn(`garbage-collector: ${(e as Error).message}`);
    } finally {
      this.scanning = false;
    }
  }

  private async deleteObject(r: ResourceDef, o: KObj, why: string): Promise<void> {
    try {
      await this.client.delete(resourcePath(r, o.metadata.namespace, o.metadata.name), { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: o.metadata.uid } });
      this.deleted++;
      this.log.info(`garbage-collector: deleted ${r.resource} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}: ${why}`);
    } catch (e) {
      if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  /** Deletes `o` if every owner it names is gone. */
  private async collectIfOrphaned(r: ResourceDef, o: KObj): Promise<void> {
    const refs = (o.metadata.ownerReferences ?? []) as KObj[];
    if (!refs.length || o.metadata.deletionTimestamp) return;
    const alive = await Promise.all(refs.map((ref) => this.owner(ref, o.metadata.namespace ?? '')));
    if (alive.every((x) => x === undefined)) await this.deleteObject(r, o, `owner ${refs.map((x) => `${String(x.kind)}/${String(x.name)}`).join(', ')} is gone`);
  }

  private async checkOne(r: ResourceDef, o: KObj): Promise<void> {
    await this.collectIfOrphaned(r, o).catch((e: Error) => this.log.warn(`garbage-collector: ${e.message}`));
  }

  private async collectOrphans(): Promise<void> {
    for (const [i, inf] of this.dependents.entries()) {
      const r = def(DEPENDENTS[i]!);
      for (const o of inf.list()) await this.collectIfOrphaned(r, o);
    }
  }

  /** Owners deleted with propagationPolicy=Foreground: their blocking dependents go first. */
  private async finishForeground(): Promise<void> {
    for (const [i, inf] of this.owners.entries()) {
      const or = def(OWNERS[i]!);
      for (const owner of inf.list()) {
        if (!owner.metadata.deletionTimestamp || !owner.metadata.finalizers?.includes(FOREGROUND)) continue;
        let blocking = 0;
        for (const [j, dep] of this.dependents.entries()) {
          for (const o of dep.list()) {
            const ref = ((o.metadata.ownerReferences ?? []) as KObj[]).find((x) => x.uid === owner.metadata.uid);
            if (!ref) continue;
            if (ref.blockOwnerDeletion) blocking++;
            if (!o.metadata.deletionTimestamp) await this.deleteObject(def(DEPENDENTS[j]!), o, `foreground deletion of ${or.kind} ${owner.metadata.name}`);
          }
        }
        if (blocking) continue;
        const finalizers = (owner.metadata.finalizers as string[]).filter((f) => f !== FOREGROUND);
        await this.client.patch(resourcePath(or, owner.metadata.namespace, owner.metadata.name), { metadata: { uid: owner.metadata.uid, finalizers } }, 'merge').catch((e: unknown) => {
          if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
        });
      }
    }
  }
}
