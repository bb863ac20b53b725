// What the built-in controllers keyed by one kind share: an informer on that
// kind feeding a retrying queue of "namespace/name" keys for `sync`, any
// other informers they watch (started and stopped with it), and every object
// of the kind queued once at start.
import type { KObj, KubeApi } from '../../kube/client.js';
import { Informer, type InformerOptions } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { RetryingQueue } from './key-queue.js';

export const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

export abstract class KeyedController {
  protected readonly primary: Informer;
  protected readonly queue: RetryingQueue;
  private readonly more: Informer[] = [];

  /** `onDelete`: whether a deleted object is queued too (its sync finds it gone). */
  constructor(
    protected readonly client: KubeApi,
    protected readonly log: Logger,
    private readonly name: string,
    kind: string,
    path: string,
    onDelete = false,
  ) {
    this.queue = new RetryingQueue(name, log, (k) => this.sync(k));
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    this.primary = new Informer(client, { path, onAdd: enq, onUpdate: enq, ...(onDelete ? { onDelete: enq } : {}), onError: this.onError(kind.toLowerCase()) });
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

  /** Every object of the kind, e.g. when a Node changes. */
  protected enqueueAll(): void {
    for (const o of this.primary.list()) this.queue.add(keyOf(o));
  }

  async start(): Promise<void> {
    await Promise.all([this.primary.start(), ...this.more.map((i) => i.start())]);
    this.enqueueAll();
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.primary.stop(), ...this.more.map((i) => i.stop())]);
  }
}
