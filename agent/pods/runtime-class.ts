// RuntimeClass → CRI runtime handler (upstream's kubelet runtimeclass
// manager). The informer starts with the first pod that names a class, so a
// node whose pods name none keeps no watch. A class the cache does not have
// yet is read live once (the cache may lag a class created a moment ago).
import type { Pod } from 'kubernetes-types/core/v1.js';

import { type KubeApi, KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';

const PATH = '/apis/node.k8s.io/v1/runtimeclasses';

export class RuntimeClasses {
  private informer: Informer | undefined;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
  ) {}

  /** The handler for the pod's sandbox: '' (the runtime's default) without a runtimeClassName. Throws what upstream reports in FailedCreatePodSandBox. */
  async handlerFor(pod: Pod): Promise<string> {
    const name = pod.spec?.runtimeClassName;
    if (!name) return '';
    if (!this.informer) {
      this.informer = new Informer(this.client, {
        path: PATH,
        transform: (o) => ({ metadata: { name: o.metadata?.name }, handler: o.handler }),
        onError: (e) => this.log.warn(`runtimeclass watch: ${e.message}`),
      });
      void this.informer.start().catch(() => undefined);
    }
    const cached = this.informer.cache.get(`/${name}`);
    if (cached) return String(cached.handler ?? '');
    try {
      return String((await this.client.get(`${PATH}/${encodeURIComponent(name)}`)).handler ?? '');
    } catch (e) {
      if (e instanceof KubeApiError && e.code === 404)
        throw new Error(`runtimeclass.node.k8s.io ${JSON.stringify(name)} not found`, { cause: e });
      throw new Error(`failed to lookup RuntimeClass ${name}: ${(e as Error).message}`, { cause: e });
    }
  }

  async stop(): Promise<void> {
    await this.informer?.stop();
  }
}
