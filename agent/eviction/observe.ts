// What the eviction manager observes: the node's signals (memory from the
// root and kubepods memory cgroups, nodefs from the kubelet's root dir,
// pids from the kernel) and each pod's usage of what is being reclaimed
// (CRI container stats, plus emptyDir volumes and logs for ephemeral storage).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { parseQuantity } from '../../kube/quantity.js';
import type { CgroupTree } from '../cm/cgroupfs.js';
import type { ContainerStats } from '../cri/types.js';
import { L_CONTAINER_NAME, L_POD_UID } from '../pods/labels.js';
import type { Observations, PodUsage, Resource } from './decide.js';

function meminfo(): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const l of fs.readFileSync('/proc/meminfo', 'utf8').split('\n')) {
      const m = /^([\w()]+):\s+(\d+)(?: kB)?/.exec(l);
      if (m) out[m[1]!] = Number(m[2]) * (l.endsWith('kB') ? 1024 : 1);
    }
  } catch {
    /* not Linux */
  }
  return out;
}

/** A memory cgroup's working set: usage less inactive file pages (what upstream's cadvisor reports). */
export async function workingSet(tree: CgroupTree, cgroup: string): Promise<number | undefined> {
  if (tree.version === 1) {
    const usage = await tree.read(cgroup, 'memory', 'memory.usage_in_bytes');
    const stat = await tree.read(cgroup, 'memory', 'memory.stat');
    if (usage === undefined) return undefined;
    const inactive = Number(/^total_inactive_file (\d+)$/m.exec(stat ?? '')?.[1] ?? 0);
    return Math.max(0, Number(usage) - inactive);
  }
  const usage = await tree.read(cgroup, 'memory', 'memory.current');
  const stat = await tree.read(cgroup, 'memory', 'memory.stat');
  if (usage === undefined) return undefined;
  const inactive = Number(/^inactive_file (\d+)$/m.exec(stat ?? '')?.[1] ?? 0);
  return Math.max(0, Number(usage) - inactive);
}

export interface NodeObserverOptions {
  tree: CgroupTree;
  rootDir: string;
  /** The runtime's image filesystem (ImageFsInfo); the root dir's when unknown. */
  imageFsDir?: string;
  memoryCapacity: number;
  /** The kubepods cgroup and the memory pods may use (capacity less reservations), for allocatableMemory.available. */
  kubepods?: { cgroup: string; allocatable: number };
}

/** The node's signals now; imagefs is the filesystem the runtime reports for its images (ImageFsInfo), else the root dir's. */
export async function observeNode(o: NodeObserverOptions): Promise<Observations> {
  const obs: Observations = {};
  const rootWs = o.tree.version === 1 ? await workingSet(o.tree, '/') : undefined;
  const mem = meminfo();
  const ws =
    rootWs ??
    (mem.MemTotal !== undefined ? mem.MemTotal - (mem.MemFree ?? 0) - (mem['Inactive(file)'] ?? 0) : undefined);
  if (ws !== undefined) obs['memory.available'] = { available: o.memoryCapacity - ws, capacity: o.memoryCapacity };
  if (o.kubepods) {
    const pods = await workingSet(o.tree, o.kubepods.cgroup);
    if (pods !== undefined)
      obs['allocatableMemory.available'] = {
        available: o.kubepods.allocatable - pods,
        capacity: o.kubepods.allocatable,
      };
  }
  try {
    const s = fs.statfsSync(o.rootDir);
    obs['nodefs.available'] = { available: s.bavail * s.bsize, capacity: s.blocks * s.bsize };
    if (s.files > 0) obs['nodefs.inodesFree'] = { available: s.ffree, capacity: s.files };
  } catch {
    /* no root dir */
  }
  try {
    const s = fs.statfsSync(o.imageFsDir ?? o.rootDir);
    obs['imagefs.available'] = { available: s.bavail * s.bsize, capacity: s.blocks * s.bsize };
    if (s.files > 0) obs['imagefs.inodesFree'] = { available: s.ffree, capacity: s.files };
  } catch {
    /* no image filesystem */
  }
  try {
    const max = Number(fs.readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
    const running = Number(fs.readFileSync('/proc/loadavg', 'utf8').split(/\s+/)[3]?.split('/')[1]);
    if (max > 0 && Number.isFinite(running)) obs['pid.available'] = { available: max - running, capacity: max };
  } catch {
    /* not Linux */
  }
  return obs;
}

/** Bytes a directory tree takes on disk (allocated blocks); a missing one takes none. */
export async function diskUsage(dir: string): Promise<number> {
  let total = 0;
  const walk = async (d: string): Promise<void> => {
    const ents = await fsp.readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else {
        const st = await fsp.lstat(p).catch(() => undefined);
        if (st) total += st.blocks * 512;
      }
    }
  };
  await walk(dir);
  return total;
}

const request = (pod: Pod, name: string, resource: string): number => {
  const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find((x) => x.name === name);
  const q = (c?.resources?.requests as Record<string, string> | undefined)?.[resource];
  return q === undefined ? 0 : parseQuantity(q);
};

/** Each pod's use of `resource`, per container, with what its containers request. */
export async function podUsages(
  pods: { pod: Pod; critical: boolean }[],
  stats: ContainerStats[],
  resource: Resource,
  dirs: { rootDir: string; podLogsDir: string },
): Promise<PodUsage[]> {
  const out: PodUsage[] = [];
  for (const { pod, critical } of pods) {
    const uid = pod.metadata!.uid!;
    const mine = stats.filter((s) => s.attributes?.labels?.[L_POD_UID] === uid);
    const containers = mine.map((s) => {
      const name = s.attributes?.labels?.[L_CONTAINER_NAME] ?? '';
      const usage =
        resource === 'memory'
          ? Number(s.memory?.working_set_bytes?.value ?? 0)
          : resource === 'ephemeral-storage'
            ? Number(s.writable_layer?.used_bytes?.value ?? 0)
            : 0;
      return { name, usage, request: request(pod, name, resource === 'memory' ? 'memory' : 'ephemeral-storage') };
    });
    let podUsage = 0;
    if (resource === 'ephemeral-storage') {
      // Pod-level local storage: emptyDir volumes and the pod's logs.
      const md = pod.metadata!;
      podUsage =
        (await diskUsage(path.join(dirs.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir'))) +
        (await diskUsage(path.join(dirs.podLogsDir, `${md.namespace!}_${md.name!}_${uid}`)));
    }
    out.push({ uid, priority: pod.spec?.priority ?? 0, containers, podUsage, critical });
  }
  return out;
}
