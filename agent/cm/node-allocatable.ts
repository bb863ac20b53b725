// Node capacity and allocatable as upstream reports them: cpu, memory,
// pods, ephemeral-storage (the filesystem of the kubelet's root dir) and
// hugepages; allocatable = capacity − kubeReserved − systemReserved − hard
// eviction thresholds (memory also less the hugepages), never below zero.
import fs from 'node:fs';
import os from 'node:os';

import { formatBytes, formatMilliCpu, milliValue, parseQuantity } from '../../kube/quantity.js';

export interface Capacity {
  cpuMilli: number;
  memory: number;
  ephemeralStorage: number;
  pods: number;
  /** hugepages-2Mi, hugepages-1Gi: bytes. */
  hugepages: Record<string, number>;
}

/** A threshold: an amount, or a share of capacity (10%). */
export type Threshold = { quantity: number } | { percentage: number };

export const DEFAULT_EVICTION_HARD: Record<string, string> = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
};
export const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
  'allocatableMemory.available',
];
const RESERVABLE = ['cpu', 'memory', 'ephemeral-storage', 'pid'];

/** "100Mi" or "10%" (upstream's ParseThresholdConfig values); throws a message naming what is wrong. */
export function parseThreshold(v: string): Threshold {
  const s = v.trim();
  if (s.endsWith('%')) {
    const p = Number(s.slice(0, -1));
    if (!Number.isFinite(p) || p < 0 || p > 100) throw new Error(`invalid percentage: ${s}`);
    return { percentage: p / 100 };
  }
  const q = parseQuantity(s);
  if (q < 0) throw new Error(`eviction threshold must be positive: ${s}`);
  return { quantity: q };
}

export const thresholdValue = (t: Threshold, capacity: number): number =>
  'quantity' in t ? t.quantity : Math.floor(t.percentage * capacity);

/** kubeReserved / systemReserved as a map of resource to quantity; bad keys or values are errors naming the field. */
export function parseReserved(field: string, m: Record<string, string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) {
    if (!RESERVABLE.includes(k))
      throw new Error(`${field}: unsupported resource "${k}" (supported: ${RESERVABLE.join(', ')})`);
    try {
      out[k] = k === 'cpu' ? milliValue(v) : parseQuantity(v);
    } catch (e) {
      throw new Error(`${field}[${k}]: ${(e as Error).message}`, { cause: e });
    }
    if (out[k]! < 0) throw new Error(`${field}[${k}]: must not be negative, got ${v}`);
  }
  return out;
}

/** What this machine has: CPUs, MemTotal, the root dir's filesystem, hugepage pools. */
export function readCapacity(rootDir: string, maxPods: number): Capacity {
  let memory = os.totalmem();
  const meminfo = (() => {
    try {
      return fs.readFileSync('/proc/meminfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const m = /^MemTotal:\s+(\d+) kB/m.exec(meminfo);
  if (m) memory = Number(m[1]) * 1024;
  let ephemeralStorage = 0;
  try {
    fs.mkdirSync(rootDir, { recursive: true });
    const st = fs.statfsSync(rootDir);
    ephemeralStorage = st.blocks * st.bsize;
  } catch {
    /* no root dir: no ephemeral-storage to report */
  }
  const hugepages: Record<string, number> = {};
  for (const [dir, name, size] of [
    ['hugepages-2048kB', 'hugepages-2Mi', 2 * 1024 * 1024],
    ['hugepages-1048576kB', 'hugepages-1Gi', 1024 * 1024 * 1024],
  ] as const) {
    try {
      hugepages[name] = Number(fs.readFileSync(`/sys/kernel/mm/hugepages/${dir}/nr_hugepages`, 'utf8').trim()) * size;
    } catch {
      /* that size is not supported here */
    }
  }
  return { cpuMilli: os.cpus().length * 1000, memory, ephemeralStorage, pods: maxPods, hugepages };
}

export interface Reservations {
  kubeReserved: Record<string, number>;
  systemReserved: Record<string, number>;
  evictionHard: Record<string, Threshold>;
}

/** The reserved total of one resource (kube + system). */
export const reserved = (r: Reservations, k: string): number => (r.kubeReserved[k] ?? 0) + (r.systemReserved[k] ?? 0);

/** Reservations that exceed what the node has: upstream refuses to start. */
export function checkReservations(c: Capacity, r: Reservations): void {
  const have: Record<string, number> = { cpu: c.cpuMilli, memory: c.memory, 'ephemeral-storage': c.ephemeralStorage };
  for (const k of Object.keys(have)) {
    const total = reserved(r, k);
    if (total > have[k]!)
      throw new Error(
        `kubeReserved + systemReserved ${k} (${k === 'cpu' ? formatMilliCpu(total) : formatBytes(total)}) is more than the node's capacity (${k === 'cpu' ? formatMilliCpu(have[k]!) : formatBytes(have[k]!)})`,
      );
  }
}

/** status.capacity and status.allocatable. */
export function nodeResources(
  c: Capacity,
  r: Reservations,
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const hugeTotal = Object.values(c.hugepages).reduce((a, b) => a + b, 0);
  const hard = (signal: string, of: number): number =>
    r.evictionHard[signal] ? thresholdValue(r.evictionHard[signal]!, of) : 0;
  const capacity: Record<string, string> = {
    cpu: formatMilliCpu(c.cpuMilli),
    'ephemeral-storage': formatBytes(c.ephemeralStorage),
    memory: formatBytes(c.memory),
    pods: String(c.pods),
  };
  for (const [k, v] of Object.entries(c.hugepages)) capacity[k] = formatBytes(v);
  const clamp = (n: number): number => Math.max(0, n);
  const allocatable: Record<string, string> = {
    cpu: formatMilliCpu(clamp(c.cpuMilli - reserved(r, 'cpu'))),
    'ephemeral-storage': formatBytes(
      clamp(c.ephemeralStorage - reserved(r, 'ephemeral-storage') - hard('nodefs.available', c.ephemeralStorage)),
    ),
    memory: formatBytes(clamp(c.memory - reserved(r, 'memory') - hard('memory.available', c.memory) - hugeTotal)),
    pods: String(c.pods),
  };
  for (const [k, v] of Object.entries(c.hugepages)) allocatable[k] = formatBytes(v);
  return { capacity, allocatable };
}
