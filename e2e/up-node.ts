// e2e: one `tskube up` node in its own network namespace and data dir, with
// kubectl and curl run inside that namespace. Shared by the up and security suites.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { cliArgs, E2E_ROOT, e2eCgroupRoot, recordPath, REPO, sweepStale } from './harness.js';
import { type Proc, sh, start, stopPid, waitFor } from './proc.js';

export class UpNode {
  readonly id = randomBytes(3).toString('hex');
  readonly netns = `tskube-up-${this.id}`;
  readonly dir = path.join(E2E_ROOT, 'nodes', this.id);
  readonly nodeIP = `10.251.${Math.floor(Math.random() * 250)}.1`;
  readonly name = 'up-node';
  readonly pki = path.join(this.dir, 'pki');
  readonly kubeconfig = path.join(this.pki, 'admin.kubeconfig');
  readonly rootDir = path.join(this.dir, 'kubelet');
  readonly manifests = path.join(this.dir, 'manifests');
  proc: Proc | undefined;
  out = '';

  /** The namespace, with the node IP on lo; `tskube up` is started by run(). */
  async create(): Promise<void> {
    await sweepStale();
    fs.mkdirSync(this.manifests, { recursive: true });
    fs.writeFileSync(path.join(this.dir, 'owner.pid'), String(process.pid));
    sh('ip', ['netns', 'add', this.netns]);
    sh('ip', ['link', 'set', 'lo', 'up'], { netns: this.netns });
    sh('ip', ['addr', 'add', `${this.nodeIP}/32`, 'dev', 'lo'], { netns: this.netns });
    this.record();
  }

  private record(): void {
    fs.writeFileSync(
      recordPath(this.dir),
      JSON.stringify({ netns: this.netns, dir: this.dir, pids: this.proc ? [this.proc.pid] : [] }),
    );
  }

  /** Starts `tskube up` (the compiled CLI, as `npm start` runs it, leading its own process group) and waits for "tskube is up". */
  async run(): Promise<void> {
    this.out = path.join(this.dir, `up-${Date.now()}.out`);
    this.proc = start(
      process.execPath,
      [
        ...cliArgs(REPO, 'compiled'),
        'up',
        '--pod-stop-timeout=10s',
        '--cluster-cidr=10.247.0.0/16',
        `--data-dir=${this.dir}`,
        `--container-runtime-endpoint=unix://${this.dir}/containerd.sock`,
        `--pod-manifest-path=${this.manifests}`,
        `--hostname-override=${this.name}`,
        `--node-ip=${this.nodeIP}`,
        `--root-dir=${this.rootDir}`,
        `--pod-logs-dir=${this.dir}/pod-logs`,
        `--cgroup-root=${e2eCgroupRoot(this.dir)}`,
      ],
      this.out,
      { netns: this.netns, cwd: REPO, group: true },
    );
    this.record();
    const r = await waitFor(
      () => /tskube is up/.test(fs.readFileSync(this.out, 'utf8')) || (this.proc!.child.exitCode !== null && 'exited'),
      300_000,
      500,
      '"tskube is up"',
    );
    if (r === 'exited') throw new Error(`tskube up exited: ${fs.readFileSync(this.out, 'utf8')}`);
  }

  log(): string {
    return fs.readFileSync(this.out, 'utf8');
  }

  /** One component's log under <data-dir>/logs (kubelet, apiserver, kube-proxy, ...). */
  componentLog(name: string): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'logs', `${name}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  kubectl(args: string[], o: { kubeconfig?: string; input?: string } = {}): string {
    return sh('kubectl', [`--kubeconfig=${o.kubeconfig ?? this.kubeconfig}`, ...args], {
      netns: this.netns,
      timeoutMs: 30_000,
      input: o.input,
    });
  }

  /** kubectl that is expected to succeed, with what it printed on stderr (the server's warnings). */
  kubectlWarnings(args: string[], o: { kubeconfig?: string; input?: string } = {}): { out: string; warnings: string } {
    const r = spawnSync(
      'nsenter',
      [`--net=/run/netns/${this.netns}`, 'kubectl', `--kubeconfig=${o.kubeconfig ?? this.kubeconfig}`, ...args],
      { encoding: 'utf8', timeout: 30_000, input: o.input },
    );
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr.trim() || r.error?.message}`);
    return { out: r.stdout, warnings: r.stderr };
  }

  /** kubectl that is expected to fail: its error text. */
  kubectlFails(args: string[], o: { kubeconfig?: string; input?: string } = {}): string {
    try {
      const out = this.kubectl(args, o);
      throw new Error(`kubectl ${args.join(' ')} succeeded: ${out}`);
    } catch (e) {
      if ((e as Error).message.startsWith('kubectl ') && (e as Error).message.includes('succeeded')) throw e;
      return (e as Error).message;
    }
  }

  /** The apiserver URL as reached from inside the namespace. */
  get server(): string {
    return `https://${this.nodeIP}:6443`;
  }

  async stop(): Promise<void> {
    if (this.proc) await stopPid(this.proc.pid, 60_000, 'SIGINT');
    this.proc = undefined;
    await sweepStale();
  }
}
