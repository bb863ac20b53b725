// The endpointslice-controller and the endpoints-controller: both watch
// Services and Pods and keep, for each Service with a selector, its
// EndpointSlices (kubernetes.io/service-name, managed-by the controller,
// owned by the Service) or its legacy Endpoints object up to date.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import {
  desiredSlices,
  desiredSubsets,
  MAX_ENDPOINTS_PER_SLICE,
  serviceAddressTypes,
  type SliceContent,
} from './endpoints-model.js';
import { KeyQueue } from './key-queue.js';
import { LabelIndex, SelectorIndex } from './label-index.js';

export const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const SLICE_CONTROLLER = 'endpointslice-controller.k8s.io';
export const SERVICE_NAME = 'kubernetes.io/service-name';
export const TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
export const HEADLESS = 'service.kubernetes.io/headless';

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
      if (!(e instanceof KubeApiError && e.code === 409))
        this.log.warn(`${this.name}: ${key}: ${(e as Error).message}; retrying`);
      setTimeout(() => this.enqueue(key), 1000).unref();
    }
  });
  syncs = 0;
  /** Service selectors and pod labels, indexed: a pod change and a reconcile cost what they touch, not the cluster. */
  private readonly selectors = new SelectorIndex();
  private readonly podLabels = new LabelIndex();

  constructor(
    protected readonly client: KubeApi,
    protected readonly log: Logger,
    readonly name: string,
  ) {
    const onErr = (what: string) => (e: Error) => log.warn(`${name}: ${what} watch: ${e.message}`);
    const onService = (s: KObj, deleted = false): void => {
      if (deleted) this.selectors.delete(keyOf(s));
      else this.selectors.set(keyOf(s), s.metadata.namespace, s.spec?.selector as Record<string, string> | undefined);
      this.enqueue(keyOf(s));
    };
    this.services = new Informer(client, {
      path: '/api/v1/services',
      onAdd: (s) => onService(s),
      onUpdate: (s) => onService(s),
      onDelete: (s) => onService(s, true),
      onError: onErr('service'),
    });
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      onAdd: (p) => this.onPod(p),
      onUpdate: (p, old) => this.onPod(p, old),
      onDelete: (p) => this.onPod(p, undefined, true),
      onError: onErr('pod'),
    });
  }

  /** The pods a Service's selector picks, from the index. */
  protected selectedPods(svc: KObj): KObj[] {
    const sel = (svc.spec?.selector ?? {}) as Record<string, string>;
    if (!Object.keys(sel).length) return [];
    return this.podLabels
      .select(svc.metadata.namespace, sel)
      .map((k) => this.pods.cache.get(k))
      .filter((p): p is KObj => !!p);
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
  private onPod(p: KObj, old?: KObj, deleted = false): void {
    const ns = p.metadata.namespace;
    if (deleted) this.podLabels.delete(keyOf(p));
    else this.podLabels.set(keyOf(p), ns, p.metadata.labels);
    const keys = new Set(this.selectors.matching(ns, p.metadata.labels));
    if (old) for (const k of this.selectors.matching(ns, old.metadata.labels)) keys.add(k);
    for (const k of keys) this.enqueue(k);
  }

  protected enqueue(key: string): void {
    this.queue.add(key, Date.now());
  }

  protected abstract reconcile(key: string, svc: KObj | undefined, triggeredAt: number): Promise<void>;
}

const sameContent = (slice: KObj, want: SliceContent): boolean =>
  slice.addressType === want.addressType &&
  JSON.stringify(slice.ports ?? []) === JSON.stringify(want.ports) &&
  JSON.stringify(slice.endpoints ?? []) === JSON.stringify(want.endpoints);

export class EndpointSliceController extends ServiceEndpointsController {
  private readonly slices: Informer;
  /** Our slices by the Service they belong to ("ns/name"). */
  private readonly slicesOf = new Map<string, Set<string>>();
  /** The Service each indexed slice was filed under. */
  private readonly sliceService = new Map<string, string>();

  constructor(client: KubeApi, log: Logger) {
    super(client, log, 'endpointslice-controller');
    const index = (s: KObj, deleted = false): string | undefined => {
      const key = keyOf(s);
      const was = this.sliceService.get(key);
      if (was) this.slicesOf.get(was)?.delete(key);
      this.sliceService.delete(key);
      const svc = s.metadata.labels?.[SERVICE_NAME];
      if (!svc || deleted) return svc ? `${s.metadata.namespace}/${svc}` : undefined;
      const owner = `${s.metadata.namespace}/${svc}`;
      let set = this.slicesOf.get(owner);
      if (!set) this.slicesOf.set(owner, (set = new Set()));
      set.add(key);
      this.sliceService.set(key, owner);
      return owner;
    };
    const onSlice = (s: KObj, deleted = false): void => {
      const owner = index(s, deleted);
      if (owner) this.enqueue(owner);
    };
    this.slices = new Informer(client, {
      path: '/apis/discovery.k8s.io/v1/endpointslices',
      labelSelector: `${MANAGED_BY}=${SLICE_CONTROLLER}`,
      onAdd: (s) => void index(s),
      onUpdate: (s) => onSlice(s),
      onDelete: (s) => onSlice(s, true),
      onError: (e) => log.warn(`endpointslice-controller: slice watch: ${e.message}`),
    });
  }

  protected override extraInformers(): Informer[] {
    return [this.slices];
  }

  private owned(ns: string, svcName: string): KObj[] {
    return [...(this.slicesOf.get(`${ns}/${svcName}`) ?? [])]
      .map((k) => this.slices.cache.get(k))
      .filter((s): s is KObj => !!s);
  }

  protected async reconcile(key: string, svc: KObj | undefined, triggeredAt: number): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const have = this.owned(ns, name);
    const base = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    if (!svc || !svc.spec?.selector || svc.spec.type === 'ExternalName') {
      for (const s of have)
        await this.client
          .delete(`${base}/${s.metadata.name}`)
          .catch((e: Error) => this.log.debug(`delete slice ${s.metadata.name}: ${e.message}`));
      return;
    }
    const pods = this.selectedPods(svc);
    // One set of slices per IP family of the Service (a dual-stack one has IPv4 and IPv6 slices).
    const want = serviceAddressTypes(svc).flatMap((t) => desiredSlices(svc, pods, MAX_ENDPOINTS_PER_SLICE, t));
    const trigger = new Date(triggeredAt).toISOString();
    // Upstream's slice labels: the Service's own, the service name, managed-by, and headless for clusterIP None.
    const labels: Record<string, string> = {
      ...(svc.metadata.labels ?? {}),
      [SERVICE_NAME]: name,
      [MANAGED_BY]: SLICE_CONTROLLER,
      ...(svc.spec.clusterIP === 'None' ? { [HEADLESS]: '' } : {}),
    };
    const sameLabels = (s: KObj): boolean =>
      JSON.stringify(Object.entries(s.metadata.labels ?? {}).sort()) === JSON.stringify(Object.entries(labels).sort());
    const meta = (extra: KObj = {}): KObj => ({
      ...extra,
      labels,
      annotations: { [TRIGGER_TIME]: trigger },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Service', name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    });
    // Keep slices whose content is already right; reuse the others for what is missing, then create or delete.
    const unmatched = [...have];
    const todo: SliceContent[] = [];
    for (const w of want) {
      const i = unmatched.findIndex((s) => sameContent(s, w) && sameLabels(s));
      if (i >= 0) unmatched.splice(i, 1);
      else todo.push(w);
    }
    for (const w of todo) {
      // addressType is immutable: only a slice of the same type is reused.
      const at = unmatched.findIndex((s) => s.addressType === w.addressType);
      const reuse = at >= 0 ? unmatched.splice(at, 1)[0] : undefined;
      const body = {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        addressType: w.addressType,
        ports: w.ports,
        endpoints: w.endpoints,
      };
      if (reuse)
        await this.client.update(`${base}/${reuse.metadata.name}`, {
          ...body,
          metadata: meta({ name: reuse.metadata.name, namespace: ns, resourceVersion: reuse.metadata.resourceVersion }),
        });
      else await this.client.create(base, { ...body, metadata: meta({ generateName: `${name}-`, namespace: ns }) });
    }
    for (const s of unmatched)
      await this.client
        .delete(`${base}/${s.metadata.name}`)
        .catch((e: Error) => this.log.debug(`delete slice ${s.metadata.name}: ${e.message}`));
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
    const subsets = desiredSubsets(svc, this.selectedPods(svc));
    if (cur && JSON.stringify(cur.subsets ?? []) === JSON.stringify(subsets)) return;
    const labels = { ...(svc.metadata.labels ?? {}), ...(svc.spec.clusterIP === 'None' ? { [HEADLESS]: '' } : {}) };
    const metadata = {
      name,
      namespace: ns,
      labels,
      annotations: { [TRIGGER_TIME]: new Date(triggeredAt).toISOString() },
    };
    if (cur)
      await this.client.update(path, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { ...metadata, resourceVersion: cur.metadata.resourceVersion },
        subsets,
      });
    else
      await this.client.create(`/api/v1/namespaces/${ns}/endpoints`, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata,
        subsets,
      });
  }
}
