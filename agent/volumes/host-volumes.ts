// emptyDir (on disk, or tmpfs with medium: Memory) and hostPath volumes,
// with hostPath's type checks worded as upstream.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Volume } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from '../../kube/quantity.js';
import { mountTmpfs } from './mounts.js';
import { VolumeError } from './projections.js';

export async function setUpEmptyDir(v: Volume, dir: string): Promise<void> {
  if (v.emptyDir?.medium === 'Memory') await mountTmpfs(dir, v.emptyDir.sizeLimit ? parseQuantity(v.emptyDir.sizeLimit) : undefined);
  else await fsp.mkdir(dir, { recursive: true });
  // World-writable as upstream: any container user may use it.
  await fsp.chmod(dir, 0o777);
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
