// Container log rotation (upstream ContainerLogManager): every monitor
// interval, a running container's log over containerLogMaxSize is renamed to
// `<log>.<YYYYMMDD-HHMMSS>` and the runtime reopens a fresh file. At most
// containerLogMaxFiles files stay per container, the current one included;
// rotated files but the newest are gzipped.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';

export interface LogRotationOptions {
  maxBytes: number;
  maxFiles: number;
  intervalMs: number;
  /** containerLogMaxWorkers: containers handled at once (default 1). */
  workers?: number;
}

const stamp = (d: Date): string => d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

export class LogRotator {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly cri: CriClient,
    private readonly log: Logger,
    private readonly o: LogRotationOptions,
  ) {
    if (o.maxFiles < 2) throw new Error(`containerLogMaxFiles: must be at least 2, got ${o.maxFiles}`);
  }

  /**
   * Each running container's log path, asked of the runtime once: it is fixed when the container is created, and
   * asking every container's status every 10 s was most of an idle node's CRI calls at 110 pods.
   */
  private readonly logPaths = new Map<string, string>();

  start(): void {
    this.timer = setInterval(() => void this.rotateAll(), this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One pass over the running containers; returns the log files rotated. */
  async rotateAll(): Promise<string[]> {
    if (this.running) return [];
    this.running = true;
    const done: string[] = [];
    try {
      const cs = await this.cri.listContainers({ state: { state: 'CONTAINER_RUNNING' } });
      const running = new Set(cs.map((c) => c.id));
      for (const id of this.logPaths.keys()) if (!running.has(id)) this.logPaths.delete(id);
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < cs.length) {
          const c = cs[next++]!;
          try {
            let logPath = this.logPaths.get(c.id);
            if (logPath === undefined)
              this.logPaths.set(c.id, (logPath = (await this.cri.containerStatus(c.id)).log_path));
            if (!path.isAbsolute(logPath)) continue;
            if (await this.rotate(c.id, logPath)) done.push(logPath);
          } catch (e) {
            this.log.warn(`log rotation for container ${c.id} failed: ${(e as Error).message}`);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, this.o.workers ?? 1) }, worker));
    } catch (e) {
      this.log.warn(`log rotation: listing containers failed: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
    return done;
  }

  /** Rotates one container's log if it is over the limit. */
  async rotate(id: string, log: string, now = new Date()): Promise<boolean> {
    // Every container every monitor interval: one stat, made synchronously (through fs/promises several times the CPU).
    let size = 0;
    try {
      size = fs.statSync(log).size;
    } catch {
      // not written yet, or gone with its container
    }
    if (size < this.o.maxBytes) return false;
    const dir = path.dirname(log);
    const base = path.basename(log);
    const rotated = async (): Promise<string[]> =>
      (await fsp.readdir(dir))
        .filter((f) => f.startsWith(`${base}.`) && !f.endsWith('.tmp'))
        .sort()
        .map((f) => path.join(dir, f));
    // A gzip left half-written, or a plain file whose .gz exists, is from an interrupted pass.
    for (const f of await fsp.readdir(dir)) {
      if (f.startsWith(`${base}.`) && f.endsWith('.tmp')) await fsp.rm(path.join(dir, f), { force: true });
    }
    let old = await rotated();
    for (const f of old) if (!f.endsWith('.gz') && old.includes(`${f}.gz`)) await fsp.rm(f, { force: true });
    old = await rotated();
    // Room for the file about to be rotated, besides the current one.
    while (old.length > this.o.maxFiles - 2) await fsp.rm(old.shift()!, { force: true });
    for (const f of old.slice(0, -1)) if (!f.endsWith('.gz')) await gzip(f);
    const target = `${log}.${stamp(now)}`;
    await fsp.rename(log, target);
    try {
      await this.cri.reopenContainerLog(id);
    } catch (e) {
      // The runtime still writes to the renamed file: put it back.
      await fsp.rename(target, log).catch(() => undefined);
      throw e;
    }
    this.log.info(`rotated log of container ${id} (${size} bytes) to ${target}`);
    return true;
  }
}

async function gzip(file: string): Promise<void> {
  const tmp = `${file}.gz.tmp`;
  // zlib only once a log is rotated: most kubelet runs never load it.
  const { createGzip } = await import('node:zlib');
  await pipeline(fs.createReadStream(file), createGzip(), fs.createWriteStream(tmp));
  await fsp.rename(tmp, `${file}.gz`);
  await fsp.rm(file, { force: true });
}
