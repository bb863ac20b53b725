// Writes a volume's files the way upstream's AtomicWriter does, so readers
// never see half an update: the files go into a fresh `..<timestamp>` dir,
// the `..data` symlink is swapped to it with one rename, and each top-level
// name is a symlink through `..data`. A ConfigMap update is one atomic switch.
import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
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

async function sameContent(dir: string, payload: Payload): Promise<boolean> {
  try {
    for (const [rel, f] of payload) {
      const p = path.join(dir, rel);
      const [buf, st] = await Promise.all([fsp.readFile(p), fsp.stat(p)]);
      if (!buf.equals(f.data) || (st.mode & 0o7777) !== f.mode) return false;
    }
    const count = async (d: string): Promise<number> => {
      let n = 0;
      for (const e of await fsp.readdir(d, { withFileTypes: true })) n += e.isDirectory() ? await count(path.join(d, e.name)) : 1;
      return n;
    };
    return (await count(dir)) === payload.size;
  } catch {
    return false;
  }
}

/** Writes `payload` under `dir`; returns whether anything changed. */
export async function writeAtomic(dir: string, payload: Payload): Promise<boolean> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
  const current = await fsp.readlink(path.join(dir, DATA)).catch(() => undefined);
  if (current && (await sameContent(path.join(dir, current), payload))) return false;
  const stamp = new Date().toISOString().replace(/[-:T]/g, '_').replace(/\..*$/, '');
  const ts = `..${stamp}.${randomBytes(5).toString('hex')}`;
  const tsDir = path.join(dir, ts);
  await fsp.mkdir(tsDir, { mode: 0o755 });
  for (const [rel, f] of payload) {
    const p = path.join(tsDir, rel);
    await fsp.mkdir(path.dirname(p), { recursive: true, mode: 0o755 });
    await fsp.writeFile(p, f.data);
    await fsp.chmod(p, f.mode);
  }
  const tmpLink = path.join(dir, `${DATA}_tmp`);
  await fsp.rm(tmpLink, { force: true });
  await fsp.symlink(ts, tmpLink);
  await fsp.rename(tmpLink, path.join(dir, DATA));
  const top = new Set([...payload.keys()].map((p) => p.split('/')[0]!));
  for (const name of top) {
    const link = path.join(dir, name);
    const target = await fsp.readlink(link).catch(() => undefined);
    if (target !== path.join(DATA, name)) {
      await fsp.rm(link, { force: true, recursive: true });
      await fsp.symlink(path.join(DATA, name), link);
    }
  }
  // What the new payload no longer has, and the previous timestamped dir.
  for (const e of await fsp.readdir(dir)) {
    if (e === DATA || e === ts || top.has(e)) continue;
    if (e.startsWith('..') || (await fsp.lstat(path.join(dir, e))).isSymbolicLink()) await fsp.rm(path.join(dir, e), { recursive: true, force: true });
  }
  return true;
}
