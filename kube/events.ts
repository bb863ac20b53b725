// Events: the recorder interface, a log-only recorder, and one that posts
// core/v1 Events to an apiserver. Reasons and texts are the callers' and
// follow upstream. A repeat of the same event (object, field, type, reason,
// message) bumps count and lastTimestamp on the existing Event instead of
// creating one, and many different messages for one object and reason fold
// into one, as upstream's correlator. Delivery is asynchronous and best
// effort, as upstream's broadcaster.
import { type KubeApi, KubeApiError } from './client.js';
import type { Logger } from './log.js';
import { rfc3339 } from './time.js';

export interface ObjectRef {
  kind: string;
  /** Defaults to v1 (Pod, Node). */
  apiVersion?: string;
  namespace?: string;
  name: string;
  uid?: string;
  fieldPath?: string;
}

/** Who reports: kubelet/<node>, default-scheduler, node-controller... */
export interface EventSource {
  component: string;
  host?: string;
}

export interface KubeEvent {
  ref: ObjectRef;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  at: Date;
}

export interface EventRecorder {
  event(ref: ObjectRef, type: KubeEvent['type'], reason: string, message: string): void;
}

export class LogEventRecorder implements EventRecorder {
  private readonly listeners = new Set<(e: KubeEvent) => void>();
  constructor(private readonly log: Logger) {}
  event(ref: ObjectRef, type: KubeEvent['type'], reason: string, message: string): void {
    const e: KubeEvent = { ref, type, reason, message, at: new Date() };
    const obj = `${ref.kind.toLowerCase()}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
    (type === 'Warning' ? this.log.warn : this.log.info)(`event ${type} ${reason} ${obj}: ${message}`);
    for (const l of this.listeners) l(e);
  }
  onEvent(fn: (e: KubeEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

type Obj = Record<string, any>;

/** Upstream's event cache size, and its aggregator's window and distinct-message limit. */
const CACHE_SIZE = 4096;
const SIMILAR_WINDOW_MS = 600_000;
const SIMILAR_MAX = 10;

export class ApiEventRecorder implements EventRecorder {
  private readonly seen = new Map<string, { name: string; namespace: string; count: number; first: Date }>();
  private readonly similar = new Map<string, { messages: Set<string>; last: number }>();
  private queue: Promise<void> = Promise.resolve();
  posted = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly source: EventSource,
    private readonly log: Logger,
    private readonly next?: EventRecorder,
  ) {}

  event(ref: ObjectRef, type: KubeEvent['type'], reason: string, message: string): void {
    this.next?.event(ref, type, reason, message);
    const at = new Date();
    this.queue = this.queue
      .then(() => this.send(ref, type, reason, message, at))
      .catch((e: unknown) => this.log.debug(`event not posted: ${(e as Error).message}`));
  }

  /** Resolves when everything recorded so far has been sent (or dropped). */
  flush(): Promise<void> {
    return this.queue;
  }

  /**
   * Upstream's EventAggregator: from the 10th different message within 10
   * minutes for one object, type and reason, they fold into one Event,
   * "(combined from similar events): <latest>", counted like a repeat.
   */
  private aggregate(
    ref: ObjectRef,
    namespace: string,
    type: string,
    reason: string,
    message: string,
    at: Date,
  ): { key: string; message: string } {
    const similar = [
      this.source.component,
      this.source.host ?? '',
      ref.kind,
      namespace,
      ref.name,
      ref.uid ?? '',
      ref.apiVersion ?? 'v1',
      type,
      reason,
    ].join('\u0000');
    let r = this.similar.get(similar);
    if (!r || at.getTime() - r.last > SIMILAR_WINDOW_MS) r = { messages: new Set(), last: 0 };
    this.similar.delete(similar); // kept in least-recently-used order
    this.similar.set(similar, r);
    if (this.similar.size > CACHE_SIZE) this.similar.delete(this.similar.keys().next().value!);
    r.last = at.getTime();
    r.messages.add(message);
    if (r.messages.size < SIMILAR_MAX) return { key: [similar, ref.fieldPath ?? '', message].join('\u0000'), message };
    r.messages.delete(r.messages.values().next().value!);
    return { key: similar, message: `(combined from similar events): ${message}` };
  }

  private async send(ref: ObjectRef, type: string, reason: string, original: string, at: Date): Promise<void> {
    const namespace = ref.namespace ?? 'default';
    const { key, message } = this.aggregate(ref, namespace, type, reason, original, at);
    const prev = this.seen.get(key);
    if (prev) {
      prev.count++;
      try {
        await this.client.patch(
          `/api/v1/namespaces/${prev.namespace}/events/${prev.name}`,
          { count: prev.count, lastTimestamp: rfc3339(at), message },
          'strategic',
        );
        this.posted++;
        return;
      } catch (e) {
        // The Event expired (--event-ttl) or was deleted: create it again, as upstream's recorder does.
        if (!(e instanceof KubeApiError && e.code === 404)) throw e;
        this.seen.delete(key);
      }
    }
    const name = `${ref.name}.${(BigInt(at.getTime()) * 1_000_000n + BigInt(this.seen.size % 1_000_000)).toString(16)}`;
    const ev: Obj = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: ref.apiVersion ?? 'v1',
        kind: ref.kind,
        name: ref.name,
        ...(ref.namespace ? { namespace } : {}),
        ...(ref.uid ? { uid: ref.uid } : {}),
        ...(ref.fieldPath ? { fieldPath: ref.fieldPath } : {}),
      },
      reason,
      message,
      type,
      source: { component: this.source.component, ...(this.source.host ? { host: this.source.host } : {}) },
      reportingComponent: this.source.component,
      reportingInstance: this.source.host ?? this.source.component,
      firstTimestamp: rfc3339(prev?.first ?? at),
      lastTimestamp: rfc3339(at),
      count: prev?.count ?? 1,
    };
    await this.client.create(`/api/v1/namespaces/${namespace}/events`, ev);
    this.seen.set(key, { name, namespace, count: ev.count, first: prev?.first ?? at });
    if (this.seen.size > CACHE_SIZE) this.seen.delete(this.seen.keys().next().value!); // bounded, oldest first
    this.posted++;
  }
}
