// Object storage for the dev apiserver: one monotonic resourceVersion for all
// objects, a bounded event history for watch-from-RV (older -> Expired), and
// optional persistence as an fsync'd append-only log, so that every write
// acknowledged to a client survives a restart.
import fs from 'node:fs';
import path from 'node:path';

export type Obj = Record<string, any>;
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  key: string;
  rv: number;
  object: Obj;
  /** The object before this event (MODIFIED, DELETED). */
  prev?: Obj;
}

export class StoreError extends Error {
  constructor(
    readonly reason: 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Expired',
    message: string,
  ) {
    super(message);
  }
}

interface LogRecord {
  t: 'put' | 'del';
  k: string;
  rv: number;
  o?: Obj;
}

export interface StoreOptions {
  /** Directory for the persistent log; in memory only when unset. */
  dataDir?: string;
  /** Events kept for watch resumption. */
  historySize?: number;
  /** Rewrite the log as a snapshot when it grows past this many records. */
  compactAfter?: number;
}

export class Store {
  private readonly objects = new Map<string, Obj>();
  private readonly history: StoreEvent[] = [];
  private readonly watchers = new Set<{ prefix: string; fn: (e: StoreEvent) => void }>();
  private rev = 0;
  /** Lowest RV a watch may resume from (anything before was compacted away). */
  private oldestRv = 0;
  private fd: number | undefined;
  private records = 0;
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
    if (fs.existsSync(file)) {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      for (const [i, line] of lines.entries()) {
        if (!line) continue;
        let r: LogRecord;
        try {
          r = JSON.parse(line) as LogRecord;
        } catch {
          // Only the last line can be torn (a crash mid-write, never acknowledged).
          if (i >= lines.length - 2) break;
          throw new Error(`${file}: line ${i + 1} is corrupt`);
        }
        if (r.t === 'put') this.objects.set(r.k, r.o!);
        else this.objects.delete(r.k);
        this.rev = Math.max(this.rev, r.rv);
        this.records++;
      }
    }
    this.oldestRv = this.rev;
    this.fd = fs.openSync(file, 'a', 0o600);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    for (const w of this.watchers) this.watchers.delete(w);
  }

  private persist(r: LogRecord): void {
    if (this.fd === undefined) return;
    fs.writeSync(this.fd, JSON.stringify(r) + '\n');
    fs.fsyncSync(this.fd);
    this.records++;
  }

  /** Called after a mutation is applied in memory, so the snapshot includes it. */
  private maybeCompact(): void {
    if (this.fd !== undefined && this.records > (this.o.compactAfter ?? 50_000)) this.compact();
  }

  private compact(): void {
    const dir = this.o.dataDir!;
    const tmp = this.logPath(dir) + '.tmp';
    const fd = fs.openSync(tmp, 'w', 0o600);
    for (const [k, o] of this.objects) fs.writeSync(fd, JSON.stringify({ t: 'put', k, rv: Number(o.metadata?.resourceVersion ?? this.rev), o } satisfies LogRecord) + '\n');
    fs.writeSync(fd, JSON.stringify({ t: 'del', k: '\u0000rv', rv: this.rev } satisfies LogRecord) + '\n');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, this.logPath(dir));
    fs.closeSync(this.fd!);
    this.fd = fs.openSync(this.logPath(dir), 'a', 0o600);
    this.records = this.objects.size + 1;
  }

  private emit(type: EventType, key: string, object: Obj, prev?: Obj): void {
    const e: StoreEvent = { type, key, rv: this.rev, object, prev };
    this.history.push(e);
    if (this.history.length > this.historySize) {
      const dropped = this.history.shift()!;
      this.oldestRv = dropped.rv;
    }
    for (const w of this.watchers) if (key.startsWith(w.prefix)) w.fn(e);
  }

  get(key: string): Obj | undefined {
    return this.objects.get(key);
  }

  /** Objects whose key starts with prefix, in key order, and the RV they are consistent at. */
  list(prefix: string): { items: Obj[]; rv: number } {
    const items: Obj[] = [];
    for (const [k, o] of this.objects) if (k.startsWith(prefix)) items.push(o);
    items.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    return { items, rv: this.rev };
  }

  create(key: string, obj: Obj): Obj {
    if (this.objects.has(key)) throw new StoreError('AlreadyExists', key);
    this.rev++;
    const o = withRv(obj, this.rev);
    this.persist({ t: 'put', k: key, rv: this.rev, o });
    this.objects.set(key, o);
    this.emit('ADDED', key, o);
    this.maybeCompact();
    return o;
  }

  /** Replace; if expectedRv is given it must match the stored object's (optimistic concurrency). */
  update(key: string, obj: Obj, expectedRv?: string): Obj {
    const cur = this.objects.get(key);
    if (!cur) throw new StoreError('NotFound', key);
    if (expectedRv !== undefined && expectedRv !== '' && expectedRv !== cur.metadata.resourceVersion) {
      throw new StoreError('Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
    }
    this.rev++;
    const o = withRv(obj, this.rev);
    this.persist({ t: 'put', k: key, rv: this.rev, o });
    this.objects.set(key, o);
    this.emit('MODIFIED', key, o, cur);
    this.maybeCompact();
    return o;
  }

  delete(key: string): Obj {
    const cur = this.objects.get(key);
    if (!cur) throw new StoreError('NotFound', key);
    this.rev++;
    const o = withRv(cur, this.rev);
    this.persist({ t: 'del', k: key, rv: this.rev });
    this.objects.delete(key);
    this.emit('DELETED', key, o, cur);
    this.maybeCompact();
    return o;
  }

  /** Events after `fromRv` still in history; throws Expired when it no longer reaches back. */
  eventsSince(prefix: string, fromRv: number): StoreEvent[] {
    if (fromRv < this.oldestRv) throw new StoreError('Expired', `too old resource version: ${fromRv} (${this.oldestRv})`);
    return this.history.filter((e) => e.rv > fromRv && e.key.startsWith(prefix));
  }

  /**
   * Events after `fromRv` for keys under prefix, then live ones. fromRv 0
   * means "from now". Throws Expired when the history no longer reaches back.
   */
  watch(prefix: string, fromRv: number, fn: (e: StoreEvent) => void): () => void {
    if (fromRv > 0 && fromRv < this.oldestRv) throw new StoreError('Expired', `too old resource version: ${fromRv} (${this.oldestRv})`);
    if (fromRv > 0) for (const e of this.history) if (e.rv > fromRv && e.key.startsWith(prefix)) fn(e);
    const w = { prefix, fn };
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }
}

function keyOf(o: Obj): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

function withRv(obj: Obj, rv: number): Obj {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}
