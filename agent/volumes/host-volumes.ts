// emptyDir (on disk, or tmpfs with medium: Memory) and hostPath volumes,
// with hostPath's type checks worded as upstream.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { Volume } from 'kubernetes-types/core/v1.js';

import { parseQuantity } from '../../kube/quantity.js';
import { mountTmpfs } from './mounts.js';
import { VolumeError } from './volume-error.js';

export async function setUpEmptyDir(v: Volume, dir: string): Promise<void> {
  // A memory-backed emptyDir's root is a tmpfs's own, 1777 (upstream mounts it without a mode).
  if (v.emptyDir?.medium === 'Memory')
    await mountTmpfs(dir, v.emptyDir.sizeLimit ? parseQuantity(v.emptyDir.sizeLimit) : undefined, 0o1777);
  else fs.mkdirSync(dir, { recursive: true });
  // World-writable as upstream: any container user may use it. Set up again on every sync: the setgid bit
  // fsGroup put there stays. Synchronous: under the kubelet's root dir, where fs/promises costs several times the CPU.
  const st = fs.statSync(dir);
  if ((st.mode & 0o777) !== 0o777) fs.chmodSync(dir, (st.mode & 0o7000) | 0o777);
}

const CHECKS: Record<string, [string, (s: fs.Stats) => boolean]> = {
  Directory: ['a directory', (s) => s.isDirectory()],
  File: ['a file', (s) => s.isFile()],
  Socket: ['a socket file', (s) => s.isSocket()],
  CharDevice: ['a character device', (s) => s.isCharacterDevice()],
  BlockDevice: ['a block device', (s) => s.isBlockDevice()],
};

export async function setUpHostPath(v: Volume): Promise<string> {
  const p = v.hostPath!.path;
  const type = v.hostPath!.type ?? '';
  if (type === 'DirectoryOrCreate') await fsp.mkdir(p, { recursive: true, mode: 0o755 });
  else if (type === 'FileOrCreate') {
    if (!fs.existsSync(p)) await (await fsp.open(p, 'a', 0o644)).close();
  } else if (CHECKS[type]) {
    const [what, ok] = CHECKS[type];
    const st = await fsp.stat(p).catch(() => undefined);
    if (!st || !ok(st)) throw new VolumeError(`hostPath type check failed: ${p} is not ${what}`);
  } else if (type !== '') throw new VolumeError(`hostPath type ${type} is not supported`);
  return path.resolve(p);
}

/**
 * volume.SetVolumeOwnership: the volume's files get the pod's fsGroup as their group, group read (and write,
 * unless read-only) permission, and directories setgid so new files inherit it. OnRootMismatch skips the walk
 * when the volume's root already has that group and mode.
 */
export async function setVolumeOwnership(
  dir: string,
  fsGroup: number,
  readOnly: boolean,
  policy: string | undefined,
): Promise<void> {
  const mask = readOnly ? 0o440 : 0o660;
  const dirMask = mask | 0o110 | 0o2000;
  if (policy === 'OnRootMismatch') {
    const st = await fsp.stat(dir);
    if (st.gid === fsGroup && (st.mode & dirMask) === dirMask) return;
  }
  const walk = async (p: string): Promise<void> => {
    const st = await fsp.lstat(p);
    await fsp.lchown(p, -1, fsGroup);
    if (st.isSymbolicLink()) return;
    await fsp.chmod(p, (st.mode & 0o7777) | (st.isDirectory() ? dirMask : mask));
    if (st.isDirectory()) for (const e of await fsp.readdir(p)) await walk(path.join(p, e));
  };
  await walk(dir);
}
