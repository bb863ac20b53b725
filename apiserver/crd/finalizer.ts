// The apiserver's CRD finalizer (upstream apiextensions-apiserver's
// finalizer controller): a CustomResourceDefinition being deleted keeps its
// `customresourcecleanup.apiextensions.k8s.io` finalizer, with a Terminating
// condition, until every object of it is gone; then the finalizer goes and
// so do the definition and its endpoints.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { resourcePath } from '../controllers/garbage-collector.js';
import { RetryingQueue } from '../controllers/key-queue.js';
import { CLEANUP_FINALIZER, crdStatus, servedResources } from './definition.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const gone = (e: unknown): undefined => {
  if (e instanceof KubeApiError && e.code === 404) return undefined;
  throw e;
};

export class CrdFinalizer {
  private readonly crds: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    log: Logger,
  ) {
    this.queue = new RetryingQueue('crd-finalizer', log, (k) => this.sync(k));
    const enq = (o: KObj): void => {
      if (o.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER))
        this.queue.add(o.metadata.name);
    };
    this.crds = new Informer(client, {
      path: CRDS,
      onAdd: enq,
      onUpdate: enq,
      onError: (e) => log.warn(`crd-finalizer: watch: ${e.message}`),
    });
  }

  async start(): Promise<void> {
    await this.crds.start();
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await this.crds.stop();
  }

  private async sync(name: string): Promise<void> {
    let crd = await this.client.get(`${CRDS}/${name}`).catch(gone);
    if (!crd?.metadata.deletionTimestamp || !(crd.metadata.finalizers ?? []).includes(CLEANUP_FINALIZER)) return;
    if (!((crd.status?.conditions ?? []) as KObj[]).some((c) => c.type === 'Terminating' && c.status === 'True')) {
      crd = await this.client.update(`${CRDS}/${name}/status`, { ...crd, status: crdStatus(crd, [], rfc3339()) });
    }
    // Any served version lists them all: with conversion None they differ only in apiVersion.
    const r = servedResources(crd)[0];
    if (r) {
      const items = ((await this.client.get(resourcePath(r)))?.items ?? []) as KObj[];
      for (const o of items)
        if (!o.metadata.deletionTimestamp)
          await this.client.delete(`${resourcePath(r, o.metadata.namespace, o.metadata.name)}`).catch(gone);
      if (((await this.client.get(resourcePath(r)))?.items ?? []).length) {
        this.queue.later(name, 1000);
        return;
      }
    }
    const cur = await this.client.get(`${CRDS}/${name}`).catch(gone);
    if (!cur) return;
    await this.client.update(`${CRDS}/${name}`, {
      ...cur,
      metadata: {
        ...cur.metadata,
        finalizers: ((cur.metadata.finalizers ?? []) as string[]).filter((f) => f !== CLEANUP_FINALIZER),
      },
    });
  }
}
