// subPath mounts without escaping the volume (upstream's subpath_linux.go):
// the subPath is resolved inside the volume, every element is then opened
// with O_NOFOLLOW through the previous element's descriptor, so a symlink
// planted or swapped in by a container cannot point the mount elsewhere,
// and the opened descriptor itself is bind-mounted to a per-container target
// under the pod directory, which is what CRI mounts into the container.
import fs from 'node:fs';
import path from 'node:path';

import { mountCommands } from './mount-commands.js';
import { mountsUnder } from './mounts.js';
const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = fs.constants;

export class SubPathError extends Error {}

/** Where the kubelet bind-mounts one subPath (upstream: <pod>/volume-subpaths/<volume>/<container>/<index>). */
export const subPathTarget = (podDir: string, volume: string, container: string, index: number): string =>
  path.join(podDir, 'volume-subpaths', volume, container, String(index));

/** Opens `rel` below `base` one element at a time, never following a symlink; creates missing directories. */
export function openInside(base: string, rel: string): { fd: number; isDir: boolean } {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (path.isAbsolute(rel) || parts.includes('..'))
    throw new SubPathError(`subPath ${JSON.stringify(rel)} must be a relative path without '..'`);
  let fd = fs.openSync(base, O_RDONLY | O_DIRECTORY);
  try {
    const mode = fs.fstatSync(fd).mode & 0o7777;
    for (const [i, part] of parts.entries()) {
      const last = i === parts.length - 1;
      const at = `/proc/self/fd/${fd}/${part}`;
      let next: number;
      try {
        next = fs.openSync(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | (last ? 0 : O_DIRECTORY));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          // As upstream: a missing subPath becomes a directory, made inside the already opened parent.
          fs.mkdirSync(at, { mode });
          next = fs.openSync(at, O_RDONLY | O_NOFOLLOW | O_DIRECTORY);
          // The volume's mode exactly (setgid and sticky bits too), not what the umask leaves: upstream's SafeMakeDir.
          fs.fchmodSync(next, mode);
        } else if (code === 'ELOOP' || code === 'ENOTDIR') {
          throw new SubPathError(
            `subPath ${JSON.stringify(rel)}: ${parts.slice(0, i + 1).join('/')} is a symlink or not a directory; symlinks out of the volume are not allowed`,
          );
        } else throw e;
      }
      fs.closeSync(fd);
      fd = next;
    }
    const st = fs.fstatSync(fd);
    if (!st.isDirectory() && !st.isFile())
      throw new SubPathError(`subPath ${JSON.stringify(rel)} is neither a file nor a directory`);
    return { fd, isDir: st.isDirectory() };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/**
 * Resolves symlinks that stay inside the volume (as upstream's evalSymlinks + PathWithinBase), then
 * safely opens the result and bind-mounts it at `target`. Returns the host path to give CRI.
 */
export async function mountSubPath(volumePath: string, subPath: string, target: string): Promise<string> {
  if ((await mountsUnder(target)).includes(path.resolve(target))) return target;
  const base = fs.realpathSync(volumePath);
  let resolved: string;
  try {
    resolved = fs.realpathSync(path.join(base, subPath));
  } catch {
    resolved = path.join(base, subPath);
  }
  const rel = path.relative(base, resolved);
  // `..` as a path element leaves the volume; AtomicWriter's own `..<timestamp>` directories do not.
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel))
    throw new SubPathError(
      `subPath ${JSON.stringify(subPath)} resolves to ${resolved}, outside of the volume ${volumePath}`,
    );
  const { fd, isDir } = openInside(base, rel);
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o750 });
    if (isDir) fs.mkdirSync(target, { recursive: true, mode: 0o750 });
    else fs.closeSync(fs.openSync(target, 'a', 0o640));
    // The kernel resolves /proc/<pid>/fd/<n> to the very file opened above, not to a path that could change.
    await mountCommands.run('mount', ['--no-canonicalize', '--bind', `/proc/${process.pid}/fd/${fd}`, target]);
  } finally {
    fs.closeSync(fd);
  }
  return target;
}
