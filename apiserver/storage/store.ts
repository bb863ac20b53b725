// Object storage for the dev apiserver: one monotonic resourceVersion for all
// objects, a bounded event history for watch-from-RV (older -> Expired), and
// optional persistence as an fsync'd append-only log, so that every write
// acknowledged to a client survives a restart.
import fs from 'node:fs';
import path from 'node:path';

import { KeyIndex } from './key-index.js';
import { type LogRecord, readLog } from './log-file.js';

export type Obj = Record<string, any>;
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  key: string;
  rv: number;
  object: Obj;
  /** The object before this event (MODIFIED, DELETED). */
  prev?: Obj;
  /** Bytes this event keeps alive in the history (its object's JSON, and the previous one's). */
  bytes: number;
}

/** etcd's default --max-request-bytes: no stored object may be larger. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

export class StoreError extends Error {
  constructor(
    readonly reason: 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Expired' | 'TooLarge',
    message: string,
  ) {
    super(message);
  }
}

export interface StoreOptions {
  /** Directory for the persistent log; in memory only when unset. */
  dataDir?: string;
  /** Events kept for watch resumption. */
  historySize?: number;
  /** Rewrite the log as a snapshot when it grows past this many records and twice the live objects. */
  compactAfter?: number;
  /** ...or past this many bytes and twice the live data (default 64 MiB). */
  compactAfterBytes?: number;
  /** Watch history kept, in bytes of JSON (default 64 MiB), on top of historySize events. */
  historyBytes?: number;
  /** Told what was repaired on open (a torn last record cut away). */
  log?: (line: string) => void;
}

export class Store {
  private readonly objects = new Map<string, Obj>();
  /** The same keys by resource, sorted: lists read their own range. */
  private readonly index = new KeyIndex();
  private readonly history: StoreEvent[] = [];
  private readonly watchers = new Set<{ prefix: string; fn: (e: StoreEvent) => void }>();
  private rev = 0;
  /** Lowest RV a watch may resume from (anything before was compacted away). */
  private oldestRv = 0;
  private fd: number | undefined;
  private records = 0;
  private logBytes = 0;
  private historyBytesNow = 0;
  /** JSON size of each live object, for compaction and history accounting. */
  private readonly sizes = new Map<string, number>();
  private liveBytes = 0;
  private readonly historySize: number;

  constructor(private readonly o: StoreOptions = {}) {
    this.historySize = o.historySize ?? 10_000;
    if (o.dataDir) this.open(o.dataDir);
  }

  get resourceVersion(): number {
    return this.rev;
  }

  private logPath(dir: string): string {
    return path.join(dir, 'objects.log');
  }

  private open(dir: string): void {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = this.logPath(dir);
    this.fd = fs.openSync(file, 'a+', 0o600);
    const { records, goodBytes, torn } = readLog(fs.readFileSync(file), file);
    if (torn) this.cutTornTail(file, goodBytes, torn);
    for (const { record: r, bytes } of records) {
      if (r.t === 'put') {
        if (!this.objects.has(r.k)) this.index.add(r.k);
        this.objects.set(r.k, r.o as Obj);
        this.setSize(r.k, bytes - 1);
      } else {
        if (this.objects.delete(r.k)) this.index.remove(r.k);
        this.setSize(r.k, 0);
      }
      this.rev = Math.max(this.rev, r.rv);
      this.records++;
    }
    this.logBytes = goodBytes;
    this.oldestRv = this.rev;
  }

  /** A torn last record was never acknowledged: keep a copy beside the log, then end the log before it. */
  private cutTornTail(file: string, goodBytes: number, torn: Buffer): void {
    const copy = `${file}.torn-${Date.now()}`;
    fs.writeFileSync(copy, torn, { mode: 0o600, flush: true });
    fs.ftruncateSync(this.fd!, goodBytes);
    fs.fsyncSync(this.fd!);
    this.o.log?.(
      `${file}: cut a torn last record (${torn.length} bytes at offset ${goodBytes}, never acknowledged); a copy is in ${copy}`,
    );
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    for (const w of this.watchers) this.watchers.delete(w);
  }

  private setSize(key: string, bytes: number): void {
    this.liveBytes += bytes - (this.sizes.get(key) ?? 0);
    if (bytes) this.sizes.set(key, bytes);
    else this.sizes.delete(key);
  }

  /** Writes one log record; `json` is the object's JSON, computed once per write. */
  private persist(t: 'put' | 'del', key: string, rv: number, json?: string): void {
    if (this.fd === undefined) return;
    const line = Buffer.from(
      `{"t":"${t}","k":${JSON.stringify(key)},"rv":${rv}${json === undefined ? '' : `,"o":${json}`}}\n`,
    );
    try {
      let done = 0;
      while (done < line.length) done += fs.writeSync(this.fd, line, done);
      fs.fsyncSync(this.fd);
    } catch (e) {
      // A failed append (a full disk) leaves no partial record for the next one to land on.
      fs.ftruncateSync(this.fd, this.logBytes);
      throw e;
    }
    this.records++;
    this.logBytes += line.length;
  }

  /** The object's JSON, refused past etcd's request size. */
  private encode(o: Obj): string {
    const json = JSON.stringify(o);
    if (json.length > MAX_OBJECT_BYTES) throw new StoreError('TooLarge', 'etcdserver: request is too large');
    return json;
  }

  /** Called after a mutation is applied in memory, so the snapshot includes it. */
  private maybeCompact(): void {
    if (this.fd === undefined) return;
    const bytesOver = this.logBytes > Math.max(this.o.compactAfterBytes ?? 64 * 1024 * 1024, 2 * this.liveBytes);
    // Past twice the live objects too: a compacted log holds one record per object, so with more objects than
    // compactAfter a fixed threshold would rewrite the whole store on every write.
    const recordsOver = this.records > Math.max(this.o.compactAfter ?? 50_000, 2 * this.objects.size);
    if (recordsOver || bytesOver) this.compact();
  }

  private compact(): void {
    const dir = this.o.dataDir!;
    const tmp = this.logPath(dir) + '.tmp';
    const fd = fs.openSync(tmp, 'w', 0o600);
    for (const [k, o] of this.objects)
      fs.writeSync(
        fd,
        JSON.stringify({ t: 'put', k, rv: Number(o.metadata?.resourceVersion ?? this.rev), o } satisfies LogRecord) +
          '\n',
      );
    fs.writeSync(fd, JSON.stringify({ t: 'del', k: '\u0000rv', rv: this.rev } satisfies LogRecord) + '\n');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, this.logPath(dir));
    fs.closeSync(this.fd!);
    this.fd = fs.openSync(this.logPath(dir), 'a+', 0o600);
    this.records = this.objects.size + 1;
    this.logBytes = fs.statSync(this.logPath(dir)).size;
  }

  private emit(type: EventType, key: string, object: Obj, bytes: number, prev?: Obj): void {
    const e: StoreEvent = { type, key, rv: this.rev, object, prev, bytes };
    this.history.push(e);
    this.historyBytesNow += bytes;
    // Bounded by count and by bytes, so large objects cannot grow memory without limit.
    while (
      this.history.length > 1 &&
      (this.history.length > this.historySize || this.historyBytesNow > (this.o.historyBytes ?? 64 * 1024 * 1024))
    ) {
      const dropped = this.history.shift()!;
      this.historyBytesNow -= dropped.bytes;
      this.oldestRv = dropped.rv;
    }
    // One watcher that throws must not cost the others their events.
    for (const w of this.watchers) {
      if (!key.startsWith(w.prefix)) continue;
      try {
        w.fn(e);
      } catch (err) {
        this.onWatcherError?.(err as Error);
      }
    }
  }

  /** Told about a watcher that threw while handling an event. */
  onWatcherError?: (e: Error) => void;

  get(key: string): Obj | undefined {
    return this.objects.get(key);
  }

  /**
   * Objects whose key starts with prefix, in key order (byte order, as etcd's: within one resource that is the order
   * of `<namespace>/<name>`), and the RV they are consistent at.
   */
  list(prefix: string): { items: Obj[]; rv: number } {
    const items: Obj[] = [];
    this.index.forEach(prefix, (k) => items.push(this.objects.get(k)!));
    return { items, rv: this.rev };
  }

  create(key: string, obj: Obj): Obj {
    if (this.objects.has(key)) throw new StoreError('AlreadyExists', key);
    const o = withRv(obj, this.rev + 1);
    const json = this.encode(o);
    this.persist('put', key, this.rev + 1, json);
    this.rev++;
    this.objects.set(key, o);
    this.index.add(key);
    this.setSize(key, json.length);
    this.emit('ADDED', key, o, json.length);
    this.maybeCompact();
    return o;
  }

  /** Replace; if expectedRv is given it must match the stored object's (optimistic concurrency). */
  update(key: string, obj: Obj, expectedRv?: string): Obj {
    const cur = this.objects.get(key);
    if (!cur) throw new StoreError('NotFound', key);
    if (expectedRv !== undefined && expectedRv !== '' && expectedRv !== cur.metadata.resourceVersion) {
      throw new StoreError(
        'Conflict',
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const o = withRv(obj, this.rev + 1);
    const json = this.encode(o);
    this.persist('put', key, this.rev + 1, json);
    this.rev++;
    const before = this.sizes.get(key) ?? 0;
    this.objects.set(key, o);
    this.setSize(key, json.length);
    this.emit('MODIFIED', key, o, json.length + before, cur);
    this.maybeCompact();
    return o;
  }

  delete(key: string): Obj {
    const cur = this.objects.get(key);
    if (!cur) throw new StoreError('NotFound', key);
    this.persist('del', key, this.rev + 1);
    this.rev++;
    const o = withRv(cur, this.rev);
    const before = this.sizes.get(key) ?? 0;
    this.objects.delete(key);
    this.index.remove(key);
    this.setSize(key, 0);
    this.emit('DELETED', key, o, before, cur);
    this.maybeCompact();
    return o;
  }

  /** Events after `fromRv` still in history; throws Expired when it no longer reaches back. */
  eventsSince(prefix: string, fromRv: number): StoreEvent[] {
    if (fromRv < this.oldestRv)
      throw new StoreError('Expired', `too old resource version: ${fromRv} (${this.oldestRv})`);
    return this.history.filter((e) => e.rv > fromRv && e.key.startsWith(prefix));
  }

  /**
   * Events after `fromRv` for keys under prefix, then live ones. fromRv 0
   * means "from now". Throws Expired when the history no longer reaches back.
   */
  watch(prefix: string, fromRv: number, fn: (e: StoreEvent) => void): () => void {
    if (fromRv > 0 && fromRv < this.oldestRv)
      throw new StoreError('Expired', `too old resource version: ${fromRv} (${this.oldestRv})`);
    if (fromRv > 0) for (const e of this.history) if (e.rv > fromRv && e.key.startsWith(prefix)) fn(e);
    const w = { prefix, fn };
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }
}

function withRv(obj: Obj, rv: number): Obj {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}
