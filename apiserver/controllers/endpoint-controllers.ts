// The endpointslice-controller and the endpoints-controller: both watch
// Services and Pods and keep, for each Service with a selector, its
// EndpointSlices (kubernetes.io/service-name, managed-by the controller,
// owned by the Service) or its legacy Endpoints object up to date.
import type { KObj, KubeApi } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { KubeApiError } from '../../kube/client.js';
import { desiredSlices, desiredSubsets, type SliceContent } from './endpoints-model.js';
import { KeyQueue } from './key-queue.js';

export const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const SLICE_CONTROLLER = 'endpointslice-controller.k8s.io';
export const SERVICE_NAME = 'kubernetes.io/service-name';
export const TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

/** Services and pods in, one reconcile per changed Service out (serialized, coalesced). */
abstract class ServiceEndpointsController {
  protected readonly services: Informer;
  protected readonly pods: Informer;
  /** Service keys, with when their change was first seen (the change trigger time). */
  private readonly queue = new KeyQueue<number>(async (key, at) => {
    try {
      await this.reconcile(key, this.services.cache.get(key), at);
      this.syncs++;
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409)) this.log.warn(`${this.name}: ${key}: ${(e as Error).message}; retrying`);
      setTimeout(() => this.enqueue(key), 1000).unref();
    }
  });
  syncs = 0;

  constructor(
    protected readonly client: KubeApi,
    protected readonly log: Logger,
    readonly name: string,
  ) {
    const onErr = (what: string) => (e: Error) => log.warn(`${name}: ${what} watch: ${e.message}`);
    this.services = new Informer(client, { path: '/api/v1/services', onAdd: (s) => this.enqueue(keyOf(s)), onUpdate: (s) => this.enqueue(keyOf(s)), onDelete: (s) => this.enqueue(keyOf(s)), onError: onErr('service') });
    this.pods = new Informer(client, { path: '/api/v1/pods', onAdd: (p) => this.onPod(p), onUpdate: (p, old) => this.onPod(p, old), onDelete: (p) => this.onPod(p), onError: onErr('pod') });
  }

  protected extraInformers(): Informer[] {
    return [];
  }

  async start(): Promise<void> {
    await Promise.all([this.services.start(), this.pods.start(), ...this.extraInformers().map((i) => i.start())]);
    for (const s of this.services.list()) this.enqueue(keyOf(s));
  }

  async stop(): Promise<void> {
    await Promise.all([this.services.stop(), this.pods.stop(), ...this.extraInformers().map((i) => i.stop())]);
  }

  /** The Services whose selector matches the pod now or before: their endpoints may change. */
  private onPod(p: KObj, old?: KObj): void {
    for (const s of this.services.list()) {
      if (s.metadata.namespace !== p.metadata.namespace || !s.spec?.selector) continue;
      const sel = Object.entries(s.spec.selector as Record<string, string>);
      const matches = (o?: KObj): boolean => !!o && sel.length > 0 && sel.every(([k, v]) => o.metadata.labels?.[k] === v);
      if (matches(p) || matches(old)) this.enqueue(keyOf(s));
    }
  }

  protected enqueue(key: string): void {
    this.queue.add(key, Date.now());
  }

  protected abstract reconcile(key: string, svc: KObj | undefined, triggeredAt: number): Promise<void>;
}

const sameContent = (slice: KObj, want: SliceContent): boolean => JSON.stringify(slice.ports ?? []) === JSON.stringify(want.ports) && JSON.stringify(slice.endpoints ?? []) === JSON.stringify(want.endpoints);

export class EndpointSliceController extends ServiceEndpointsController {
  private readonly slices: Informer;

  constructor(client: KubeApi, log: Logger) {
    super(client, log, 'endpointslice-controller');
    const onSlice = (s: KObj): void => {
      const svc = s.metadata.labels?.[SERVICE_NAME];
      if (svc) this.enqueue(`${s.metadata.namespace}/${svc}`);
    };
    this.slices = new Informer(client, { path: '/apis/discovery.k8s.io/v1/endpointslices', labelSelector: `${MANAGED_BY}=${SLICE_CONTROLLER}`, onUpdate: onSlice, onDelete: onSlice, onError: (e) => log.warn(`endpointslice-controller: slice watch: ${e.message}`) });
  }

  protected override extraInformers(): Informer[] {
    return [this.slices];
  }

  private owned(ns: string, svcName: string): KObj[] {
    return this.slices.list().filter((s) => s.metadata.namespace === ns && s.metadata.labels?.[SERVICE_NAME] === svcName);
  }

  protected async reconcile(key: string, svc: KObj | undefined, triggeredAt: number): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const have = this.owned(ns, name);
    const base = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    if (!svc || !svc.spec?.selector || svc.spec.type === 'ExternalName') {
      for (const s of have) await this.client.delete(`${base}/${s.metadata.name}`).catch((e: Error) => this.log.debug(`delete slice ${s.metadata.name}: ${e.message}`));
      return;
    }
    const want = desiredSlices(svc, this.pods.list());
    const trigger = new Date(triggeredAt).toISOString();
    const meta = (extra: KObj = {}): KObj => ({
      ...extra,
      labels: { ...(svc.metadata.labels ?? {}), [SERVICE_NAME]: name, [MANAGED_BY]: SLICE_CONTROLLER },
      annotations: { [TRIGGER_TIME]: trigger },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true }],
    });
    // Keep slices whose content is already right; reuse the others for what is missing, then create or delete.
    const unmatched = [...have];
    const todo: SliceContent[] = [];
    for (const w of want) {
      const i = unmatched.findIndex((s) => sameContent(s, w));
      if (i >= 0) unmatched.splice(i, 1);
      else todo.push(w);
    }
    for (const w of todo) {
      const reuse = unmatched.shift();
      const body = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4', ports: w.ports, endpoints: w.endpoints };
      if (reuse) await this.client.update(`${base}/${reuse.metadata.name}`, { ...body, metadata: meta({ name: reuse.metadata.name, namespace: ns, resourceVersion: reuse.metadata.resourceVersion }) });
      else await this.client.create(base, { ...body, metadata: meta({ generateName: `${name}-`, namespace: ns }) });
    }
    for (const s of unmatched) await this.client.delete(`${base}/${s.metadata.name}`).catch((e: Error) => this.log.debug(`delete slice ${s.metadata.name}: ${e.message}`));
  }
}

export class EndpointsController extends ServiceEndpointsController {
  constructor(client: KubeApi, log: Logger) {
    super(client, log, 'endpoints-controller');
  }

  protected async reconcile(key: string, svc: KObj | undefined, triggeredAt: number): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const path = `/api/v1/namespaces/${ns}/endpoints/${name}`;
    const cur = await this.client.get(path).catch((e: unknown) => {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    });
    if (!svc) {
      if (cur) await this.client.delete(path).catch(() => undefined);
      return;
    }
    if (!svc.spec?.selector) return; // Endpoints of selector-less Services belong to their users
    const subsets = desiredSubsets(svc, this.pods.list());
    if (cur && JSON.stringify(cur.subsets ?? []) === JSON.stringify(subsets)) return;
    const labels = { ...(svc.metadata.labels ?? {}), ...(svc.spec.clusterIP === 'None' ? { 'service.kubernetes.io/headless': '' } : {}) };
    const metadata = { name, namespace: ns, labels, annotations: { [TRIGGER_TIME]: new Date(triggeredAt).toISOString() } };
    if (cur) await this.client.update(path, { apiVersion: 'v1', kind: 'Endpoints', metadata: { ...metadata, resourceVersion: cur.metadata.resourceVersion }, subsets });
    else await this.client.create(`/api/v1/namespaces/${ns}/endpoints`, { apiVersion: 'v1', kind: 'Endpoints', metadata, subsets });
  }
}
