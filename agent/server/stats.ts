// GET /stats/summary: the kubelet's stats/v1alpha1 Summary, built from CRI
// ListContainerStats (per container cpu, memory, writable layer) summed per
// pod, and the node's own cpu, memory and root filesystem from /proc.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { ContainerManager } from '../cm/container-manager.js';
import type { CriClient } from '../cri/client.js';
import type { ContainerStats } from '../cri/types.js';
import { diskUsage } from '../eviction/observe.js';
import { L_CONTAINER_NAME, L_POD_NAME, L_POD_NAMESPACE, L_POD_UID } from '../pods/labels.js';
import { cadvisorMetrics } from './cadvisor-metrics.js';

type Num = { value: string } | null | undefined;
const n = (v: Num): number | undefined => (v ? Number(v.value) : undefined);
const iso = (ns: string | number | undefined): string =>
  new Date(Math.floor(Number(ns ?? 0) / 1e6) || Date.now()).toISOString();
const add = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);

/** CPU time of the whole node, from /proc/stat's first line (USER_HZ ticks). */
function nodeCpuNs(): number {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = f.reduce((s, x) => s + x, 0) - (f[3] ?? 0) - (f[4] ?? 0); // minus idle and iowait
  return busy * 1e7; // 100 ticks per second
}

function meminfo(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of fs.readFileSync('/proc/meminfo', 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+)(?: kB)?/.exec(l);
    if (m) out[m[1]!] = Number(m[2]) * (l.endsWith('kB') ? 1024 : 1);
  }
  return out;
}

export class StatsProvider {
  private last: { at: number; cpuNs: number } | undefined;
  private readonly bootTime = new Date(Date.now() - os.uptime() * 1000).toISOString();

  constructor(
    private readonly cri: CriClient,
    private readonly nodeName: string,
    private readonly rootDir: string,
    /** The pods' log directory and cgroups: pod memory from the pod cgroup, ephemeral storage with logs and emptyDirs. */
    private readonly extra: { podLogsDir?: string; cgroups?: ContainerManager } = {},
  ) {}

  private nodeStats(): Record<string, unknown> {
    const now = Date.now();
    const cpuNs = nodeCpuNs();
    const nano =
      this.last && now > this.last.at
        ? Math.round(((cpuNs - this.last.cpuNs) * 1000) / (now - this.last.at))
        : undefined;
    this.last = { at: now, cpuNs };
    const mem = meminfo();
    const time = new Date(now).toISOString();
    const total = mem.MemTotal ?? os.totalmem();
    const avail = mem.MemAvailable ?? os.freemem();
    const usage = total - (mem.MemFree ?? 0);
    const workingSet = Math.max(0, usage - (mem.Inactive_file ?? 0));
    let fsStats: Record<string, unknown> = { time };
    try {
      const s = fs.statfsSync(this.rootDir);
      fsStats = {
        time,
        availableBytes: s.bavail * s.bsize,
        capacityBytes: s.blocks * s.bsize,
        usedBytes: (s.blocks - s.bfree) * s.bsize,
        inodesFree: s.ffree,
        inodes: s.files,
        inodesUsed: s.files - s.ffree,
      };
    } catch {
      /* no root dir yet */
    }
    return {
      nodeName: this.nodeName,
      startTime: this.bootTime,
      cpu: { time, ...(nano !== undefined ? { usageNanoCores: nano } : {}), usageCoreNanoSeconds: cpuNs },
      memory: {
        time,
        availableBytes: avail,
        usageBytes: usage,
        workingSetBytes: workingSet,
        pageFaults: 0,
        majorPageFaults: 0,
      },
      fs: fsStats,
    };
  }

  /** The /metrics/cadvisor text: container series with their cgroup paths. */
  async cadvisor(): Promise<string> {
    const [stats, containers, images] = await Promise.all([
      this.cri.listContainerStats(),
      this.cri.listContainers(),
      this.cri.listImages().catch(() => []),
    ]);
    // The runtime lists containers by image ID; the image label is its name, as cAdvisor shows it.
    const names = new Map(images.map((i) => [i.id, i.repo_tags[0] ?? i.id]));
    const cm = this.extra.cgroups;
    const parents = new Map<string, string>();
    if (cm)
      for (const uid of new Set(stats.map((s) => s.attributes?.labels?.[L_POD_UID] ?? '')))
        parents.set(uid, (await cm.podCgroupPath(uid)) ?? '');
    return cadvisorMetrics(
      stats,
      containers,
      (uid, id) => `${parents.get(uid) || '/k8s.io'}/${id}`,
      (ref) => names.get(ref) ?? ref,
    );
  }

  async summary(): Promise<Record<string, unknown>> {
    // Three list calls for the whole node; a container's startTime is its CRI created_at, as upstream's CRI stats provider.
    const [stats, sandboxes, containers] = await Promise.all([
      this.cri.listContainerStats(),
      this.cri.listPodSandbox({ state: { state: 'SANDBOX_READY' } }),
      this.cri.listContainers(),
    ]);
    const created = new Map(containers.map((c) => [c.id, Math.floor(Number(c.created_at) / 1e6)]));
    const pods = [];
    for (const sb of sandboxes) {
      const uid = sb.labels[L_POD_UID] ?? sb.metadata?.uid ?? '';
      const mine = stats
        .filter((s) => s.attributes?.labels?.[L_POD_UID] === uid)
        .map((s) => containerSummary(s, created.get(s.attributes?.id ?? '')));
      const sum = (pick: (c: ReturnType<typeof containerSummary>) => number | undefined) =>
        mine.reduce<number | undefined>((a, c) => add(a, pick(c)), undefined);
      const time = new Date().toISOString();
      const podRef = {
        name: sb.labels[L_POD_NAME] ?? sb.metadata?.name ?? '',
        namespace: sb.labels[L_POD_NAMESPACE] ?? sb.metadata?.namespace ?? '',
        uid,
      };
      const logDir = this.extra.podLogsDir
        ? path.join(this.extra.podLogsDir, `${podRef.namespace}_${podRef.name}_${uid}`)
        : undefined;
      for (const c of mine) {
        const used = logDir ? await diskUsage(path.join(logDir, (c.json as { name: string }).name)) : undefined;
        if (used !== undefined) Object.assign(c.json, { logs: { time, usedBytes: used } });
        c.logs = used;
      }
      // Local ephemeral storage as upstream counts it: writable layers, logs and emptyDir volumes.
      const emptyDirs = await diskUsage(path.join(this.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~empty-dir'));
      const logs = logDir ? await diskUsage(logDir) : 0;
      const podWs = this.extra.cgroups ? await this.extra.cgroups.podWorkingSet(uid) : undefined;
      pods.push({
        podRef,
        startTime: iso(sb.created_at),
        containers: mine.map((c) => c.json),
        cpu: { time, usageNanoCores: sum((c) => c.cpuNano), usageCoreNanoSeconds: sum((c) => c.cpuTotal) },
        memory: {
          time,
          usageBytes: sum((c) => c.memUsage),
          workingSetBytes: podWs ?? sum((c) => c.memWs),
          rssBytes: sum((c) => c.memRss),
          pageFaults: sum((c) => c.faults),
          majorPageFaults: sum((c) => c.majorFaults),
        },
        'ephemeral-storage': { time, usedBytes: (sum((c) => c.rootfsUsed) ?? 0) + logs + emptyDirs },
        volume: [],
      });
    }
    return { node: this.nodeStats(), pods };
  }
}

function containerSummary(s: ContainerStats, createdMs: number | undefined) {
  const cpuNano = n(s.cpu?.usage_nano_cores);
  const cpuTotal = n(s.cpu?.usage_core_nano_seconds);
  const memWs = n(s.memory?.working_set_bytes);
  const memUsage = n(s.memory?.usage_bytes);
  const memRss = n(s.memory?.rss_bytes);
  const faults = n(s.memory?.page_faults);
  const majorFaults = n(s.memory?.major_page_faults);
  const rootfsUsed = n(s.writable_layer?.used_bytes);
  const name = s.attributes?.labels?.[L_CONTAINER_NAME] ?? s.attributes?.metadata?.name ?? '';
  return {
    logs: undefined as number | undefined,
    cpuNano,
    cpuTotal,
    memWs,
    memUsage,
    memRss,
    faults,
    majorFaults,
    rootfsUsed,
    json: {
      name,
      startTime: createdMs ? new Date(createdMs).toISOString() : undefined,
      cpu: { time: iso(s.cpu?.timestamp), usageNanoCores: cpuNano, usageCoreNanoSeconds: cpuTotal },
      memory: {
        time: iso(s.memory?.timestamp),
        availableBytes: n(s.memory?.available_bytes),
        usageBytes: memUsage,
        workingSetBytes: memWs,
        rssBytes: memRss,
        pageFaults: faults,
        majorPageFaults: majorFaults,
      },
      rootfs: {
        time: iso(s.writable_layer?.timestamp),
        usedBytes: rootfsUsed,
        inodesUsed: n(s.writable_layer?.inodes_used),
      },
    },
  };
}
