// ttl-after-finished-controller: deletes a finished Job (Complete or Failed)
// ttlSecondsAfterFinished after it finished, with background propagation so
// its pods go with it (upstream pkg/controller/ttlafterfinished).
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { condition } from './job-model.js';
import { RetryingQueue } from './key-queue.js';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

/** When a finished Job with a TTL expires (ms since epoch), or undefined. */
export function expiresAt(job: KObj): number | undefined {
  const ttl = job.spec?.ttlSecondsAfterFinished as number | undefined;
  if (ttl === undefined || ttl === null) return undefined;
  const done = condition(job, 'Complete') ?? condition(job, 'Failed');
  if (!done) return undefined;
  const at = Date.parse(job.status?.completionTime ?? done.lastTransitionTime ?? '');
  return Number.isFinite(at) ? at + ttl * 1000 : undefined;
}

export class TtlAfterFinishedController {
  private readonly jobs: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new RetryingQueue('ttl-after-finished-controller', log, (k) => this.sync(k));
    const enq = (o: KObj): void => {
      if (o.spec?.ttlSecondsAfterFinished !== undefined) this.queue.add(keyOf(o));
    };
    this.jobs = new Informer(client, {
      path: '/apis/batch/v1/jobs',
      onAdd: enq,
      onUpdate: enq,
      onError: (e) => log.warn(`ttl-after-finished-controller: job watch: ${e.message}`),
    });
  }

  async start(): Promise<void> {
    await this.jobs.start();
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await this.jobs.stop();
  }

  private async sync(key: string): Promise<void> {
    const job = this.jobs.cache.get(key);
    if (!job || job.metadata.deletionTimestamp) return;
    const at = expiresAt(job);
    if (at === undefined) return;
    if (at > this.now()) {
      this.queue.later(key, at - this.now() + 50);
      return;
    }
    const [ns, name] = key.split('/') as [string, string];
    // The uid precondition: a new Job of the same name is not deleted in its place.
    await this.client
      .delete(`/apis/batch/v1/namespaces/${ns}/jobs/${name}`, {
        propagationPolicy: 'Background',
        preconditions: { uid: job.metadata.uid },
      })
      .catch((e: unknown) => {
        if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
      });
  }
}
