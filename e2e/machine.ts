// e2e: a "machine" — a network namespace plus a private mount namespace whose /etc,
// /var/lib, /opt and /usr/local are overlays over the host's (and /run, /var/log,
// /var/lib/containerd tmpfs), so what an install or kubeadm writes at the real paths
// (/etc/kubernetes, /var/lib/kubelet, /etc/containerd) never touches the host's.
// Its processes are found and stopped by PID through /proc/<pid>/ns/mnt.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { REPO } from './harness.js';
import { type Proc, start, stopPid, waitFor } from './proc.js';

/** Runs in the machine's new mount namespace: private copies of what an install writes, then waits to be killed. */
export const HOLDER = `set -e
S=$1
mount -t tmpfs tmpfs "$S"
for d in etc varlib opt usrlocal; do mkdir -p "$S/$d/upper" "$S/$d/work"; done
mount -t overlay overlay -o lowerdir=/etc,upperdir=$S/etc/upper,workdir=$S/etc/work /etc
mount -t overlay overlay -o lowerdir=/var/lib,upperdir=$S/varlib/upper,workdir=$S/varlib/work /var/lib
mount -t overlay overlay -o lowerdir=/opt,upperdir=$S/opt/upper,workdir=$S/opt/work /opt
mount -t overlay overlay -o lowerdir=/usr/local,upperdir=$S/usrlocal/upper,workdir=$S/usrlocal/work /usr/local
mkdir -p /var/lib/containerd && mount -t tmpfs tmpfs /var/lib/containerd
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/log
echo ready
exec sleep infinity
`;

/**
 * A unit's `key` lines (ExecStart, ExecStartPre) as argvs, with $VARS from its Environment= lines and
 * EnvironmentFile(s) (read with `read`, inside the machine), as systemd would expand them.
 */
export function execLines(unit: string, key: string, read: (file: string) => string): string[][] {
  const env: Record<string, string> = {};
  const assign = (text: string): void => {
    for (const l of text.split('\n')) {
      const kv = /^([A-Z_][A-Z0-9_]*)=(?:"(.*)"|(.*))$/.exec(l.trim());
      if (kv) env[kv[1]!] = kv[2] ?? kv[3] ?? '';
    }
  };
  for (const m of unit.matchAll(/^Environment=(.+)$/gm)) assign(m[1]!.replace(/^"(.*)"$/, '$1'));
  for (const m of unit.matchAll(/^EnvironmentFile=-?(\S+)$/gm)) {
    try {
      assign(read(m[1]!));
    } catch {
      continue;
    }
  }
  return [...unit.matchAll(new RegExp(`^${key}=(.+)$`, 'gm'))].map((m) =>
    m[1]!
      .trim()
      .split(/\s+/)
      .flatMap((w) => (/^\$[A-Z_]+$/.test(w) ? (env[w.slice(1)] ?? '').split(/\s+/).filter(Boolean) : [w])),
  );
}

/** The processes sharing `holder`'s mount namespace, but `holder` itself (found through /proc, never by name). */
export function pidsInMountNamespaceOf(holder: number): number[] {
  const ns = fs.readlinkSync(`/proc/${holder}/ns/mnt`);
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => {
      try {
        return p !== holder && fs.readlinkSync(`/proc/${p}/ns/mnt`) === ns;
      } catch {
        return false;
      }
    });
}

export class Machine {
  private holder: ChildProcess | undefined;
  readonly scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-machine-'));
  readonly logs = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-machine-logs-'));
  readonly daemons = new Map<string, Proc>();

  constructor(readonly netns: string) {}

  /** nsenter arguments that enter this machine's mount and network namespaces. */
  enter(): string[] {
    return ['-t', String(this.holder!.pid), '-m', '-n', `--wd=${REPO}`];
  }

  async create(): Promise<void> {
    fs.writeFileSync(path.join(this.logs, 'holder.sh'), HOLDER);
    const holder = spawn(
      'nsenter',
      [
        `--net=/run/netns/${this.netns}`,
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'bash',
        path.join(this.logs, 'holder.sh'),
        this.scratch,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.holder = holder;
    let out = '';
    holder.stdout.on('data', (b: Buffer) => (out += b.toString()));
    holder.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const r = await waitFor(
      () => out.includes('ready') || (holder.exitCode !== null && 'exited'),
      20_000,
      100,
      'the machine mount namespace',
    );
    if (r === 'exited') throw new Error(`mount namespace: ${out}`);
  }

  /** Runs a command in the machine to its end; throws with its output when it fails. */
  run(cmd: string, args: string[], o: { timeoutMs?: number; env?: NodeJS.ProcessEnv; input?: string } = {}): string {
    const r = spawnSync('nsenter', [...this.enter(), cmd, ...args], {
      encoding: 'utf8',
      timeout: o.timeoutMs ?? 30_000,
      env: o.env ?? process.env,
      input: o.input,
    });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (exit ${r.status}): ${r.stdout}${r.stderr}`);
    return r.stdout;
  }

  /** Whether a command in the machine succeeds. */
  ok(cmd: string, args: string[]): boolean {
    return spawnSync('nsenter', [...this.enter(), cmd, ...args], { timeout: 30_000 }).status === 0;
  }

  read(file: string): string {
    return this.run('cat', [file]);
  }

  write(file: string, content: string): void {
    this.run('sh', ['-c', `mkdir -p "$(dirname "$1")" && cat > "$1"`, 'sh', file], { input: content });
  }

  /** Starts a daemon in the machine; its output goes to <logs>/<name>.log. */
  daemon(name: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Proc {
    const p = start('nsenter', [...this.enter(), ...argv], path.join(this.logs, `${name}.log`), { env });
    this.daemons.set(name, p);
    return p;
  }

  log(name: string): string {
    try {
      return fs.readFileSync(path.join(this.logs, `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  /** Processes in the machine's mount namespace but the holder. */
  pids(): number[] {
    return this.holder?.pid ? pidsInMountNamespaceOf(this.holder.pid) : [];
  }

  /**
   * Stops every process left in the machine (by PID), then the holder; the overlays go with it. Again while any are
   * left: a kubelet still running while the others stop starts its static pods again (new shims).
   */
  async destroy(): Promise<void> {
    if (this.holder?.pid) {
      for (let round = 0; round < 5; round++) {
        const left = this.pids();
        if (!left.length) break;
        for (const pid of left) await stopPid(pid, 3000);
      }
      await stopPid(this.holder.pid, 2000, 'SIGKILL');
    }
    fs.rmSync(this.scratch, { recursive: true, force: true });
    if (!process.env.TSKUBE_E2E_KEEP_LOGS) fs.rmSync(this.logs, { recursive: true, force: true });
  }
}
