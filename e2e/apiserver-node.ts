// e2e helper: `tskube apiserver` in its own network namespace, and the real
// kubectl run inside that namespace against the generated admin kubeconfig.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { cliArgs, E2E_ROOT, REPO } from './harness.js';
import { type Proc, sh, start, stopPid, waitFor } from './proc.js';

export class ApiServerNode {
  readonly id = randomBytes(3).toString('hex');
  readonly netns: string;
  private readonly ownNetns: boolean;

  /** Pass a node's namespace to run beside its kubelet; otherwise it gets one of its own. */
  constructor(netns?: string) {
    this.netns = netns ?? `tskube-as-${this.id}`;
    this.ownNetns = netns === undefined;
  }
  readonly dir = path.join(E2E_ROOT, 'apiservers', this.id);
  readonly kubeconfig = path.join(this.dir, 'pki', 'admin.kubeconfig');
  readonly caFile = path.join(this.dir, 'pki', 'pki', 'ca.crt');
  /** Bearer tokens by user, from the apiserver's tokens.csv. */
  token(user: string): string {
    const line = fs
      .readFileSync(path.join(this.dir, 'pki', 'tokens.csv'), 'utf8')
      .split('\n')
      .find((l) => l.split(',')[1] === user);
    if (!line) throw new Error(`no token for ${user}`);
    return line.split(',')[0]!;
  }
  proc: Proc | undefined;

  async start(extra: string[] = []): Promise<void> {
    fs.mkdirSync(this.dir, { recursive: true });
    if (!fs.existsSync(`/run/netns/${this.netns}`)) {
      sh('ip', ['netns', 'add', this.netns]);
      sh('ip', ['link', 'set', 'lo', 'up'], { netns: this.netns });
    }
    this.proc = start(
      process.execPath,
      [
        ...cliArgs(REPO),
        'apiserver',
        '--bind-address=127.0.0.1',
        '--secure-port=6443',
        `--cert-dir=${path.join(this.dir, 'pki')}`,
        '--node-kubeconfigs=node-a',
        ...extra,
      ],
      path.join(this.dir, 'apiserver.log'),
      { netns: this.netns, cwd: REPO },
    );
    await waitFor(
      () => fs.existsSync(this.kubeconfig) && this.kubectlOk(['get', '--raw', '/healthz']),
      30_000,
      200,
      'apiserver up',
    );
  }

  private kubectlOk(args: string[]): boolean {
    return (
      sh('kubectl', [`--kubeconfig=${this.kubeconfig}`, ...args], {
        netns: this.netns,
        allowFail: true,
        timeoutMs: 10_000,
      }) !== ''
    );
  }

  kubectl(args: string[], input?: string, timeoutMs = 30_000): string {
    return sh('kubectl', [`--kubeconfig=${this.kubeconfig}`, ...args], { netns: this.netns, timeoutMs, input });
  }

  /** For long-running commands such as `get -w`. */
  spawnKubectl(args: string[], logFile: string): Proc {
    return start('kubectl', [`--kubeconfig=${this.kubeconfig}`, ...args], logFile, { netns: this.netns });
  }

  async stop(): Promise<void> {
    if (this.proc) await stopPid(this.proc.pid, 5000);
    this.proc = undefined;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    if (this.ownNetns) sh('ip', ['netns', 'del', this.netns], { allowFail: true });
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
