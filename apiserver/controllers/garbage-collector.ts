// garbage-collector: an object whose owners (metadata.ownerReferences) are
// all gone is deleted, as upstream's background cascading deletion does: a
// Deployment's ReplicaSets, their Pods, a CronJob's Jobs, a Job's Pods, a Service's EndpointSlices, a Node's
// mirror pods. Owners being deleted in the foreground (foregroundDeletion
// finalizer) lose their blocking dependents first, then the finalizer.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { servedResources } from '../crd/definition.js';
import { apiVersionOf, findByKind, type ResourceDef, RESOURCES } from '../resources.js';

export const FOREGROUND = 'foregroundDeletion';

/** Kinds that have dependents in practice, and kinds that are dependents. */
const OWNERS = [
  'apps/deployments',
  'apps/replicasets',
  'apps/daemonsets',
  'apps/statefulsets',
  'batch/cronjobs',
  'batch/jobs',
  '/replicationcontrollers',
  '/services',
  '/nodes',
  '/pods',
];
const DEPENDENTS = [
  'apps/replicasets',
  'apps/controllerrevisions',
  '/persistentvolumeclaims',
  'batch/jobs',
  '/pods',
  'discovery.k8s.io/endpointslices',
  '/endpoints',
  '/configmaps',
  '/secrets',
  '/services',
];

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
  /** The CRDs, and an informer on each custom resource they serve (dependents and owners both), made and stopped as they come and go. */
  private readonly crds: Informer;
  private readonly custom = new Map<string, { r: ResourceDef; inf: Informer }>();
  /** Every served version of the custom resources, as of the last definition event (owner references name any of them). */
  private customDefs: ResourceDef[] = [];
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
    this.dependents = DEPENDENTS.map(
      (k) =>
        new Informer(client, {
          path: resourcePath(def(k)),
          onAdd: (o) => void this.checkOne(def(k), o),
          onError: onErr,
        }),
    );
    this.owners = OWNERS.map(
      (k) =>
        new Informer(client, {
          path: resourcePath(def(k)),
          onDelete: kick,
          onUpdate: (o) => o.metadata.finalizers?.includes(FOREGROUND) && kick(),
          onError: onErr,
        }),
    );
    const follow = (): void =>
      void this.followDefinitions().catch((e: Error) => log.warn(`garbage-collector: custom resources: ${e.message}`));
    this.crds = new Informer(client, {
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      onAdd: follow,
      onUpdate: follow,
      onDelete: follow,
      onError: onErr,
    });
  }

  /** One informer per served custom resource: new objects are checked, deletions rescan. */
  private async followDefinitions(): Promise<void> {
    this.customDefs = this.crds.list().flatMap((o) => servedResources(o));
    const want = new Map(this.customDefs.map((r) => [`${r.group}/${r.resource}`, r]));
    for (const [k, c] of this.custom) {
      if (want.has(k)) continue;
      this.custom.delete(k);
      await c.inf.stop();
    }
    for (const [k, r] of want) {
      if (this.custom.has(k)) continue;
      const inf = new Informer(this.client, {
        path: resourcePath(r),
        onAdd: (o) => void this.checkOne(r, o),
        onDelete: () => void this.scan(),
        onUpdate: (o) => o.metadata.finalizers?.includes(FOREGROUND) && void this.scan(),
        onError: (e) => this.log.warn(`garbage-collector: watch ${k}: ${e.message}`),
      });
      this.custom.set(k, { r, inf });
      await inf.start();
    }
  }

  async start(): Promise<void> {
    await Promise.all([...this.dependents, ...this.owners, this.crds].map((i) => i.start()));
    await this.followDefinitions();
    this.timer = setInterval(() => void this.scan(), this.periodMs);
    this.timer.unref();
    void this.scan();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all(
      [...this.dependents, ...this.owners, this.crds, ...[...this.custom.values()].map((c) => c.inf)].map((i) =>
        i.stop(),
      ),
    );
  }

  /** The owner object a reference points to, if it still exists with that uid. */
  private async owner(ref: KObj, ns: string): Promise<KObj | undefined> {
    const r =
      findByKind(ref.apiVersion, ref.kind) ??
      this.customDefs.find((x) => apiVersionOf(x) === ref.apiVersion && x.kind === ref.kind);
    if (!r) return { metadata: {} }; // a kind nobody serves: never collect on its account
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
        const custom = this.customObjects();
        await this.collectOrphans(custom);
        await this.finishForeground(custom);
      } while (this.again);
    } catch (e) {
      this.log.warn(`garbage-collector: ${(e as Error).message}`);
    } finally {
      this.scanning = false;
    }
  }

  private async deleteObject(r: ResourceDef, o: KObj, why: string): Promise<void> {
    try {
      await this.client.delete(resourcePath(r, o.metadata.namespace, o.metadata.name), {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy: 'Background',
        preconditions: { uid: o.metadata.uid },
      });
      this.deleted++;
      this.log.info(
        `garbage-collector: deleted ${r.resource} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}: ${why}`,
      );
    } catch (e) {
      if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  /** Deletes `o` if every owner it names is gone. */
  private async collectIfOrphaned(r: ResourceDef, o: KObj): Promise<void> {
    const refs = (o.metadata.ownerReferences ?? []) as KObj[];
    if (!refs.length || o.metadata.deletionTimestamp) return;
    const alive = await Promise.all(refs.map((ref) => this.owner(ref, o.metadata.namespace ?? '')));
    if (alive.every((x) => x === undefined))
      await this.deleteObject(
        r,
        o,
        `owner ${refs.map((x) => `${String(x.kind)}/${String(x.name)}`).join(', ')} is gone`,
      );
  }

  private async checkOne(r: ResourceDef, o: KObj): Promise<void> {
    await this.collectIfOrphaned(r, o).catch((e: Error) => this.log.warn(`garbage-collector: ${e.message}`));
  }

  /** Custom resources with owners (dependents) or deleted in the foreground (owners). */
  private customObjects(): { r: ResourceDef; o: KObj }[] {
    return [...this.custom.values()].flatMap(({ r, inf }) =>
      inf
        .list()
        .filter((o) => o.metadata.ownerReferences?.length || o.metadata.finalizers?.includes(FOREGROUND))
        .map((o) => ({ r, o })),
    );
  }

  private async collectOrphans(custom: { r: ResourceDef; o: KObj }[]): Promise<void> {
    for (const [i, inf] of this.dependents.entries()) {
      const r = def(DEPENDENTS[i]!);
      for (const o of inf.list()) await this.collectIfOrphaned(r, o);
    }
    for (const { r, o } of custom) await this.collectIfOrphaned(r, o);
  }

  /** Owners deleted with propagationPolicy=Foreground: their blocking dependents go first. */
  private async finishForeground(custom: { r: ResourceDef; o: KObj }[]): Promise<void> {
    const owners = [...this.owners.entries()].flatMap(([i, inf]) => inf.list().map((o) => ({ r: def(OWNERS[i]!), o })));
    const dependents = [
      ...[...this.dependents.entries()].flatMap(([j, inf]) => inf.list().map((o) => ({ r: def(DEPENDENTS[j]!), o }))),
      ...custom.filter((c) => c.o.metadata.ownerReferences?.length),
    ];
    for (const { r: or, o: owner } of [...owners, ...custom]) {
      if (!owner.metadata.deletionTimestamp || !owner.metadata.finalizers?.includes(FOREGROUND)) continue;
      let blocking = 0;
      for (const { r: dr, o } of dependents) {
        const ref = ((o.metadata.ownerReferences ?? []) as KObj[]).find((x) => x.uid === owner.metadata.uid);
        if (!ref) continue;
        if (ref.blockOwnerDeletion) blocking++;
        if (!o.metadata.deletionTimestamp)
          await this.deleteObject(dr, o, `foreground deletion of ${or.kind} ${owner.metadata.name}`);
      }
      if (blocking) continue;
      const finalizers = (owner.metadata.finalizers as string[]).filter((f) => f !== FOREGROUND);
      await this.client
        .patch(
          resourcePath(or, owner.metadata.namespace, owner.metadata.name),
          { metadata: { uid: owner.metadata.uid, finalizers } },
          'merge',
        )
        .catch((e: unknown) => {
          if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
        });
    }
  }
}
