// The upstream kubelet (the fixture `npm run upstream -- build` makes) as the
// kubelet benchmarks run it beside tskube's: the same containerd, CNI conflist,
// cgroup driver, manifest dir and pod-logs dir; its own root dir and cgroup root.
// It runs in a private mount namespace: the bind mount it makes of its root dir
// stays there, and the kernel settings it checks (vm.overcommit_memory, kernel.panic,
// …) read as the values it wants from files mounted over /proc/sys, so it neither
// changes nor refuses the host's.
import fs from 'node:fs';
import path from 'node:path';

import { e2eCgroupRoot, type TestNode } from '../e2e/harness.js';
import { type Proc, start, stopPid, waitFor } from '../e2e/proc.js';
import { upstreamBin } from '../e2e/upstream-control-plane.js';
import type { KubeletRunner } from './kubelet-turns.js';

/** The kernel settings the kubelet's container manager wants (setupKernelTunables), as it wants them. */
export const KERNEL_TUNABLES: Record<string, string> = {
  'vm/overcommit_memory': '1',
  'vm/panic_on_oom': '0',
  'kernel/panic': '10',
  'kernel/panic_on_oops': '1',
  'kernel/keys/root_maxkeys': '1000000',
  'kernel/keys/root_maxbytes': '25000000',
};

/** The fixture's path, or why the upstream columns are skipped. */
export function upstreamKubelet(): { binary: string } | { skipped: string } {
  const binary = upstreamBin('kubelet');
  return fs.existsSync(binary)
    ? { binary }
    : { skipped: `the upstream kubelet is not built (${binary}); npm run upstream -- build makes it` };
}

export interface UpstreamKubeletOptions {
  /** A kubeconfig: API pods and a Node; without one it runs standalone (static pods only). */
  kubeconfig?: string;
  /** Extra KubeletConfiguration fields, as YAML lines. */
  config?: string;
}

/** The KubeletConfiguration: tskube's benchmark settings in upstream's field names. */
export function upstreamKubeletConfig(node: TestNode, cgroupRoot: string, extra = ''): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://${node.socket}
staticPodPath: ${node.manifests}
podLogsDir: ${node.podLogsDir}
cgroupDriver: cgroupfs
cgroupRoot: ${cgroupRoot}
failSwapOn: false
failCgroupV1: false
protectKernelDefaults: true
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
evictionHard: {memory.available: 1Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
${extra}`;
}

/** The upstream kubelet taking its turns in a benchmark: `before` runs first, then a fresh start with `options`. */
export function upstreamRunner(
  node: TestNode,
  binary: string,
  options: UpstreamKubeletOptions = {},
  before: () => void = () => undefined,
): KubeletRunner {
  const k = new UpstreamKubelet(node, binary);
  return {
    name: 'upstream',
    start: async () => {
      before();
      await k.start(options);
      return k.pid;
    },
    stop: () => k.stop(),
  };
}

export class UpstreamKubelet {
  readonly dir: string;
  readonly cgroupRoot: string;
  private proc: Proc | undefined;
  /** The kubelet's own PID (the child is unshare, which execs sh, which execs the kubelet). */
  pid = 0;

  constructor(
    private readonly node: TestNode,
    private readonly binary: string,
  ) {
    this.dir = path.join(node.dir, 'upstream-kubelet');
    this.cgroupRoot = `${e2eCgroupRoot(node.dir)}/upstream`;
  }

  /** Starts it in the node's network namespace; resolves once it answers /healthz. */
  async start(o: UpstreamKubeletOptions = {}): Promise<void> {
    const root = path.join(this.dir, 'root');
    const sys = path.join(this.dir, 'sysctl');
    fs.mkdirSync(root, { recursive: true });
    fs.mkdirSync(sys, { recursive: true });
    // The cgroup root must exist before it starts: in the unified hierarchy, or in every v1 hierarchy.
    const mount = '/sys/fs/cgroup';
    const hierarchies = fs.existsSync(path.join(mount, 'cgroup.controllers'))
      ? [mount]
      : fs
          .readdirSync(mount)
          .map((h) => path.join(mount, h))
          .filter((d) => fs.existsSync(path.join(d, 'cgroup.procs')) && !fs.lstatSync(d).isSymbolicLink());
    for (const h of hierarchies) fs.mkdirSync(path.join(h, this.cgroupRoot), { recursive: true });
    const mounts: string[] = [];
    for (const [k, v] of Object.entries(KERNEL_TUNABLES)) {
      const f = path.join(sys, k.replaceAll('/', '.'));
      fs.writeFileSync(f, `${v}\n`);
      mounts.push(`mount --bind ${f} /proc/sys/${k}`);
    }
    const config = path.join(this.dir, 'kubelet.yaml');
    fs.writeFileSync(config, upstreamKubeletConfig(this.node, this.cgroupRoot, o.config));
    const args = [
      `--config=${config}`,
      `--root-dir=${root}`,
      `--hostname-override=${this.node.name}`,
      `--node-ip=${this.node.nodeIP}`,
      ...(o.kubeconfig ? [`--kubeconfig=${o.kubeconfig}`] : []),
      '--v=1',
    ];
    const script = `${mounts.join(' && ')} && exec "$0" "$@"`;
    this.proc = start(
      'unshare',
      ['--mount', '--propagation', 'slave', '--', 'sh', '-c', script, this.binary, ...args],
      path.join(this.dir, 'kubelet.log'),
      { netns: this.node.netns },
    );
    // nsenter execs unshare, which execs sh, which execs the kubelet: the same PID throughout.
    this.pid = this.proc.pid;
    const r = await waitFor(
      () =>
        (this.proc!.child.exitCode !== null && 'exited') ||
        this.node.httpGet('http://127.0.0.1:10248/healthz', 1) === 'ok',
      60_000,
      200,
      'upstream kubelet /healthz',
    );
    if (r === 'exited') throw new Error(`the upstream kubelet exited: ${this.log().slice(-3000)}`);
    const comm = fs.readFileSync(`/proc/${this.pid}/comm`, 'utf8').trim();
    if (comm !== 'kubelet') throw new Error(`PID ${this.pid} is ${comm}, not the upstream kubelet`);
  }

  log(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'kubelet.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /** Stops it (its pods keep running, as after any kubelet stop). */
  async stop(): Promise<void> {
    if (this.proc) await stopPid(this.proc.pid, 10_000);
    this.proc = undefined;
  }
}
