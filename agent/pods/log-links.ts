// The legacy container log links cluster logging agents read (fluent-bit's
// and promtail's default /var/log/containers/*.log):
// <pod>_<namespace>_<container>-<containerID>.log → the container's log under
// the pod's log directory, made when the container starts and removed with it.
import fsp from 'node:fs/promises';
import path from 'node:path';

/** Upstream's logSymlink: the name is cut to fit a file name (255 bytes with ".log"). */
export function logLinkName(podName: string, namespace: string, container: string, containerId: string): string {
  const base = `${podName}_${namespace}_${container}-${containerId}`;
  return `${base.slice(0, 255 - '.log'.length)}.log`;
}

/** Where the links go: /var/log/containers beside the default /var/log/pods, else a "containers" directory beside podLogsDir. */
export const containerLogsDir = (podLogsDir: string): string => path.join(path.dirname(path.resolve(podLogsDir)), 'containers');

export async function linkContainerLog(dir: string, podName: string, namespace: string, container: string, containerId: string, target: string): Promise<void> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o755 });
  const link = path.join(dir, logLinkName(podName, namespace, container, containerId));
  await fsp.rm(link, { force: true });
  await fsp.symlink(target, link);
}

/** Removes the links of these containers, and links whose log is gone (a container removed while the kubelet was down). */
export async function removeContainerLogLinks(dir: string, containerIds: Set<string>): Promise<number> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  let n = 0;
  for (const name of names) {
    if (!name.endsWith('.log')) continue;
    const id = /-([0-9a-f]{64})\.log$/.exec(name)?.[1];
    const p = path.join(dir, name);
    const dangling = await fsp.stat(p).then(() => false, () => true);
    if ((id && containerIds.has(id)) || (dangling && (await fsp.lstat(p).then((s) => s.isSymbolicLink(), () => false)))) {
      await fsp.rm(p, { force: true });
      n++;
    }
  }
  return n;
}
