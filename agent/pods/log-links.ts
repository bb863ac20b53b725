// The legacy container log links cluster logging agents read (fluent-bit's
// and promtail's default /var/log/containers/*.log):
// <pod>_<namespace>_<container>-<containerID>.log → the container's log under
// the pod's log directory, made when the container starts and removed with it.
import fs from 'node:fs';
import path from 'node:path';

/** Upstream's logSymlink: the name is cut to fit a file name (255 bytes with ".log"). */
export function logLinkName(podName: string, namespace: string, container: string, containerId: string): string {
  const base = `${podName}_${namespace}_${container}-${containerId}`;
  return `${base.slice(0, 255 - '.log'.length)}.log`;
}

/** Where the links go: /var/log/containers beside the default /var/log/pods, else a "containers" directory beside podLogsDir. */
export const containerLogsDir = (podLogsDir: string): string =>
  path.join(path.dirname(path.resolve(podLogsDir)), 'containers');

// Synchronous file calls: small and local, made for every container, where fs/promises costs several times the CPU of the
// system call (a thread-pool hand-off and its wake-ups).
export async function linkContainerLog(
  dir: string,
  podName: string,
  namespace: string,
  container: string,
  containerId: string,
  target: string,
): Promise<void> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  const link = path.join(dir, logLinkName(podName, namespace, container, containerId));
  fs.rmSync(link, { force: true });
  fs.symlinkSync(target, link);
}

/** Removes the links of these containers, and links whose log is gone (a container removed while the kubelet was down). */
export async function removeContainerLogLinks(dir: string, containerIds: Set<string>): Promise<number> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    if (!name.endsWith('.log')) continue;
    const id = /-([0-9a-f]{64})\.log$/.exec(name)?.[1];
    const p = path.join(dir, name);
    // A link whose log is gone: stat fails, lstat does not.
    const dangling = !fs.existsSync(p) && !!fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink();
    if ((id && containerIds.has(id)) || dangling) {
      fs.rmSync(p, { force: true });
      n++;
    }
  }
  return n;
}
