// namespace-controller (upstream pkg/controller/namespace): a namespace being
// deleted (phase Terminating, the "kubernetes" finalizer in spec.finalizers)
// has everything in it deleted, pods gracefully, with conditions telling what
// remains; once nothing does, the finalizer is removed through the finalize
// subresource and the namespace goes.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { customResources } from '../crd/custom-resources.js';
import { RESOURCES } from '../resources.js';
import { resourcePath } from './garbage-collector.js';
import { RetryingQueue } from './key-queue.js';

export const NAMESPACE_FINALIZER = 'kubernetes';
/** What the controller deletes: namespaced kinds with their own storage (events.k8s.io Events are the core ones). */
const CONTENT = RESOURCES.filter((r) => r.namespaced && !r.review && r.group !== 'events.k8s.io');

/** The conditions upstream's namespace controller writes while it drains a namespace. */
export function deletionConditions(
  remaining: Map<string, number>,
  finalizers: Map<string, number>,
  now: string,
): KObj[] {
  const c = (type: string, status: string, reason: string, message: string): KObj => ({
    type,
    status,
    lastTransitionTime: now,
    reason,
    message,
  });
  const left = [...remaining].sort(([a], [b]) => a.localeCompare(b));
  const fins = [...finalizers].sort(([a], [b]) => a.localeCompare(b));
  return [
    c('NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered', 'All resources successfully discovered'),
    c(
      'NamespaceDeletionGroupVersionParsingFailure',
      'False',
      'ParsedGroupVersions',
      'All legacy kube types successfully parsed',
    ),
    c(
      'NamespaceDeletionContentFailure',
      'False',
      'ContentDeleted',
      'All content successfully deleted, may be waiting on finalization',
    ),
    left.length
      ? c(
          'NamespaceContentRemaining',
          'True',
          'SomeResourcesRemain',
          `Some resources are remaining: ${left.map(([r, n]) => `${r} has ${n} resource instances`).join(', ')}`,
        )
      : c('NamespaceContentRemaining', 'False', 'ContentRemoved', 'All content successfully removed'),
    fins.length
      ? c(
          'NamespaceFinalizersRemaining',
          'True',
          'SomeFinalizersRemain',
          `Some content in the namespace has finalizers remaining: ${fins.map(([f, n]) => `${f} in ${n} resource instances`).join(', ')}`,
        )
      : c(
          'NamespaceFinalizersRemaining',
          'False',
          'ContentHasNoFinalizers',
          'All content-preserving finalizers finished',
        ),
  ];
}

export class NamespaceController {
  private readonly namespaces: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    log: Logger,
  ) {
    this.queue = new RetryingQueue('namespace-controller', log, (k) => this.sync(k));
    const enq = (o: KObj): void => {
      if (o.metadata.deletionTimestamp) this.queue.add(o.metadata.name);
    };
    this.namespaces = new Informer(client, {
      path: '/api/v1/namespaces',
      onAdd: enq,
      onUpdate: enq,
      onError: (e) => log.warn(`namespace-controller: namespace watch: ${e.message}`),
    });
  }

  async start(): Promise<void> {
    await this.namespaces.start();
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await this.namespaces.stop();
  }

  private async sync(name: string): Promise<void> {
    const ns = await this.client.get(`/api/v1/namespaces/${name}`).catch((e: unknown) => {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    });
    if (!ns?.metadata.deletionTimestamp || !((ns.spec?.finalizers ?? []) as string[]).includes(NAMESPACE_FINALIZER))
      return;
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    // Custom resources too: one served version of each namespaced definition lists all its objects.
    const custom = [
      ...new Map(
        (await customResources(this.client)).filter((r) => r.namespaced).map((r) => [`${r.group}/${r.resource}`, r]),
      ).values(),
    ];
    // OrderedNamespaceDeletion: pods go first; the rest (the Secrets and ConfigMaps they mount, a NetworkPolicy)
    // only once no pod is left.
    const ordered = [...CONTENT, ...custom].sort(
      (a, b) => Number(b.group === '' && b.resource === 'pods') - Number(a.group === '' && a.resource === 'pods'),
    );
    let podsLeft = false;
    for (const r of ordered) {
      const isPods = r.group === '' && r.resource === 'pods';
      const path = resourcePath(r, name);
      const items = ((await this.client.get(path)).items ?? []) as KObj[];
      if (!items.length) continue;
      if (isPods) podsLeft = true;
      remaining.set(r.group ? `${r.resource}.${r.group}` : r.resource, items.length);
      for (const o of items) {
        for (const f of (o.metadata.finalizers ?? []) as string[]) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
        if (o.metadata.deletionTimestamp || (podsLeft && !isPods)) continue;
        await this.client
          .delete(`${path}/${o.metadata.name}`, { propagationPolicy: 'Background' })
          .catch((e: unknown) => {
            if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
          });
      }
    }
    const conditions = deletionConditions(remaining, finalizers, rfc3339());
    const old = (ns.status?.conditions ?? []) as KObj[];
    const merged = conditions.map((c) => {
      const o = old.find((x) => x.type === c.type);
      return o && o.status === c.status && o.reason === c.reason && o.message === c.message ? o : c;
    });
    if (JSON.stringify(merged) !== JSON.stringify(old))
      await this.client.update(`/api/v1/namespaces/${name}/status`, {
        ...ns,
        status: { ...ns.status, conditions: merged },
      });
    if (remaining.size) {
      this.queue.later(name, 1000);
      return;
    }
    const cur = await this.client.get(`/api/v1/namespaces/${name}`);
    await this.client.update(`/api/v1/namespaces/${name}/finalize`, {
      ...cur,
      spec: {
        ...cur.spec,
        finalizers: ((cur.spec?.finalizers ?? []) as string[]).filter((f) => f !== NAMESPACE_FINALIZER),
      },
    });
  }
}
