// Writes a volume's files the way upstream's AtomicWriter does, so readers
// never see half an update: the files go into a fresh `..<timestamp>` dir,
// the `..data` symlink is swapped to it with one rename, and each top-level
// name is a symlink through `..data`. A ConfigMap update is one atomic switch.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface FileProjection {
  data: Buffer;
  /** Unix mode, e.g. 0o644. */
  mode: number;
}

export type Payload = Map<string, FileProjection>;

const DATA = '..data';

/** Relative, no "..", no leading "..": as upstream validates item paths. */
export function checkPayloadPath(p: string): string | undefined {
  if (!p) return 'must not be empty';
  if (path.isAbsolute(p)) return 'must be a relative path';
  if (p.split('/').includes('..')) return "must not contain '..'";
  if (p.startsWith('..')) return "must not start with '..'";
  return undefined;
}

function sameContent(dir: string, payload: Payload): boolean {
  try {
    for (const [rel, f] of payload) {
      const p = path.join(dir, rel);
      if (!fs.readFileSync(p).equals(f.data) || (fs.statSync(p).mode & 0o7777) !== f.mode) return false;
    }
    const count = (d: string): number => {
      let n = 0;
      for (const e of fs.readdirSync(d, { withFileTypes: true }))
        n += e.isDirectory() ? count(path.join(d, e.name)) : 1;
      return n;
    };
    return count(dir) === payload.size;
  } catch {
    return false;
  }
}

const readlink = (p: string): string | undefined => {
  try {
    return fs.readlinkSync(p);
  } catch {
    return undefined;
  }
};

/**
 * Writes `payload` under `dir`; returns whether anything changed. Synchronous calls: a volume is a few small files on
 * local disk, and each fs/promises call costs several times the CPU of the system call (a thread-pool hand-off and
 * its wake-ups), the larger part of a pod's volume set-up.
 */
export async function writeAtomic(dir: string, payload: Payload): Promise<boolean> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const current = readlink(path.join(dir, DATA));
  if (current && sameContent(path.join(dir, current), payload)) return false;
  const stamp = new Date().toISOString().replace(/[-:T]/g, '_').replace(/\..*$/, '');
  const ts = `..${stamp}.${randomBytes(5).toString('hex')}`;
  const tsDir = path.join(dir, ts);
  fs.mkdirSync(tsDir, { mode: 0o755 });
  for (const [rel, f] of payload) {
    const p = path.join(tsDir, rel);
    if (rel.includes('/')) fs.mkdirSync(path.dirname(p), { recursive: true, mode: 0o755 });
    fs.writeFileSync(p, f.data);
    fs.chmodSync(p, f.mode);
  }
  const tmpLink = path.join(dir, `${DATA}_tmp`);
  fs.rmSync(tmpLink, { force: true });
  fs.symlinkSync(ts, tmpLink);
  fs.renameSync(tmpLink, path.join(dir, DATA));
  const top = new Set([...payload.keys()].map((p) => p.split('/')[0]!));
  for (const name of top) {
    const link = path.join(dir, name);
    if (readlink(link) !== path.join(DATA, name)) {
      fs.rmSync(link, { force: true, recursive: true });
      fs.symlinkSync(path.join(DATA, name), link);
    }
  }
  // What the new payload no longer has, and the previous timestamped dir.
  for (const e of fs.readdirSync(dir)) {
    if (e === DATA || e === ts || top.has(e)) continue;
    if (e.startsWith('..') || fs.lstatSync(path.join(dir, e)).isSymbolicLink())
      fs.rmSync(path.join(dir, e), { recursive: true, force: true });
  }
  return true;
}
