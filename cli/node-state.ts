// What `up` and `join` set up on this machine, kept in <data-dir>/node.json so
// that `tskube reset` undoes exactly that (the dirs, sockets and pod network
// they used), whatever flags they were given.
import fs from 'node:fs';
import path from 'node:path';

export interface NodeState {
  command: 'up' | 'join';
  /** The up/join process while it runs. */
  pid: number;
  endpoint: string;
  /** containerd was started by up/join with this config (not a containerd that was already running). */
  containerdConfig?: string;
  rootDir: string;
  podLogsDir?: string;
  cniConfDir?: string;
  ipamDir?: string;
  podNetwork?: string;
  /** The kubelet's cgroupRoot and cgroupDriver: its kubepods cgroups are under them. */
  cgroupRoot?: string;
  cgroupDriver?: 'cgroupfs' | 'systemd';
}

export const nodeStateFile = (data: string): string => path.join(data, 'node.json');

export function readNodeState(data: string): NodeState | undefined {
  try {
    return JSON.parse(fs.readFileSync(nodeStateFile(data), 'utf8')) as NodeState;
  } catch {
    return undefined;
  }
}

/** Merges `patch` into the record (written whole each time: it is a handful of fields). */
export function recordNodeState(data: string, patch: Partial<NodeState>): void {
  const next = { ...readNodeState(data), ...patch };
  fs.mkdirSync(data, { recursive: true });
  fs.writeFileSync(nodeStateFile(data), `${JSON.stringify(next, null, 2)}\n`);
}

/** Whether a process with this PID runs and its command line mentions `name` (a PID reused by something else does not count). */
export function processRuns(pid: number, name: string): boolean {
  try {
    return fs
      .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .some((a) => a.includes(name));
  } catch {
    return false;
  }
}
