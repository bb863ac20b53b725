// Static pod source: a watched manifest directory (or single file), rescanned
// every fileCheckFrequency. Emits the full SET of its pods whenever it changes.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { md5Hex } from '../../kube/hash.js';
import type { Logger } from '../../kube/log.js';
import { FirstSeen } from './first-seen.js';
import { parseManifest } from './manifest.js';

export interface FileSourceOptions {
  path: string;
  nodeName: string;
  checkFrequencyMs?: number;
  /** Quiet time after a change before the directory is read: an editor's replace is one burst of events. */
  debounceMs?: number;
  /** How long a just-written file that lost pods (truncated, half-written) keeps its old pods before that counts. */
  settleMs?: number;
  /** Whether a pod UID is already running: of two files defining one pod, the running one keeps it (upstream keeps the first seen). */
  running?: (uid: string) => boolean;
  log: Logger;
  onSet: (pods: Pod[]) => void;
}

interface FileState {
  digest: string;
  pods: Pod[];
}

export class FileSource {
  private readonly files = new Map<string, FileState>();
  private readonly firstSeen = new FirstSeen();
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private scanning: Promise<void> = Promise.resolve();
  private lastSetKey: string | undefined;
  private stopped = false;
  private settleTimer: NodeJS.Timeout | undefined;
  /** Non-regular files already reported, so each is logged once. */
  private readonly skipped = new Set<string>();

  constructor(private readonly o: FileSourceOptions) {}

  async start(): Promise<void> {
    await this.queueScan();
    this.timer = setInterval(() => void this.queueScan(), this.o.checkFrequencyMs ?? 20_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    if (this.settleTimer) clearTimeout(this.settleTimer);
  }

  /** Scans are serialized; a burst of fs events (editor atomic replace) becomes one scan. */
  queueScan(): Promise<void> {
    this.scanning = this.scanning
      .then(() => this.scan())
      .catch((e: unknown) => this.o.log.error(`manifest scan of ${this.o.path} failed: ${(e as Error).message}`));
    return this.scanning;
  }

  private ensureWatch(isDir: boolean): void {
    if (this.watcher || this.stopped) return;
    const target = isDir ? this.o.path : path.dirname(this.o.path);
    try {
      this.watcher = fs.watch(target, { persistent: false }, () => this.poke());
      this.watcher.on('error', (e) => {
        this.o.log.warn(`watch on ${target} failed, will retry: ${e.message}`);
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (e) {
      this.o.log.warn(
        `cannot watch ${target} yet: ${(e as Error).message}; rescanning every ${(this.o.checkFrequencyMs ?? 20_000) / 1000}s`,
      );
    }
  }

  private poke(): void {
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.queueScan(), this.o.debounceMs ?? 20);
  }

  private async listFiles(): Promise<string[]> {
    let st: fs.Stats;
    try {
      st = await fsp.stat(this.o.path);
    } catch {
      return []; // a missing path is an empty SET
    }
    this.ensureWatch(st.isDirectory());
    if (!st.isDirectory()) return [this.o.path];
    const names = (await fsp.readdir(this.o.path)).filter((n) => !n.startsWith('.')).sort();
    const out: string[] = [];
    for (const n of names) {
      const p = path.join(this.o.path, n);
      try {
        const st = await fsp.stat(p);
        if (st.isFile()) out.push(p);
        else if (!st.isDirectory() && !this.skipped.has(p)) {
          // A fifo or a device would block or make no sense as a manifest (subdirectories are ignored as upstream).
          this.skipped.add(p);
          this.o.log.warn(`${p}: not a regular file, skipped`);
        }
      } catch {
        /* vanished between readdir and stat */
      }
    }
    return out;
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    const paths = await this.listFiles();
    const present = new Set(paths);
    for (const p of [...this.files.keys()]) if (!present.has(p)) this.files.delete(p);
    const settleMs = this.o.settleMs ?? 1000;
    for (const p of paths) {
      let bytes: Buffer;
      let mtimeMs: number;
      try {
        mtimeMs = (await fsp.stat(p)).mtimeMs;
        bytes = await fsp.readFile(p);
      } catch (e) {
        this.o.log.error(`${p}: cannot read: ${(e as Error).message}`);
        continue;
      }
      const digest = md5Hex(bytes.toString('latin1'));
      const prev = this.files.get(p);
      if (prev?.digest === digest) continue;
      const res = parseManifest(bytes, p, 'file', this.o.nodeName);
      // Rewritten in place (truncate, then write): a file that just changed and lost pods keeps them until it has
      // been quiet for settleMs, so a rewrite to the same content restarts nothing.
      if (prev && res.pods.length < prev.pods.length && Date.now() - mtimeMs < settleMs) {
        if (!this.settleTimer) {
          this.settleTimer = setTimeout(() => {
            this.settleTimer = undefined;
            void this.queueScan();
          }, settleMs);
          this.settleTimer.unref();
        }
        continue;
      }
      // Logged once per content: a broken file is reported when it changes, not every rescan.
      for (const err of res.errors) this.o.log.error(`static pod manifest rejected: ${err}`);
      this.files.set(p, { digest, pods: res.pods });
    }
    this.emit();
  }

  private emit(): void {
    const pods: Pod[] = [];
    const names = new Map<string, { file: string }>();
    // A pod that is already running wins over a file earlier in sort order (after a kubelet restart the first file
    // seen is not known; the runtime says which one it was).
    const entries = [...this.files].flatMap(([file, st]) => st.pods.map((pod) => ({ file, pod })));
    const running = (p: Pod): boolean => this.o.running?.(p.metadata!.uid!) ?? false;
    for (const { file, pod } of [...entries.filter((e) => running(e.pod)), ...entries.filter((e) => !running(e.pod))]) {
      const key = `${pod.metadata!.namespace!}/${pod.metadata!.name!}`;
      const other = names.get(key);
      if (other) {
        this.o.log.error(
          `static pod manifest rejected: ${file}: Pod "${key}": metadata.name: Duplicate value: already defined in ${other.file}`,
        );
        continue;
      }
      names.set(key, { file });
      pods.push(pod);
    }
    const key = pods
      .map((p) => p.metadata!.uid!)
      .sort()
      .join(',');
    if (key === this.lastSetKey) return;
    this.lastSetKey = key;
    this.o.onSet(this.firstSeen.stamp(pods));
  }
}

/** Makes a manifest directory that is not there yet, so that dropping a file into it just works; a path naming one file is left alone. True if it made it. */
export function ensureManifestDir(p: string): boolean {
  if (fs.existsSync(p) || /\.(ya?ml|json)$/.test(p)) return false;
  fs.mkdirSync(p, { recursive: true, mode: 0o755 });
  return true;
}
