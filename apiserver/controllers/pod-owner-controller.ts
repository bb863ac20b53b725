// What the controllers that own pods directly (ReplicaSet, DaemonSet,
// StatefulSet) share: an informer on their own kind and one on pods, a pod
// change waking its owner (or, for an orphan, every owner of its namespace,
// which may adopt it), and a retrying queue of owner keys for `sync`.
import type { KObj, KubeApi } from '../../kube/client.js';
import { Informer, type InformerOptions } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { RetryingQueue } from './key-queue.js';
import { controllerRef } from './workload-model.js';

export const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

export abstract class PodOwnerController {
  protected readonly owners: Informer;
  protected readonly pods: Informer;
  protected readonly queue: RetryingQueue;
  private readonly more: Informer[] = [];

  constructor(
    protected readonly client: KubeApi,
    protected readonly log: Logger,
    private readonly name: string,
    private readonly kind: string,
    ownerPath: string,
  ) {
    this.queue = new RetryingQueue(name, log, (k) => this.sync(k));
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    this.owners = new Informer(client, {
      path: ownerPath,
      onAdd: enq,
      onUpdate: enq,
      onDelete: enq,
      onError: this.onError(kind.toLowerCase()),
    });
    const pod = (p: KObj): void => this.onPod(p);
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      onAdd: pod,
      onUpdate: pod,
      onDelete: pod,
      onError: this.onError('pod'),
    });
  }

  protected abstract sync(key: string): Promise<void>;

  protected onError(what: string): (e: Error) => void {
    return (e) => this.log.warn(`${this.name}: ${what} watch: ${e.message}`);
  }

  /** Another informer the controller needs (started and stopped with the rest). */
  protected watch(o: InformerOptions): Informer {
    const i = new Informer(this.client, o);
    this.more.push(i);
    return i;
  }

  /** Every owner, e.g. when a Node changes. */
  protected enqueueAll(): void {
    for (const o of this.owners.list()) this.queue.add(keyOf(o));
  }

  private onPod(p: KObj): void {
    const ref = controllerRef(p);
    if (ref?.kind === this.kind) this.queue.add(`${p.metadata.namespace}/${ref.name}`);
    else if (!ref)
      for (const o of this.owners.list()) if (o.metadata.namespace === p.metadata.namespace) this.queue.add(keyOf(o));
  }

  async start(): Promise<void> {
    await Promise.all([this.owners.start(), this.pods.start(), ...this.more.map((i) => i.start())]);
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.owners.stop(), this.pods.stop(), ...this.more.map((i) => i.stop())]);
  }
}
