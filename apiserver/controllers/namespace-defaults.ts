// Two per-namespace controllers of kube-controller-manager: the
// serviceaccount-controller keeps a "default" ServiceAccount in every
// namespace, and the root-ca-certificate-publisher-controller keeps the
// kube-root-ca.crt ConfigMap (the cluster CA, for in-cluster clients).
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { ROOT_CA_CONFIGMAP } from '../admission/service-account.js';
import { KeyQueue } from './key-queue.js';

const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/** Watches namespaces and one kind of object in them; ensures each active namespace has what `ensure` makes. */
abstract class PerNamespace {
  private readonly namespaces: Informer;
  private readonly objects: Informer;
  private readonly queue = new KeyQueue<undefined>(async (ns) => {
    const n = this.namespaces.cache.get(ns) ?? this.namespaces.list().find((x) => x.metadata.name === ns);
    if (!n || n.metadata.deletionTimestamp) return;
    try {
      await this.ensure(ns);
    } catch (e) {
      if (!(e instanceof KubeApiError && (e.code === 409 || e.code === 404)))
        this.log.warn(`${this.name}: ${ns}: ${(e as Error).message}; retrying`);
      setTimeout(() => this.queue.add(ns, undefined), 2000).unref();
    }
  });

  constructor(
    protected readonly client: KubeApi,
    protected readonly log: Logger,
    readonly name: string,
    objectsPath: string,
    fieldSelector: string,
  ) {
    const onErr = (e: Error) => log.warn(`${name}: watch: ${e.message}`);
    const byName = (o: KObj): void => this.queue.add(o.metadata.name, undefined);
    const byNs = (o: KObj): void => this.queue.add(o.metadata.namespace, undefined);
    this.namespaces = new Informer(client, { path: '/api/v1/namespaces', onAdd: byName, onError: onErr });
    this.objects = new Informer(client, {
      path: objectsPath,
      fieldSelector,
      onUpdate: byNs,
      onDelete: byNs,
      onError: onErr,
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.namespaces.start(), this.objects.start()]);
    for (const n of this.namespaces.list()) this.queue.add(n.metadata.name, undefined);
  }

  async stop(): Promise<void> {
    await Promise.all([this.namespaces.stop(), this.objects.stop()]);
  }

  protected async current(path: string): Promise<KObj | undefined> {
    return this.client.get(path).catch((e: unknown) => {
      if (e instanceof KubeApiError && e.code === 404) return undefined;
      throw e;
    });
  }

  protected abstract ensure(ns: string): Promise<void>;
}

export class ServiceAccountController extends PerNamespace {
  constructor(client: KubeApi, log: Logger) {
    super(client, log, 'serviceaccount-controller', '/api/v1/serviceaccounts', 'metadata.name=default');
  }

  protected async ensure(ns: string): Promise<void> {
    if (await this.current(`/api/v1/namespaces/${ns}/serviceaccounts/default`)) return;
    await this.client.create(`/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default' },
    });
  }
}

export class RootCaPublisher extends PerNamespace {
  constructor(
    client: KubeApi,
    log: Logger,
    private readonly caPem: string,
  ) {
    super(
      client,
      log,
      'root-ca-certificate-publisher-controller',
      '/api/v1/configmaps',
      `metadata.name=${ROOT_CA_CONFIGMAP}`,
    );
  }

  protected async ensure(ns: string): Promise<void> {
    const path = `/api/v1/namespaces/${ns}/configmaps/${ROOT_CA_CONFIGMAP}`;
    const cur = await this.current(path);
    const want = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: ROOT_CA_CONFIGMAP, annotations: { 'kubernetes.io/description': DESCRIPTION } },
      data: { 'ca.crt': this.caPem },
    };
    if (!cur) await this.client.create(`/api/v1/namespaces/${ns}/configmaps`, want);
    else if (cur.data?.['ca.crt'] !== this.caPem)
      await this.client.update(path, {
        ...cur,
        data: want.data,
        metadata: {
          ...cur.metadata,
          annotations: { ...(cur.metadata.annotations ?? {}), ...want.metadata.annotations },
        },
      });
  }
}
