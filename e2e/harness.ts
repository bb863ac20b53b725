// e2e harness: one throwaway network namespace per node, with its own
// containerd (root, state, socket, CNI config), a local registry inside the
// namespace, and locally built images. Cleanup is by PID, bounded in time,
// and also sweeps what a crashed earlier run left behind.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { CgroupTree } from '../agent/cm/cgroupfs.js';
import { CriClient } from '../agent/cri/client.js';
import { L_POD_UID } from '../agent/pods/labels.js';
import { mountsUnder } from '../agent/volumes/mounts.js';
import { registryConfig, writeContainerdFiles } from '../cli/containerd-config.js';
import { buildImage, type BuiltImage, IMAGES, pushImage } from '../images/build.js';
import { alive, type Proc, sh, start, stopPid, waitFor } from './proc.js';
import { cgroupPids, shimPidsUnder } from './teardown/leftovers.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const E2E_ROOT = process.env.TSKUBE_E2E_ROOT ?? '/tmp/tskube-e2e';
// The tskube processes tests and benchmarks start get the fixed malloc mmap threshold the installed `tskube` command
// and the npm scripts give them (docs/kubelet-config.md, "The process's memory").
process.env.MALLOC_MMAP_THRESHOLD_ ??= '131072';

/**
 * How the harness runs the tskube CLI: through tsx (the sources, the default) or the compiled build in dist/
 * (what users run). TSKUBE_CLI=compiled|tsx overrides a starter's default; bench:footprint sets it to compare them.
 */
export function cliArgs(repo: string, dflt: 'tsx' | 'compiled' = 'tsx'): string[] {
  const mode = process.env.TSKUBE_CLI ?? dflt;
  // Node flags NODE_OPTIONS refuses (--cpu-prof), for profiling a run.
  const nodeArgs = (process.env.TSKUBE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return [
    ...nodeArgs,
    ...(mode === 'compiled'
      ? [path.join(repo, 'dist/cli/tskube.js')]
      : ['--import', 'tsx', path.join(repo, 'cli/tskube.ts')]),
  ];
}
export const REGISTRY = '127.0.0.1:5000';
export const SERVICE_CIDR = '10.96.0.0/12';
export const PAUSE_IMAGE = `${REGISTRY}/tskube/pause:1`;
export const APP_IMAGE = `${REGISTRY}/tskube/app:1`;
/** A second runc handler in every test node's containerd, with its own state root: what a RuntimeClass selects. */
export const ALT_RUNTIME_HANDLER = 'tskube-alt';

const REQUIRED_BINARIES = [
  'containerd',
  'containerd-shim-runc-v2',
  'runc',
  'skopeo',
  'docker-registry',
  'ip',
  'nsenter',
  'tar',
];

/** Fails loudly with what is missing; TSKUBE_E2E_SKIP=1 lets a developer opt out locally. */
export function e2eSkipReason(): string | undefined {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (run as root: network namespaces and containerd need it)');
  for (const b of REQUIRED_BINARIES)
    if (!sh('sh', ['-c', `command -v ${b}`], { allowFail: true }).trim()) missing.push(b);
  for (const f of [
    '/usr/lib/cni/bridge',
    '/usr/lib/cni/host-local',
    '/usr/lib/cni/loopback',
    '/usr/lib/cni/portmap',
    '/bin/busybox',
  ])
    if (!fs.existsSync(f)) missing.push(f);
  if (missing.length === 0) return undefined;
  const msg = `e2e prerequisites missing: ${missing.join(', ')}. Install them with .ci/install-deps (see README).`;
  if (process.env.TSKUBE_E2E_SKIP === '1') return msg;
  throw new Error(msg);
}

let images: Promise<BuiltImage[]> | undefined;
export function builtImages(): Promise<BuiltImage[]> {
  images ??= Promise.resolve().then(() => {
    const dir = path.join(E2E_ROOT, 'images');
    fs.mkdirSync(dir, { recursive: true });
    return IMAGES.map((s) => buildImage(s, dir));
  });
  return images;
}

export interface NodeRecord {
  netns: string;
  dir: string;
  pids: number[];
}

export function recordPath(dir: string): string {
  return path.join(dir, 'harness.json');
}

export async function teardown(rec: NodeRecord): Promise<void> {
  for (const pid of rec.pids) await stopPid(pid, 3000);
  // Daemons `tskube up|join` started and did not get to stop (it was killed): their PIDs are in <data-dir>/<name>.pid.
  for (const f of ['containerd.pid', 'registry.pid', 'dnsmasq.pid']) {
    const pid = Number(safeRead(path.join(rec.dir, f)).trim());
    if (pid > 1) await stopPid(pid, 3000);
  }
  // A node killed before it stopped its pods leaves their processes and containerd's shims running.
  for (const pid of cgroupPids(e2eCgroupRoot(rec.dir))) await stopPid(pid, 2000, 'SIGKILL');
  for (const pid of shimPidsUnder(rec.dir)) await stopPid(pid, 2000, 'SIGKILL');
  for (const mp of await mountsUnder(rec.dir)) sh('umount', ['-l', mp], { allowFail: true });
  if (rec.netns) {
    sh('ip', ['netns', 'del', rec.netns], { allowFail: true });
    sh('ip', ['netns', 'del', `${rec.netns}-svc`], { allowFail: true });
  }
  fs.rmSync(rec.dir, { recursive: true, force: true, maxRetries: 3 });
  // The node's pod cgroups (its kubelet's --cgroup-root), in every hierarchy.
  const cgroups = new CgroupTree();
  await cgroups.remove(e2eCgroupRoot(rec.dir)).catch(() => undefined);
  await cgroups.removeIfEmpty('/tskube-e2e');
}

/** Each e2e node's kubelet makes its kubepods under a cgroup of its own, so nodes on one machine never share QoS cgroups. */
export const e2eCgroupRoot = (dir: string): string => `/tskube-e2e/${path.basename(dir)}`;

function safeReaddir(d: string): string[] {
  try {
    return fs.readdirSync(d);
  } catch {
    return [];
  }
}

/** Removes nodes left by an earlier run that crashed before its cleanup. */
export async function sweepStale(): Promise<void> {
  const nodes = path.join(E2E_ROOT, 'nodes');
  for (const n of safeReaddir(nodes)) {
    const dir = path.join(nodes, n);
    let rec: NodeRecord | undefined;
    try {
      rec = JSON.parse(fs.readFileSync(recordPath(dir), 'utf8')) as NodeRecord;
    } catch {
      rec = { netns: '', dir, pids: [] };
    }
    const owner = Number(safeRead(path.join(dir, 'owner.pid')));
    if (owner && owner !== process.pid && alive(owner)) continue; // another live run owns it
    await teardown(rec);
  }
}

function safeRead(f: string): string {
  try {
    return fs.readFileSync(f, 'utf8');
  } catch {
    return '';
  }
}

let subnetCounter = Math.floor(Math.random() * 200);

export class TestNode {
  readonly id = randomBytes(3).toString('hex');
  readonly netns = `tskube-${this.id}`;
  readonly name: string;
  readonly dir: string;
  readonly socket: string;
  readonly manifests: string;
  readonly podLogsDir: string;
  readonly kubeletRoot: string;
  /** The state root of the ALT_RUNTIME_HANDLER runc: a container it runs has a directory there. */
  readonly altRuncRoot: string;
  readonly podSubnet: string;
  /** The node's own address, on lo: pods reach it (the apiserver through the kubernetes Service, the kubelet). */
  readonly nodeIP: string;
  cri!: CriClient;
  containerd: Proc | undefined;
  private registry: Proc | undefined;
  kubelet: Proc | undefined;
  proxy: Proc | undefined;
  private kubeletRuns = 0;

  constructor(name = 'node-a') {
    this.name = name;
    this.dir = path.join(E2E_ROOT, 'nodes', this.id);
    this.socket = path.join(this.dir, 'containerd.sock');
    this.manifests = path.join(this.dir, 'manifests');
    this.podLogsDir = path.join(this.dir, 'pod-logs');
    this.kubeletRoot = path.join(this.dir, 'kubelet');
    this.altRuncRoot = path.join(this.dir, 'alt-runc');
    const n = subnetCounter++ % 250;
    this.podSubnet = `10.244.${n}.0/24`;
    this.nodeIP = `10.250.${n}.1`;
  }

  private save(): void {
    const pids = [this.proxy?.pid, this.kubelet?.pid, this.registry?.pid, this.containerd?.pid].filter(
      (p): p is number => !!p,
    );
    fs.writeFileSync(
      recordPath(this.dir),
      JSON.stringify({ netns: this.netns, dir: this.dir, pids } satisfies NodeRecord),
    );
  }

  async start(): Promise<void> {
    for (const d of ['root', 'state', 'cni', 'ipam', 'certs.d/127.0.0.1:5000', 'manifests', 'pod-logs', 'kubelet'])
      fs.mkdirSync(path.join(this.dir, d), { recursive: true });
    fs.writeFileSync(path.join(this.dir, 'owner.pid'), String(process.pid));
    this.save();
    sh('ip', ['netns', 'add', this.netns]);
    sh('ip', ['link', 'set', 'lo', 'up'], { netns: this.netns });
    sh('ip', ['addr', 'add', `${this.nodeIP}/32`, 'dev', 'lo'], { netns: this.netns });
    // Second guard: the service range is routed over a veth into a sink namespace that forwards nothing,
    // so untranslated service traffic is dropped there. (An `unreachable` route would also keep it in, but
    // would fail such packets at routing, before kube-proxy's filter rules could REJECT them, and "a Service
    // without endpoints refuses at once" could not be tested.)
    sh('ip', ['netns', 'add', `${this.netns}-svc`]);
    sh('ip', [
      'link',
      'add',
      'tsk-svc',
      'netns',
      this.netns,
      'type',
      'veth',
      'peer',
      'name',
      'tsk-sink',
      'netns',
      `${this.netns}-svc`,
    ]);
    sh('ip', ['link', 'set', 'tsk-sink', 'up'], { netns: `${this.netns}-svc` });
    sh('ip', ['link', 'set', 'tsk-svc', 'up'], { netns: this.netns });
    sh('ip', ['route', 'add', SERVICE_CIDR, 'dev', 'tsk-svc'], { netns: this.netns });
    this.writeConfigs();
    await this.startRegistry();
    this.containerd = start(
      'containerd',
      ['--config', path.join(this.dir, 'config.toml')],
      path.join(this.dir, 'containerd.log'),
      { netns: this.netns },
    );
    this.save();
    this.cri = new CriClient({ endpoint: this.socket, timeoutMs: 60_000 });
    await waitFor(
      async () => fs.existsSync(this.socket) && (await this.cri.version()).runtime_name,
      30_000,
      200,
      `containerd on ${this.socket} (log: ${path.join(this.dir, 'containerd.log')})`,
    );
  }

  private writeConfigs(): void {
    const d = this.dir;
    writeContainerdFiles(
      {
        root: `${d}/root`,
        state: `${d}/state`,
        socket: this.socket,
        sandboxImage: PAUSE_IMAGE,
        cniConfDir: `${d}/cni`,
        certsDir: `${d}/certs.d`,
        runtimes: { [ALT_RUNTIME_HANDLER]: { root: this.altRuncRoot } },
      },
      path.join(d, 'config.toml'),
      { bridge: `tsk${this.id}`, subnet: this.podSubnet, ipamDir: `${d}/ipam`, ipMasq: false },
      REGISTRY,
    );
    fs.writeFileSync(path.join(d, 'registry.yml'), registryConfig(path.join(E2E_ROOT, 'registry'), REGISTRY));
    fs.writeFileSync(
      path.join(d, 'kubelet.yaml'),
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${this.podLogsDir}\ncgroupRoot: ${e2eCgroupRoot(d)}\n`,
    );
  }

  private async startRegistry(): Promise<void> {
    fs.mkdirSync(path.join(E2E_ROOT, 'registry'), { recursive: true });
    this.registry = start(
      'docker-registry',
      ['serve', path.join(this.dir, 'registry.yml')],
      path.join(this.dir, 'registry.log'),
      { netns: this.netns },
    );
    this.save();
    await waitFor(() => this.httpGet(`http://${REGISTRY}/v2/`, 2) !== '', 20_000, 200, 'registry');
    for (const img of await builtImages()) pushImage(img, REGISTRY, `/run/netns/${this.netns}`);
  }

  /** Starts `tskube agent` in the node namespace. */
  /** `repo`: another checkout of tskube to run the kubelet from (the upgrade test's previous release). */
  startKubelet(extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, repo = REPO): Proc {
    if (this.kubelet && alive(this.kubelet.pid)) throw new Error('kubelet already running');
    this.kubeletRuns++;
    this.kubelet = start(
      process.execPath,
      [
        ...cliArgs(repo),
        'agent',
        `--hostname-override=${this.name}`,
        `--pod-manifest-path=${this.manifests}`,
        `--container-runtime-endpoint=${this.socket}`,
        `--root-dir=${this.kubeletRoot}`,
        `--config=${path.join(this.dir, 'kubelet.yaml')}`,
        '--pod-network=none',
        ...extraArgs,
      ],
      path.join(this.dir, 'kubelet.log'),
      { netns: this.netns, cwd: repo, env: { ...process.env, ...env } },
    );
    this.save();
    return this.kubelet;
  }

  async stopKubelet(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.kubelet) await stopPid(this.kubelet.pid, 5000, signal);
    this.kubelet = undefined;
  }

  /** Starts `tskube proxy` in the node namespace: its iptables rules live and die with the namespace. */
  startProxy(args: string[]): Proc {
    if (this.proxy && alive(this.proxy.pid)) throw new Error('proxy already running');
    this.proxy = start(
      process.execPath,
      [...cliArgs(REPO), 'proxy', `--hostname-override=${this.name}`, ...args],
      path.join(this.dir, 'proxy.log'),
      { netns: this.netns, cwd: REPO },
    );
    this.save();
    return this.proxy;
  }

  async stopProxy(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.proxy) await stopPid(this.proxy.pid, 5000, signal);
    this.proxy = undefined;
  }

  proxyLog(): string {
    return safeRead(path.join(this.dir, 'proxy.log'));
  }

  kubeletLog(): string {
    return safeRead(path.join(this.dir, 'kubelet.log'));
  }

  /** Runs a command in the node's network namespace. */
  exec(cmd: string, args: string[], timeoutMs = 10_000): string {
    return sh(cmd, args, { netns: this.netns, timeoutMs });
  }

  /** GET from the node namespace; '' on any failure. (Debian's static busybox wget crashes outside containers.) */
  httpGet(url: string, timeoutSec = 3): string {
    return sh(process.execPath, [path.join(REPO, 'e2e/http-get.mjs'), url, String(timeoutSec * 1000)], {
      netns: this.netns,
      allowFail: true,
      timeoutMs: (timeoutSec + 5) * 1000,
    });
  }

  async podSandboxes(uid?: string) {
    return this.cri.listPodSandbox(uid ? { label_selector: { [L_POD_UID]: uid } } : undefined);
  }

  async podContainers(uid?: string) {
    return this.cri.listContainers(uid ? { label_selector: { [L_POD_UID]: uid } } : undefined);
  }

  async cleanup(): Promise<void> {
    await this.stopProxy('SIGKILL').catch(() => undefined);
    await this.stopKubelet('SIGKILL').catch(() => undefined);
    // Stop pods through CRI first, so containerd releases IPs and pod netns mounts.
    try {
      const sbs = await this.cri.listPodSandbox();
      for (const s of sbs) {
        await this.cri.stopPodSandbox(s.id).catch(() => undefined);
        await this.cri.removePodSandbox(s.id).catch(() => undefined);
      }
    } catch {
      /* containerd already gone */
    }
    this.cri?.close();
    await teardown({
      netns: this.netns,
      dir: this.dir,
      pids: [this.registry?.pid, this.containerd?.pid].filter((p): p is number => !!p),
    });
  }
}

/** Writes a manifest atomically (temp file + rename), as editors do. */
export function writeManifestAtomic(dir: string, name: string, content: string): void {
  const tmp = path.join(dir, `.${name}.tmp-${process.pid}`);
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, path.join(dir, name));
}
