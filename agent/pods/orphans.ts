// Upstream's cleanupOrphanedPodDirs and pod log cleanup: directories of pods
// that went away while the kubelet was down (or whose teardown was cut
// short) are unmounted and removed, never those of a pod that is desired,
// has a worker, or still has a sandbox or container in the runtime.
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { Logger } from '../../kube/log.js';
import { checkUid } from '../../kube/validation.js';
import { unmountAll } from '../volumes/mounts.js';

/** Which of the pod directories (by uid) and pod log directories (<ns>_<name>_<uid>) are orphans. Pure. */
export function selectOrphans(
  podDirs: string[],
  logDirs: string[],
  isLive: (uid: string) => boolean,
): { podDirs: string[]; logDirs: string[] } {
  const orphan = (uid: string): boolean => !checkUid(uid) && !isLive(uid);
  return {
    podDirs: podDirs.filter(orphan),
    // The uid is the last '_'-separated part: namespaces and names cannot hold '_'.
    logDirs: logDirs.filter((d) => d.split('_').length === 3 && orphan(d.split('_')[2]!)),
  };
}

const list = async (dir: string): Promise<string[]> => fsp.readdir(dir).catch(() => [] as string[]);

/** Removes orphaned pod and log directories; `isLive` says (at the time of asking) whether a uid is still in use. */
export async function cleanupOrphans(
  rootDir: string,
  podLogsDir: string,
  isLive: (uid: string) => boolean,
  log: Logger,
): Promise<string[]> {
  const podsDir = path.join(rootDir, 'pods');
  const sel = selectOrphans(await list(podsDir), await list(podLogsDir), isLive);
  const removed: string[] = [];
  for (const [base, names] of [
    [podsDir, sel.podDirs],
    [podLogsDir, sel.logDirs],
  ] as const) {
    for (const name of names) {
      const dir = path.join(base, name);
      // Asked again right before removing: a pod may have arrived since the listing.
      if (isLive(base === podsDir ? name : name.split('_')[2]!)) continue;
      try {
        await unmountAll(dir);
        await fsp.rm(dir, { recursive: true, force: true });
        removed.push(dir);
      } catch (e) {
        log.warn(`orphaned pod directory ${dir}: cannot remove: ${(e as Error).message}`);
      }
    }
  }
  if (removed.length)
    log.info(`removed ${removed.length} orphaned pod director${removed.length === 1 ? 'y' : 'ies'}`, { dirs: removed });
  return removed;
}
