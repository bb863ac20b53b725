// `tskube reset` (kubeadm's word): returns the machine to before `up` or
// `join`. Pods and sandboxes, mounts under the node's dirs, the kube-proxy's
// KUBE-* iptables rules and nftables table, the pod network's bridge, vxlan
// device, routes and chains, CNI state and the data dirs go, as recorded in
// <data-dir>/node.json; nothing the node did not make is touched.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline/promises';

import { parse as parseYaml } from 'yaml';

import { cgroupPath, kubepods, parseCgroupRoot } from '../agent/cm/cgroup-names.js';
import { CgroupTree } from '../agent/cm/cgroupfs.js';
import { CriClient } from '../agent/cri/client.js';
import {
  BRIDGE,
  CNI_NETWORK,
  CONFLIST_NAME,
  FORWARD_CHAIN,
  NAT_CHAIN,
  ROUTE_PROTO,
  VXLAN_DEV,
  VXLAN_DEV6,
} from '../agent/network/plan.js';
import { containerLogsDir } from '../agent/pods/log-links.js';
import { mountsUnder, unmountAll } from '../agent/volumes/mounts.js';
import { ExecIptables, IPTABLES_BINARIES } from '../kube/iptables.js';
import { createLogger } from '../kube/log.js';
import { chainRemoval } from '../proxy/cleanup.js';
import { cleanupProxyRules, ipv6Usable } from '../proxy/main.js';
import { IP_FAMILIES } from '../proxy/model/family.js';
import { parseBool, parseFlags } from './flags.js';
import { criAnswers, DEFAULT_CRI_ENDPOINT, stopChild, until } from './node-runner.js';
import { type NodeState, processRuns, readNodeState } from './node-state.js';
import { stopPods } from './stop-pods.js';

export const RESET_FLAGS: Record<string, string> = {
  config:
    'where there is no node.json (a node the systemd units ran): the KubeletConfiguration that names its cgroupRoot, cgroupDriver and podLogsDir. Default /etc/tskube/kubelet-config.yaml',
  force: 'reset without asking for confirmation (needed when stdin is not a terminal). Default false',
  'data-dir': 'the data dir up or join used; its node.json says what else they used. Default /var/lib/tskube',
  'root-dir': 'the kubelet dir to remove. Default: the one node.json records, else /var/lib/kubelet',
  'container-runtime-endpoint': 'where the pods run. Default: the one node.json records',
};

const UNITS = [
  'tskube-join',
  'tskube-agent',
  'tskube-proxy',
  'tskube-dns',
  'tskube-apiserver',
  'tskube-images',
  'tskube-registry-lan',
  'tskube-registry',
];

/** Daemons up/join start, by the name of their PID file and a word of their command line. */
const DAEMONS: [string, string][] = [
  ['registry', 'docker-registry'],
  ['registry-lan', 'docker-registry'],
  ['containerd', 'containerd'],
];

/**
 * What reset removes, resolved from the record and the flags: pure, so it can be checked without a node. Without a
 * record (neither node.json nor a tskube kubelet config) only the data dir and what the flags name are touched: reset
 * cannot know that anything else is the node's.
 */
export function resetTargets(data: string, st: NodeState | undefined, flags: { rootDir?: string; endpoint?: string }) {
  const podLogsDir = st?.podLogsDir;
  const podNetwork = st !== undefined && (st.podNetwork ?? 'host-gw') !== 'none';
  const rootDir = flags.rootDir ?? st?.rootDir;
  return {
    data,
    rootDir: rootDir ? path.resolve(rootDir) : undefined,
    endpoint: flags.endpoint ?? st?.endpoint ?? DEFAULT_CRI_ENDPOINT,
    containerdConfig:
      st?.containerdConfig ??
      (fs.existsSync(path.join(data, 'containerd', 'config.toml'))
        ? path.join(data, 'containerd', 'config.toml')
        : undefined),
    podLogsDir,
    // A links dir of its own (beside a pod logs dir in the data dir) goes whole; /var/log/containers keeps others' links.
    linksDir: podLogsDir ? containerLogsDir(podLogsDir) : undefined,
    conflist: st?.cniConfDir && podNetwork ? path.join(st.cniConfDir, CONFLIST_NAME) : undefined,
    ipamDir: podNetwork ? (st?.ipamDir ?? `/var/lib/cni/networks/${CNI_NETWORK}`) : undefined,
    podNetwork,
    kubepodsCgroup:
      st?.cgroupRoot !== undefined
        ? cgroupPath(
            kubepods(parseCgroupRoot(st.cgroupRoot, st.cgroupDriver ?? 'cgroupfs')),
            st.cgroupDriver ?? 'cgroupfs',
          )
        : undefined,
  };
}

/** A node without node.json (the systemd units ran it): what its kubelet config says, over the kubelet's defaults; undefined without a config either. */
export function kubeletDefaults(file: string, endpoint: string | undefined): NodeState | undefined {
  if (!fs.existsSync(file)) return undefined;
  const c = (parseYaml(fs.readFileSync(file, 'utf8')) ?? {}) as {
    cgroupRoot?: string;
    cgroupDriver?: 'cgroupfs' | 'systemd';
    podLogsDir?: string;
    containerRuntimeEndpoint?: string;
  };
  return {
    command: 'join',
    pid: 0,
    endpoint: endpoint ?? c.containerRuntimeEndpoint ?? DEFAULT_CRI_ENDPOINT,
    rootDir: '/var/lib/kubelet',
    podLogsDir: c.podLogsDir ?? '/var/log/pods',
    cniConfDir: '/etc/cni/net.d',
    podNetwork: 'host-gw',
    cgroupRoot: c.cgroupRoot ?? '/',
    cgroupDriver: c.cgroupDriver ?? 'cgroupfs',
  };
}

/** The links in a logs dir that point into podLogsDir (the kubelet made them), by name. */
export function ourLogLinks(entries: { name: string; target: string | undefined }[], podLogsDir: string): string[] {
  const base = `${path.resolve(podLogsDir)}/`;
  return entries.filter((e) => e.target !== undefined && path.resolve(e.target).startsWith(base)).map((e) => e.name);
}

async function confirm(): Promise<boolean> {
  if (!process.stdin.isTTY)
    throw new Error('reset: stdin is not a terminal; use --force to reset without confirmation');
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  try {
    const a = await rl.question(
      '[reset] The node will be reset: its pods stopped, its rules, pod network and data dirs removed.\n[reset] Are you sure you want to proceed? [y/N]: ',
    );
    return /^y(es)?$/i.test(a.trim());
  } finally {
    rl.close();
  }
}

function run(cmd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return { ok: r.status === 0, out: r.stdout ?? '', err: (r.stderr ?? r.error?.message ?? '').trim() };
}

export async function runReset(argv: string[]): Promise<void> {
  const f = parseFlags(
    argv.map((a) => (a === '--force' || a === '-f' ? '--force=true' : a)),
    RESET_FLAGS,
  );
  if (process.getuid?.() !== 0)
    throw new Error('tskube reset must run as root: it unmounts volumes and removes kernel rules');
  const data = path.resolve(f.get('data-dir') ?? '/var/lib/tskube');
  const st =
    readNodeState(data) ??
    kubeletDefaults(f.get('config') ?? '/etc/tskube/kubelet-config.yaml', f.get('container-runtime-endpoint'));
  if (st && st.pid && processRuns(st.pid, 'tskube') && st.pid !== process.pid)
    throw new Error(`tskube ${st.command} is still running (pid ${st.pid}); stop it first (Ctrl-C)`);
  const t = resetTargets(data, st, { rootDir: f.get('root-dir'), endpoint: f.get('container-runtime-endpoint') });
  if (!parseBool(f.get('force') ?? 'false', 'force') && !(await confirm())) {
    process.stdout.write('[reset] aborted; nothing was changed\n');
    return;
  }
  const removed: string[] = [];
  const problems: string[] = [];
  // As kubeadm reset stops the kubelet: the units that would start the pods again stop first.
  if (fs.existsSync('/run/systemd/system')) {
    const active = UNITS.filter((u) => run('systemctl', ['is-active', '--quiet', u]).ok);
    if (active.length) {
      const r = run('systemctl', ['stop', ...active]);
      if (r.ok) removed.push(`stopped ${active.join(', ')}`);
      else problems.push(`systemctl stop ${active.join(' ')}: ${r.err}`);
    }
  }
  const attempt = async (what: string, fn: () => unknown): Promise<void> => {
    try {
      await fn();
    } catch (e) {
      problems.push(`${what}: ${(e as Error).message}`);
    }
  };
  const say = (s: string): void => void process.stdout.write(`[reset] ${s}\n`);
  // Without node.json, a tskube kubelet config or our containerd's config, nothing says this machine's pods and rules
  // are a tskube node's (kubeadm's kubelet may run them): then only the data dir goes.
  const known = st !== undefined || t.containerdConfig !== undefined;
  if (!known) say(`no tskube node recorded in ${data} (node.json) and no kubelet config: only ${data} is removed`);

  // Pods first, while a containerd can still stop them: the running one, or ours started once more for this.
  if (known)
    await attempt('pods', async () => {
      const socket = t.endpoint.replace(/^unix:\/\//, '');
      let started: ReturnType<typeof spawn> | undefined;
      const cri = new CriClient({ endpoint: t.endpoint, timeoutMs: 30_000 });
      try {
        let answers = await criAnswers(t.endpoint);
        if (!answers && t.containerdConfig && fs.existsSync(t.containerdConfig)) {
          say(`starting containerd (${t.containerdConfig}) to stop the pods it ran`);
          started = spawn('containerd', ['--config', t.containerdConfig], { stdio: 'ignore', detached: true });
          started.on('error', (e) => say(`containerd: ${e.message}`));
          answers = await until('containerd', 30_000, async () =>
            fs.existsSync(socket) ? cri.version().then(() => true) : undefined,
          ).catch(() => false);
        }
        if (!answers) return say(`no container runtime answers on ${t.endpoint}; no pods to stop`);
        const r = await stopPods(cri, { capSec: 0, note: say });
        problems.push(...r.problems);
        if (r.pods) removed.push(`${r.pods} pod sandbox(es) and their containers`);
      } finally {
        cri.close();
        if (started) await stopChild(started, 15_000);
      }
    });

  for (const [name, word] of DAEMONS) {
    const pidFile = path.join(data, `${name}.pid`);
    const pid = Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').trim() : NaN) || undefined;
    if (pid && processRuns(pid, word)) {
      await attempt(`stopping ${name} (pid ${pid})`, async () => {
        process.kill(pid, 'SIGTERM');
        await until(`${name} to exit`, 15_000, async () => !processRuns(pid, word) || undefined).catch(() =>
          process.kill(pid, 'SIGKILL'),
        );
        removed.push(`${name} (pid ${pid}, left running by an earlier run)`);
      });
    }
    fs.rmSync(pidFile, { force: true });
  }

  for (const dir of [t.rootDir, data, t.podLogsDir].filter((d): d is string => !!d)) {
    if (!fs.existsSync(dir)) continue;
    const mounts = await mountsUnder(dir);
    if (!mounts.length) continue;
    await attempt(`unmounting under ${dir}`, async () => {
      await unmountAll(dir);
      removed.push(`${mounts.length} mount(s) under ${dir}`);
    });
  }

  if (known)
    await attempt('kube-proxy rules', async () => {
      const lines: string[] = [];
      const failed = await cleanupProxyRules(createLogger('reset', { sink: (l) => lines.push(l) }));
      for (const l of lines) if (/ removed /.test(l)) removed.push(`kube-proxy: ${l.replace(/^.*? removed /, '')}`);
      if (failed) throw new Error(lines.join('; '));
    });

  // What is left of KUBE-* after the proxy's own cleanup (KUBE-MARK-MASQ, KUBE-FIREWALL), and the pod network's chains.
  if (known)
    await attempt('iptables chains', async () => {
      const ours = (c: string): boolean =>
        c.startsWith('KUBE-') || (t.podNetwork && (c === NAT_CHAIN || c === FORWARD_CHAIN));
      for (const family of IP_FAMILIES) {
        if (family === 'IPv6' && !(await ipv6Usable('iptables'))) continue;
        const bin = IPTABLES_BINARIES[family];
        const ipt = new ExecIptables(bin);
        for (const table of ['nat', 'filter'] as const) {
          const save = await ipt.save(table);
          const text = chainRemoval(table, save, ours);
          if (!text) continue;
          await ipt.restore(text);
          removed.push(
            `${bin.iptables} ${table} chains ${[...text.matchAll(/^-X (\S+)/gm)].map((m) => m[1]).join(', ')}`,
          );
        }
      }
    });

  if (t.podNetwork) {
    // Both families: a dual-stack pod network routes IPv6 podCIDRs too.
    for (const f of [[], ['-6']]) {
      const routes = run('ip', [...f, 'route', 'show', 'proto', String(ROUTE_PROTO)]).out.trim();
      if (!routes) continue;
      const flushed = run('ip', [...f, 'route', 'flush', 'proto', String(ROUTE_PROTO)]);
      if (flushed.ok) removed.push(`${routes.split('\n').length} pod network ${f.length ? 'IPv6 ' : ''}route(s)`);
      else problems.push(`pod network ${f.length ? 'IPv6 ' : ''}routes: ${flushed.err}`);
    }
    for (const dev of [VXLAN_DEV, VXLAN_DEV6, BRIDGE]) {
      if (!run('ip', ['link', 'show', dev]).ok) continue;
      const del = run('ip', ['link', 'del', dev]);
      if (del.ok) removed.push(`the ${dev} device`);
      else problems.push(`${dev}: ${del.err}`);
    }
    for (const f of [t.conflist, t.ipamDir]) {
      if (!f || !fs.existsSync(f) || f.startsWith(`${data}/`)) continue;
      fs.rmSync(f, { recursive: true, force: true });
      removed.push(f);
    }
  }

  // Log links the kubelet made outside the dirs removed below.
  if (t.linksDir && t.podLogsDir && !t.linksDir.startsWith(`${data}/`) && fs.existsSync(t.linksDir)) {
    const entries = fs
      .readdirSync(t.linksDir, { withFileTypes: true })
      .filter((e) => e.isSymbolicLink())
      .map((e) => ({ name: e.name, target: fs.readlinkSync(path.join(t.linksDir!, e.name)) }));
    const ours = ourLogLinks(entries, t.podLogsDir);
    for (const n of ours) fs.rmSync(path.join(t.linksDir, n), { force: true });
    if (ours.length) removed.push(`${ours.length} log link(s) in ${t.linksDir}`);
  }

  // A socket left by our containerd outside the data dir (the old default, /run/containerd), unless a runtime answers on it now.
  if (t.containerdConfig && !(await criAnswers(t.endpoint))) {
    const socket = t.endpoint.replace(/^unix:\/\//, '');
    for (const s of [socket, `${socket}.ttrpc`]) {
      if (!s.startsWith(`${data}/`) && fs.existsSync(s)) {
        fs.rmSync(s, { force: true });
        removed.push(s);
      }
    }
  }

  // The kubelet's QoS cgroups, empty once the pods are gone.
  if (t.kubepodsCgroup) {
    const tree = new CgroupTree();
    if (tree.exists(t.kubepodsCgroup)) {
      await attempt(`cgroup ${t.kubepodsCgroup}`, async () => {
        await tree.remove(t.kubepodsCgroup!);
        removed.push(`cgroup ${t.kubepodsCgroup}`);
      });
    }
  }

  for (const dir of [t.rootDir, t.podLogsDir, data].filter((d): d is string => !!d)) {
    if (!fs.existsSync(dir)) continue;
    await attempt(`removing ${dir}`, async () => {
      // Never through a mount that would not come off: rm would delete what is behind it.
      if ((await mountsUnder(dir)).length) throw new Error('a mount under it would not come off');
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    });
  }

  say(removed.length ? `removed:\n${removed.map((r) => `  ${r}\n`).join('')}`.trimEnd() : 'nothing to remove');
  if (problems.length) {
    process.stderr.write(`[reset] could not remove:\n${problems.map((p) => `  ${p}\n`).join('')}`);
    process.exit(1);
  }
}
