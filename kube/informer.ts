// A list+watch informer: lists, then watches from the list's resourceVersion
// with bookmarks; relists on 410 Expired; reconnects with jittered backoff on
// errors; and guards against a hung connection with a client-side deadline.
// resourceVersions are opaque: they are only passed back, never compared.
import { type KObj, type KubeApi, KubeApiError } from './client.js';

export interface InformerOptions {
  /** Collection path, e.g. /api/v1/pods or /api/v1/namespaces/default/pods */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Server-side watch timeout bounds, in seconds (client-go picks 5-10 min). */
  minWatchSec?: number;
  maxWatchSec?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  onAdd?: (o: KObj) => void;
  onUpdate?: (o: KObj, old: KObj) => void;
  onDelete?: (o: KObj) => void;
  onError?: (e: Error) => void;
  /** Applied to every object before it is cached or handed on (client-go's SetTransform): keep only what the consumer reads, to save memory. */
  transform?: (o: KObj) => KObj;
  /** Start from a known state (e.g. after a long disconnect) and watch from its RV instead of listing. */
  resume?: { resourceVersion: string; items: KObj[] };
}

const keyOf = (o: KObj): string => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

export class Informer {
  readonly cache = new Map<string, KObj>();
  resourceVersion = '';
  lists = 0;
  watches = 0;
  private stopped = false;
  private abort: AbortController | undefined;
  private synced!: Promise<void>;
  private markSynced!: () => void;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: KubeApi,
    private readonly o: InformerOptions,
  ) {
    this.synced = new Promise((r) => (this.markSynced = r));
  }

  /** Starts; resolves after the first list is in the cache. */
  start(): Promise<void> {
    this.loop = this.run();
    return this.synced;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    await this.loop?.catch(() => undefined);
  }

  list(): KObj[] {
    return [...this.cache.values()];
  }

  private sel(): Record<string, string | undefined> {
    return { labelSelector: this.o.labelSelector, fieldSelector: this.o.fieldSelector };
  }

  private async relist(): Promise<void> {
    const l = await this.client.get(this.o.path, this.sel());
    this.lists++;
    const fresh = new Map<string, KObj>();
    const t = this.o.transform;
    for (const item of (l.items ?? []) as KObj[]) fresh.set(keyOf(item), t ? t(item) : item);
    for (const [k, old] of this.cache)
      if (!fresh.has(k)) {
        this.cache.delete(k);
        this.o.onDelete?.(old);
      }
    for (const [k, o] of fresh) {
      const old = this.cache.get(k);
      this.cache.set(k, o);
      if (!old) this.o.onAdd?.(o);
      else if (old.metadata?.resourceVersion !== o.metadata?.resourceVersion) this.o.onUpdate?.(o, old);
    }
    this.resourceVersion = l.metadata?.resourceVersion ?? '';
    this.markSynced();
  }

  private apply(type: string, obj: KObj): void {
    const o = this.o.transform ? this.o.transform(obj) : obj;
    const k = keyOf(o);
    const old = this.cache.get(k);
    if (type === 'DELETED') {
      this.cache.delete(k);
      this.o.onDelete?.(o);
    } else {
      this.cache.set(k, o);
      if (old) this.o.onUpdate?.(o, old);
      else this.o.onAdd?.(o);
    }
  }

  private async watchOnce(): Promise<'expired' | 'ended'> {
    const min = this.o.minWatchSec ?? 300;
    const max = this.o.maxWatchSec ?? 600;
    const timeoutSeconds = Math.floor(min + Math.random() * (max - min));
    this.abort = new AbortController();
    // stop() may have run while we were listing: it could not abort a watch that did not exist yet.
    if (this.stopped) return 'ended';
    // A silent dead connection must not hang us: give the server its timeout plus slack.
    const deadline = setTimeout(() => this.abort?.abort(), (timeoutSeconds + 30) * 1000);
    this.watches++;
    try {
      for await (const ev of this.client.watch(
        this.o.path,
        { ...this.sel(), resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        this.abort.signal,
      )) {
        if (ev.type === 'ERROR') {
          if (ev.object?.code === 410) return 'expired';
          throw new KubeApiError(
            ev.object?.code ?? 500,
            ev.object?.reason ?? 'Unknown',
            `watch ${this.o.path}: ${ev.object?.message ?? 'error event'}`,
            ev.object,
          );
        }
        const rv = ev.object?.metadata?.resourceVersion;
        if (ev.type !== 'BOOKMARK') this.apply(ev.type, ev.object);
        if (rv) this.resourceVersion = rv;
      }
      return 'ended';
    } finally {
      clearTimeout(deadline);
    }
  }

  private async run(): Promise<void> {
    let delay = this.o.backoffInitialMs ?? 200;
    const maxDelay = this.o.backoffMaxMs ?? 30_000;
    let needList = true;
    if (this.o.resume) {
      for (const o of this.o.resume.items) this.cache.set(keyOf(o), o);
      this.resourceVersion = this.o.resume.resourceVersion;
      this.markSynced();
      needList = false;
    }
    while (!this.stopped) {
      try {
        if (needList) await this.relist();
        needList = false;
        if (this.stopped) return;
        const r = await this.watchOnce();
        if (r === 'expired') needList = true;
        delay = this.o.backoffInitialMs ?? 200;
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof KubeApiError && e.code === 410) needList = true;
        this.o.onError?.(e as Error);
        const jittered = delay * (0.5 + Math.random());
        await new Promise((r) => setTimeout(r, jittered));
        delay = Math.min(delay * 2, maxDelay);
      }
    }
  }
}
