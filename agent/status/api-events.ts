// Posts events to the apiserver as core/v1 Events from source kubelet/<node>.
// A repeat of the same event (object, field, type, reason, message) bumps
// count and lastTimestamp on the existing Event instead of creating one.
// Delivery is asynchronous and best effort, as upstream's broadcaster.
import type { KubeClient } from '../../kube/client.js';
import type { Logger } from '../log.js';
import type { EventRecorder, KubeEvent, ObjectRef } from './events.js';
import { rfc3339 } from '../../kube/time.js';

type Obj = Record<string, any>;

export class ApiEventRecorder implements EventRecorder {
  private readonly seen = new Map<string, { name: string; namespace: string; count: number }>();
  private queue: Promise<void> = Promise.resolve();
  posted = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly nodeName: string,
    private readonly log: Logger,
    private readonly next?: EventRecorder,
  ) {}

  event(ref: ObjectRef, type: KubeEvent['type'], reason: string, message: string): void {
    this.next?.event(ref, type, reason, message);
    const at = new Date();
    this.queue = this.queue.then(() => this.send(ref, type, reason, message, at)).catch((e: unknown) => this.log.debug(`event not posted: ${(e as Error).message}`));
  }

  /** Resolves when everything recorded so far has been sent (or dropped). */
  flush(): Promise<void> {
    return this.queue;
  }

  private async send(ref: ObjectRef, type: string, reason: string, message: string, at: Date): Promise<void> {
    const namespace = ref.namespace ?? 'default';
    const key = [ref.kind, namespace, ref.name, ref.uid ?? '', ref.fieldPath ?? '', type, reason, message].join('\u0000');
    const prev = this.seen.get(key);
    if (prev) {
      prev.count++;
      await this.client.patch(`/api/v1/namespaces/${prev.namespace}/events/${prev.name}`, { count: prev.count, lastTimestamp: rfc3339(at) }, 'strategic');
      this.posted++;
      return;
    }
    const name = `${ref.name}.${(BigInt(at.getTime()) * 1_000_000n + BigInt(this.seen.size % 1_000_000)).toString(16)}`;
    const ev: Obj = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { apiVersion: 'v1', kind: ref.kind, name: ref.name, ...(ref.kind === 'Pod' ? { namespace } : {}), ...(ref.uid ? { uid: ref.uid } : {}), ...(ref.fieldPath ? { fieldPath: ref.fieldPath } : {}) },
      reason,
      message,
      type,
      source: { component: 'kubelet', host: this.nodeName },
      reportingComponent: 'kubelet',
      reportingInstance: this.nodeName,
      firstTimestamp: rfc3339(at),
      lastTimestamp: rfc3339(at),
      count: 1,
    };
    await this.client.create(`/api/v1/namespaces/${namespace}/events`, ev);
    this.seen.set(key, { name, namespace, count: 1 });
    if (this.seen.size > 4096) this.seen.delete(this.seen.keys().next().value!); // bounded, oldest first
    this.posted++;
  }
}
