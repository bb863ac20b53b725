// resourcequota-controller: each ResourceQuota's status — hard as its spec,
// used as the namespace's objects add up (resource-quota.ts's evaluators) —
// kept current when quotas or pods change, and every resync period for the
// other kinds a quota may count.
import type { KObj, KubeApi } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { kindsTracked, namespaceUsage } from '../admission/resource-quota.js';
import { apiVersionOf, RESOURCES } from '../resources.js';
import { RetryingQueue } from './key-queue.js';
import { notFoundOk } from './workload-model.js';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

export class ResourceQuotaController {
  private readonly quotas: Informer;
  private readonly pods: Informer;
  private readonly queue: RetryingQueue;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: KubeApi,
    log: Logger,
    private readonly resyncMs = 10_000,
  ) {
    this.queue = new RetryingQueue('resourcequota-controller', log, (k) => this.sync(k));
    const onErr = (what: string) => (e: Error) => log.warn(`resourcequota-controller: ${what} watch: ${e.message}`);
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    const namespace = (o: KObj): void =>
      this.quotas
        .list()
        .filter((q) => q.metadata.namespace === o.metadata.namespace)
        .forEach(enq);
    this.quotas = new Informer(client, {
      path: '/api/v1/resourcequotas',
      onAdd: enq,
      onUpdate: (q, old) => (q.metadata.generation !== old.metadata.generation || !q.status?.used) && enq(q),
      onError: onErr('quota'),
    });
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      onAdd: namespace,
      onUpdate: (p, old) => p.status?.phase !== old.status?.phase && namespace(p),
      onDelete: namespace,
      onError: onErr('pod'),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.quotas.start(), this.pods.start()]);
    for (const q of this.quotas.list()) this.queue.add(keyOf(q));
    this.timer = setInterval(() => this.quotas.list().forEach((q) => this.queue.add(keyOf(q))), this.resyncMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.queue.stop();
    await Promise.all([this.quotas.stop(), this.pods.stop()]);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const q = await this.client.get(`/api/v1/namespaces/${ns}/resourcequotas/${name}`).catch(notFoundOk);
    if (!q || q.metadata.deletionTimestamp) return;
    const hard = (q.spec?.hard ?? {}) as Record<string, string>;
    const objects = [];
    for (const { resource, group } of kindsTracked(hard)) {
      const def = RESOURCES.find((r) => r.resource === resource && r.group === group);
      if (!def) continue;
      const prefix = def.group ? `/apis/${apiVersionOf(def)}` : '/api/v1';
      objects.push({
        resource,
        group,
        items: (await this.client.get(`${prefix}/namespaces/${ns}/${resource}`)).items as KObj[],
      });
    }
    const status = { hard: { ...hard }, used: namespaceUsage(hard, objects, q) };
    if (JSON.stringify(status) === JSON.stringify(q.status ?? {})) return;
    await this.client.update(`/api/v1/namespaces/${ns}/resourcequotas/${name}/status`, { ...q, status });
  }
}
