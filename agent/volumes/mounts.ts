// tmpfs mounts for memory-backed volumes (secret, projected, emptyDir with
// medium: Memory), and unmounting everything under a pod's directory before
// it is removed. Uses mount(8)/umount(8), as the kubelet runs as root, through
// one long-lived shell (mount-commands.ts).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { mountCommands } from './mount-commands.js';

/** Mount points at or under `dir`, deepest first (from /proc/self/mountinfo). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const base = path.resolve(dir);
  const text = await fsp.readFile('/proc/self/mountinfo', 'utf8');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    // Field 5 is the mount point, with spaces and friends octal-escaped.
    const mp = line.split(' ')[4]?.replace(/\\(\d{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (mp && (mp === base || mp.startsWith(`${base}/`))) out.push(mp);
  }
  return out.sort((a, b) => b.length - a.length);
}

/**
 * Whether `dir` is a mount point, as upstream's IsLikelyNotMountPoint tells: its device differs from its parent's
 * (true of every tmpfs, each its own device). Two stat calls, where the mount table grows with every pod on the node.
 */
export function isMountPoint(dir: string): boolean {
  try {
    return fs.statSync(dir).dev !== fs.statSync(path.dirname(path.resolve(dir))).dev;
  } catch {
    return false;
  }
}

/** A tmpfs at `dir` (once), its root with `mode`. */
export async function mountTmpfs(dir: string, sizeBytes?: number, mode = 0o755): Promise<void> {
  if (isMountPoint(dir)) return;
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const opts = [`mode=${mode.toString(8).padStart(4, '0')}`, ...(sizeBytes ? [`size=${sizeBytes}`] : [])].join(',');
  await mountCommands.run('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir]);
}

export async function unmountAll(dir: string): Promise<void> {
  for (const mp of await mountsUnder(dir))
    await mountCommands.run('umount', [mp]).catch(async () => mountCommands.run('umount', ['-l', mp]));
}
