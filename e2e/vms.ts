// e2e: several "VMs" on one machine. A LAN namespace holds a bridge; each VM is
// a namespace with one veth (eth0) into it, its own data dir, containerd,
// kubelet root and registry. `tskube up` or `tskube join` runs inside a VM as a
// user would run it on a machine. Nothing is routed out of the LAN.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { E2E_ROOT, e2eCgroupRoot, type NodeRecord, recordPath, REPO, sweepStale, teardown } from './harness.js';
import { type Proc, sh, start, stopPid, waitFor } from './proc.js';

export class Lan {
  readonly id = randomBytes(3).toString('hex');
  readonly netns = `tskube-lan-${this.id}`;
  readonly dir = path.join(E2E_ROOT, 'nodes', `lan-${this.id}`);
  readonly vms: Vm[] = [];

  /** `sweep`: first remove what crashed runs left (never for a second LAN of the same run: it would remove the first). */
  async create(sweep = true): Promise<void> {
    if (sweep) await sweepStale();
    fs.mkdirSync(this.dir, { recursive: true });
    fs.writeFileSync(path.join(this.dir, 'owner.pid'), String(process.pid));
    fs.writeFileSync(
      recordPath(this.dir),
      JSON.stringify({ netns: this.netns, dir: this.dir, pids: [] } satisfies NodeRecord),
    );
    sh('ip', ['netns', 'add', this.netns]);
    sh('ip', ['link', 'set', 'lo', 'up'], { netns: this.netns });
    sh('ip', ['link', 'add', 'br0', 'type', 'bridge'], { netns: this.netns });
    sh('ip', ['link', 'set', 'br0', 'up'], { netns: this.netns });
  }

  /**
   * A VM named `name` at `ip` (/24) on this LAN; its default route goes out of eth0, via `gateway` when given.
   * With `ip6` (a /64 on the same link) it is dual-stack and its --node-ip is the pair; its IPv6 default route goes
   * via `gateway6` when given.
   */
  async vm(name: string, ip: string, gateway?: string, ip6?: string, gateway6?: string): Promise<Vm> {
    const vm = new Vm(name, ip, ip6);
    fs.mkdirSync(vm.dir, { recursive: true });
    fs.writeFileSync(path.join(vm.dir, 'owner.pid'), String(process.pid));
    vm.record();
    sh('ip', ['netns', 'add', vm.netns]);
    sh('ip', ['link', 'set', 'lo', 'up'], { netns: vm.netns });
    const port = `p${vm.id}`;
    sh('ip', ['-n', this.netns, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', vm.netns]);
    sh('ip', ['-n', this.netns, 'link', 'set', port, 'master', 'br0', 'up']);
    sh('ip', ['addr', 'add', `${ip}/24`, 'dev', 'eth0'], { netns: vm.netns });
    // nodad: usable at once, no duplicate address detection to wait for on a LAN of our own.
    if (ip6) sh('ip', ['-6', 'addr', 'add', `${ip6}/64`, 'dev', 'eth0', 'nodad'], { netns: vm.netns });
    sh('ip', ['link', 'set', 'eth0', 'up'], { netns: vm.netns });
    sh('ip', ['route', 'add', 'default', ...(gateway ? ['via', gateway] : []), 'dev', 'eth0'], { netns: vm.netns });
    // A host reaches IPv6 cluster IPs through its default route too (netfilter rewrites the packet after routing).
    if (ip6)
      sh('ip', ['-6', 'route', 'add', 'default', ...(gateway6 ? ['via', gateway6] : []), 'dev', 'eth0'], {
        netns: vm.netns,
      });
    this.vms.push(vm);
    return vm;
  }

  /**
   * A router namespace between this LAN (at `here`/24) and `other` (at `there`/24) that forwards between them; with
   * `here6` and `there6` (/64s) it routes IPv6 between them too.
   */
  router(other: Lan, here: string, there: string, here6?: string, there6?: string): void {
    const ns = `${this.netns}-rt`;
    // Recorded like a node, so a crashed run's router is swept too.
    const dir = path.join(E2E_ROOT, 'nodes', `rt-${this.id}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'owner.pid'), String(process.pid));
    fs.writeFileSync(recordPath(dir), JSON.stringify({ netns: ns, dir, pids: [] } satisfies NodeRecord));
    this.routerRec = { netns: ns, dir, pids: [] };
    sh('ip', ['netns', 'add', ns]);
    sh('ip', ['link', 'set', 'lo', 'up'], { netns: ns });
    for (const [lan, ip, ip6, dev] of [
      [this, here, here6, 'r0'],
      [other, there, there6, 'r1'],
    ] as const) {
      const port = `r${lan.id}`;
      sh('ip', ['-n', lan.netns, 'link', 'add', port, 'type', 'veth', 'peer', 'name', dev, 'netns', ns]);
      sh('ip', ['-n', lan.netns, 'link', 'set', port, 'master', 'br0', 'up']);
      sh('ip', ['addr', 'add', `${ip}/24`, 'dev', dev], { netns: ns });
      if (ip6) sh('ip', ['-6', 'addr', 'add', `${ip6}/64`, 'dev', dev, 'nodad'], { netns: ns });
      sh('ip', ['link', 'set', dev, 'up'], { netns: ns });
    }
    sh('sysctl', ['-qw', 'net.ipv4.ip_forward=1'], { netns: ns });
    if (here6) sh('sysctl', ['-qw', 'net.ipv6.conf.all.forwarding=1'], { netns: ns });
  }

  private routerRec: NodeRecord | undefined;

  async cleanup(): Promise<void> {
    // Workers before the control plane, as one would shut a cluster down: a join stopping while its apiserver is gone
    // can run out of time and leave its containerd (teardown then stops it by its PID file).
    for (const vm of [...this.vms].reverse()) await vm.stop().catch(() => undefined);
    for (const vm of this.vms) await teardown({ netns: vm.netns, dir: vm.dir, pids: vm.extraPids });
    if (this.routerRec) await teardown(this.routerRec);
    await teardown({ netns: this.netns, dir: this.dir, pids: [] });
  }
}

export class Vm {
  readonly id = randomBytes(3).toString('hex');
  readonly netns = `tskube-vm-${this.id}`;
  readonly dir = path.join(E2E_ROOT, 'nodes', this.id);
  readonly rootDir = path.join(this.dir, 'kubelet');
  proc: Proc | undefined;
  /** Other processes run in this VM (the upstream control plane's), stopped by teardown after a crash too. */
  readonly extraPids: number[] = [];
  out = '';

  constructor(
    readonly name: string,
    readonly ip: string,
    readonly ip6?: string,
  ) {}

  record(): void {
    const pids = [...(this.proc ? [this.proc.pid] : []), ...this.extraPids];
    fs.writeFileSync(
      recordPath(this.dir),
      JSON.stringify({ netns: this.netns, dir: this.dir, pids } satisfies NodeRecord),
    );
  }

  /** The flags `up` and `join` share: everything under this VM's dir. */
  private common(): string[] {
    return [
      `--data-dir=${this.dir}`,
      '--pod-stop-timeout=5s',
      `--container-runtime-endpoint=unix://${this.dir}/containerd.sock`,
      `--pod-manifest-path=${this.dir}/manifests`,
      `--hostname-override=${this.name}`,
      `--node-ip=${this.ip6 ? `${this.ip},${this.ip6}` : this.ip}`,
      `--root-dir=${this.rootDir}`,
      `--pod-logs-dir=${this.dir}/pod-logs`,
      `--cgroup-root=${e2eCgroupRoot(this.dir)}`,
    ];
  }

  /** Starts `tskube <cmd>` and resolves with its output once `done` matches it (or throws when it exits first). */
  async run(args: string[], done: RegExp, timeoutMs = 300_000): Promise<string> {
    this.out = path.join(this.dir, `${args[0]}-${Date.now()}.out`);
    this.proc = start(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), ...args, ...this.common()],
      this.out,
      { netns: this.netns, cwd: REPO },
    );
    this.record();
    const r = await waitFor(
      () => done.test(this.log()) || (this.proc!.child.exitCode !== null && 'exited'),
      timeoutMs,
      500,
      String(done),
    );
    if (r === 'exited') throw new Error(`tskube ${args[0]} exited: ${this.log()}`);
    return this.log();
  }

  /** Runs `tskube join …` that must fail: its exit code and output. */
  async joinFails(args: string[], extra: string[] = []): Promise<{ code: number | null; out: string }> {
    this.out = path.join(this.dir, `join-fail-${Date.now()}.out`);
    const p = start(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), ...args, ...this.common(), ...extra],
      this.out,
      { netns: this.netns, cwd: REPO },
    );
    const code = await Promise.race([
      p.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref()),
    ]);
    if (code === 'timeout') {
      await stopPid(p.pid, 1000, 'SIGKILL');
      throw new Error(`tskube join did not fail within 60 s: ${this.log()}`);
    }
    return { code, out: this.log() };
  }

  log(): string {
    try {
      return fs.readFileSync(this.out, 'utf8');
    } catch {
      return '';
    }
  }

  componentLog(name: string): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'logs', `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  exec(cmd: string, args: string[], o: { input?: string; allowFail?: boolean; timeoutMs?: number } = {}): string {
    return sh(cmd, args, {
      netns: this.netns,
      timeoutMs: o.timeoutMs ?? 30_000,
      input: o.input,
      allowFail: o.allowFail,
    });
  }

  httpGet(url: string, timeoutSec = 3): string {
    return sh(process.execPath, [path.join(REPO, 'e2e/http-get.mjs'), url, String(timeoutSec * 1000)], {
      netns: this.netns,
      allowFail: true,
      timeoutMs: (timeoutSec + 5) * 1000,
    });
  }

  /** Ctrl-C, as a terminal would send it; resolves with the exit code. */
  async stop(): Promise<number | null> {
    const p = this.proc;
    if (!p) return null;
    this.proc = undefined;
    if (p.child.exitCode !== null) return p.child.exitCode;
    await stopPid(p.pid, 60_000, 'SIGINT');
    return p.child.exitCode;
  }
}

/** The Running, not terminating pods labelled app=`app`: name, IP and node, from `kubectl get -o json`. */
export function runningPods(
  kubectl: (args: string[]) => string,
  app: string,
): { name: string; ip: string; node: string }[] {
  const list = JSON.parse(kubectl(['get', 'pods', '-l', `app=${app}`, '-o', 'json'])) as { items: Pod[] };
  return list.items
    .filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp)
    .map((p) => ({ name: p.metadata!.name!, ip: p.status!.podIP ?? '', node: p.spec!.nodeName ?? '' }));
}

/** A GET from inside a pod with busybox nc (Debian's static busybox wget crashes there too): prints the body's last line. */
export const HTTP_GET = `get() { printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 $1 $2 | tail -n 1 | grep .; }`;

/** A Deployment of the app image whose pods serve their own name on :8080, so an answer says which pod gave it. */
export function whoamiDeployment(name: string, replicas: number, podSpecExtra = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      terminationGracePeriodSeconds: 1
${podSpecExtra}      containers:
      - name: app
        image: 127.0.0.1:5000/tskube/app:1
        command: [sh, -c, 'mkdir -p /tmp/w && hostname > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w']
`;
}
