// What `tskube up` and `tskube join` share: the processes they own
// (containerd, the registry), the in-process kubelet, kube-proxy and apiserver,
// starting containerd when none answers, waiting for the Node, and stopping
// everything on Ctrl-C in the reverse order.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { CriClient } from '../agent/cri/client.js';
import { unmountAll } from '../agent/volumes/mounts.js';
import type { RunningApiServer } from '../apiserver/main.js';
import type { RunningDns } from '../dns/main.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { createLogger, type Logger } from '../kube/log.js';
import type { RunningProxy } from '../proxy/main.js';
import { type RunningAgent, startAgent } from './agent.js';
import { type AgentConfig, loadAgentConfig } from './agent-config.js';
import { writeContainerdFiles } from './containerd-config.js';
import { recordNodeState } from './node-state.js';
import { stopPods } from './stop-pods.js';

/** The name every node pulls the demo images by; `up` serves it, joined nodes mirror it. */
export const REGISTRY = '127.0.0.1:5000';
export const REGISTRY_PORT = 5000;

function spawnLogged(cmd: string, args: string[], logFile: string): ChildProcess {
  const fd = fs.openSync(logFile, 'a');
  // In a process group of its own: Ctrl-C in the terminal signals the whole foreground group, and containerd must
  // outlive this process long enough to stop the pods.
  const p = spawn(cmd, args, { stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  return p;
}

export async function until<T>(
  what: string,
  ms: number,
  fn: () => Promise<T | undefined>,
  tick?: (elapsed: number) => void,
): Promise<T> {
  const t0 = Date.now();
  let lastTick = t0;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${Math.round(ms / 1000)}s waiting for ${what}`);
    if (tick && Date.now() - lastTick >= 5000) {
      lastTick = Date.now();
      tick(Date.now() - t0);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

export const DEFAULT_CRI_ENDPOINT = 'unix:///run/containerd/containerd.sock';

/** Whether a CRI runtime answers on the endpoint. */
export async function criAnswers(endpoint: string): Promise<boolean> {
  if (!fs.existsSync(endpoint.replace(/^unix:\/\//, ''))) return false;
  const probe = new CriClient({ endpoint, timeoutMs: 3000 });
  try {
    return await probe.version().then(
      () => true,
      () => false,
    );
  } finally {
    probe.close();
  }
}

export async function httpOk(url: string): Promise<boolean> {
  const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
  return r.ok;
}

/** SIGTERM, then SIGKILL after `ms`; resolves once the child has exited (at once if it never started). */
export const stopChild = (p: ChildProcess, ms = 10_000): Promise<void> =>
  new Promise((resolve) => {
    if (p.pid === undefined || p.exitCode !== null || p.signalCode !== null) return resolve();
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.kill('SIGTERM');
  });

export class NodeRunner {
  private readonly owned: { proc: ChildProcess; name: string }[] = [];
  apiserver: RunningApiServer | undefined;
  agent: RunningAgent | undefined;
  proxy: RunningProxy | undefined;
  dns: RunningDns | undefined;
  private stopping = false;

  constructor(
    private readonly command: 'up' | 'join',
    readonly o: { data: string; endpoint: string; rootDir: string; podStopTimeoutSec?: number },
  ) {
    fs.mkdirSync(this.logs, { recursive: true });
    recordNodeState(o.data, { command, pid: process.pid, endpoint: o.endpoint, rootDir: o.rootDir });
  }

  get logs(): string {
    return path.join(this.o.data, 'logs');
  }

  get socket(): string {
    return this.o.endpoint.replace(/^unix:\/\//, '');
  }

  ownedNames(): string[] {
    return this.owned.map((o) => o.name);
  }

  /** Starts a daemon this command owns; its PID is kept in <data-dir>/<name>.pid while it runs, so whatever cleans up after a crashed run can stop it. */
  spawn(name: string, cmd: string, args: string[]): void {
    const proc = spawnLogged(cmd, args, path.join(this.logs, `${name}.log`));
    this.owned.push({ name, proc });
    if (proc.pid) fs.writeFileSync(this.pidFile(name), `${proc.pid}\n`);
  }

  private pidFile(name: string): string {
    return path.join(this.o.data, `${name}.pid`);
  }

  fileLog(component: string): Logger {
    return createLogger(component, {
      sink: (l) => fs.appendFileSync(path.join(this.logs, `${component}.log`), `${l}\n`),
    });
  }

  /**
   * Stops everything in order: the cluster DNS (it marks its endpoints not ready while the apiserver listens), the
   * kubelet's loops, then the pods within their grace periods (at most podStopTimeoutSec), the kube-proxy, the
   * apiserver, and the daemons this command started. Returns what could not be stopped.
   */
  async stopAll(note: (s: string) => void = () => undefined): Promise<string[]> {
    const problems: string[] = [];
    const step = async (what: string, fn: () => Promise<unknown>): Promise<void> => {
      const started = performance.now();
      try {
        await fn();
        note(`${what}: stopped (${((performance.now() - started) / 1000).toFixed(1)}s)`);
      } catch (e) {
        problems.push(`${what}: ${(e as Error).message}`);
      }
    };
    if (this.dns) await step('the cluster DNS', async () => this.dns?.stop());
    const ranKubelet = this.agent !== undefined;
    if (ranKubelet) await step('the kubelet', async () => this.agent?.stop());
    // With our containerd the pods would die with it: they stop first, gracefully; their volumes stay, and the next run
    // starts them again. With a containerd this command did not start (a systemd unit), they keep running, as after a
    // kubelet restart.
    if (ranKubelet && this.owned.some((o) => o.name === 'containerd')) {
      await step('the pods', async () => {
        const cri = new CriClient({ endpoint: this.o.endpoint, timeoutMs: 30_000 });
        try {
          const r = await stopPods(cri, { capSec: this.o.podStopTimeoutSec ?? 30, note, force: this.forced });
          problems.push(...r.problems);
          if (r.pods) note(`stopped ${r.pods} pod(s)`);
        } finally {
          cri.close();
        }
        // Their secret and token tmpfs mounts go with them (the next run sets the volumes up again).
        await unmountAll(path.join(this.o.rootDir, 'pods'));
      });
    }
    if (this.proxy) await step('the kube-proxy', async () => this.proxy?.stop());
    if (this.apiserver) await step('the apiserver', async () => this.apiserver?.stop());
    for (const o of [...this.owned].reverse()) {
      await step(o.name, () => stopChild(o.proc));
      fs.rmSync(this.pidFile(o.name), { force: true });
    }
    return problems;
  }

  /** A step of up/join failed: say so, stop what was started (listing what would not stop), and exit 1. */
  async fail(e: Error): Promise<never> {
    process.stderr.write(`tskube ${this.command} failed: ${e.message}\n`);
    const problems = await this.stopAll();
    if (problems.length) process.stderr.write(`and could not stop:\n${problems.map((p) => `  ${p}\n`).join('')}`);
    process.exit(1);
  }

  /** Resolves at the second Ctrl-C: pods still stopping are killed. */
  private force: () => void = () => undefined;
  private readonly forced = new Promise<void>((r) => (this.force = r));

  /** Ctrl-C and SIGTERM stop everything this command started (see stopAll); a second one stops waiting for pods. */
  handleSignals(): void {
    const on = (sig: string): void => {
      if (this.stopping) {
        process.stdout.write(`${sig} again: not waiting for the pods' grace periods\n`);
        this.force();
        return;
      }
      this.stopping = true;
      const parts = [
        this.dns && 'the cluster DNS',
        this.agent && (this.owned.some((o) => o.name === 'containerd') ? 'the kubelet and its pods' : 'the kubelet'),
        this.proxy && 'the kube-proxy',
        this.apiserver && 'the apiserver',
      ]
        .filter(Boolean)
        .join(', ');
      process.stdout.write(
        `\n${sig}: stopping ${parts || 'what was started'}${this.owned.length ? ` and ${this.ownedNames().reverse().join(', ')}` : ''} ...\n`,
      );
      void this.stopAll((s) => process.stdout.write(`  ${s}\n`)).then(
        (problems) => {
          if (problems.length) {
            process.stderr.write(`stopped, but not all of it:\n${problems.map((p) => `  ${p}\n`).join('')}`);
            process.exit(1);
          }
          process.stdout.write(`stopped; \`tskube ${this.command}\` again picks up where this left off.\n`);
          process.exit(0);
        },
        (e: Error) => {
          process.stderr.write(`stopping: ${e.message}\n`);
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', () => on('SIGINT'));
    process.on('SIGTERM', () => on('SIGTERM'));
  }

  /** Uses the containerd answering on the endpoint, or starts one with tskube's config; `mirror` serves REGISTRY. */
  async ensureContainerd(note: (s: string) => void, mirror?: string): Promise<void> {
    const probe = new CriClient({ endpoint: this.o.endpoint, timeoutMs: 3000 });
    const v = await probe.version().catch(() => undefined);
    probe.close();
    if (v)
      return note(
        `using the running ${v.runtime_name} ${v.runtime_version} on ${this.socket} (its sandbox_image must be pullable, its CNI conf_dir given as --cni-conf-dir)`,
      );
    const dir = path.join(this.o.data, 'containerd');
    const config = path.join(dir, 'config.toml');
    writeContainerdFiles(
      {
        root: path.join(dir, 'root'),
        state: path.join(dir, 'state'),
        socket: this.socket,
        sandboxImage: `${REGISTRY}/tskube/pause:1`,
        cniConfDir: this.cniConfDir,
        certsDir: path.join(dir, 'certs.d'),
      },
      config,
      undefined,
      REGISTRY,
      mirror,
    );
    fs.mkdirSync(path.dirname(this.socket), { recursive: true });
    recordNodeState(this.o.data, { containerdConfig: config });
    this.spawn('containerd', 'containerd', ['--config', config]);
    const cri = new CriClient({ endpoint: this.o.endpoint, timeoutMs: 2000 });
    try {
      const started = await until('containerd', 30_000, async () =>
        fs.existsSync(this.socket) ? cri.version() : undefined,
      );
      note(
        `started ${started.runtime_name} ${started.runtime_version}: config ${config}, socket ${this.socket}${mirror ? `, ${REGISTRY} mirrored from ${mirror}` : ''}`,
      );
    } finally {
      cri.close();
    }
  }

  /** Our containerd's conf_dir, where the pod network writes its conflist. */
  get cniConfDir(): string {
    return path.join(this.o.data, 'cni');
  }

  /**
   * The kubelet as both commands run it, in this process: a KubeletConfiguration with podLogsDir (plus `configExtra`),
   * the node's name, address and dirs, `auth` (its credential flags) and the pod network, whose CNI config goes to our
   * containerd's conf_dir, else --cni-conf-dir or the usual one.
   */
  async startKubelet(
    o: {
      nodeName: string;
      nodeIP: string;
      manifests: string;
      podLogsDir: string;
      cgroupRoot?: string;
      podNetwork: string;
      cniConfDir?: string;
      auth: string[];
      clusterDNS: string;
      clusterDomain: string;
      configExtra?: string;
    },
    note: (s: string) => void,
  ): Promise<AgentConfig> {
    const cfgFile = path.join(this.o.data, 'kubelet-config.yaml');
    fs.mkdirSync(o.manifests, { recursive: true });
    // As kubeadm writes it: pods resolve through the cluster DNS Service.
    const dns = `clusterDNS:\n- ${o.clusterDNS}\nclusterDomain: ${o.clusterDomain}\n`;
    fs.writeFileSync(
      cfgFile,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${o.podLogsDir}\n${dns}${o.configExtra ?? ''}`,
    );
    const cniConfDir =
      o.cniConfDir ?? (this.owned.some((x) => x.name === 'containerd') ? this.cniConfDir : '/etc/cni/net.d');
    recordNodeState(this.o.data, {
      podLogsDir: o.podLogsDir,
      cniConfDir,
      ipamDir: path.join(this.o.data, 'ipam'),
      podNetwork: o.podNetwork,
    });
    const cfg = loadAgentConfig(
      [
        `--config=${cfgFile}`,
        `--hostname-override=${o.nodeName}`,
        `--node-ip=${o.nodeIP}`,
        ...o.auth,
        `--pod-manifest-path=${o.manifests}`,
        `--container-runtime-endpoint=${this.o.endpoint}`,
        `--root-dir=${this.o.rootDir}`,
        `--pod-network=${o.podNetwork}`,
        `--cni-conf-dir=${cniConfDir}`,
        `--cni-ipam-dir=${path.join(this.o.data, 'ipam')}`,
        ...(o.cgroupRoot ? [`--cgroup-root=${o.cgroupRoot}`] : []),
      ],
      (m) => note(`warning: ${m}`),
    );
    recordNodeState(this.o.data, { cgroupRoot: cfg.cgroupRoot, cgroupDriver: cfg.cgroupDriver });
    this.agent = await startAgent(cfg, this.fileLog('kubelet'));
    return cfg;
  }

  async waitReady(kubeconfig: string, nodeName: string, note: (s: string) => void): Promise<void> {
    const client = new KubeClient(loadKubeconfig(kubeconfig));
    try {
      await until(
        `node ${nodeName} Ready`,
        180_000,
        async () => {
          const n = await client.get(`/api/v1/nodes/${nodeName}`);
          return (
            n.status?.conditions?.some(
              (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
            ) || undefined
          );
        },
        (ms) => note(`still waiting (${Math.round(ms / 1000)}s): see ${path.join(this.logs, 'kubelet.log')}`),
      );
    } finally {
      client.close();
    }
  }
}
