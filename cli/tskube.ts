// The tskube command: one subcommand per daemon. Each subcommand's code is
// imported only when it runs, so the kubelet never loads the apiserver and
// the proxy never loads the kubelet.
import path from 'node:path';

import { createLogger } from '../kube/log.js';
import { applyEngineSettings, type EngineSettings, KUBELET_ENGINE } from './engine-flags.js';

interface Command {
  /** How the command line looks after `tskube`. */
  synopsis: string;
  summary: string;
  flags: () => Promise<Record<string, string>>;
  run: (argv: string[]) => Promise<void>;
  /** V8 settings it starts with (cli/engine-flags.ts). */
  engine?: EngineSettings;
}

const COMMANDS: Record<string, Command> = {
  up: {
    synopsis: 'up [flags]',
    summary:
      'containerd, a registry, the dev apiserver and controllers, the cluster DNS, the kubelet and the kube-proxy on this machine',
    engine: { smallYoungGeneration: true },
    flags: async () => (await import('./up.js')).UP_FLAGS,
    run: async (argv) => (await import('./up.js')).runUp(argv),
  },
  join: {
    synopsis: 'join https://<server>:<port> --token <token> --discovery-token-ca-cert-hash sha256:<hash> [flags]',
    summary: 'joins this machine to a cluster as a node (kubelet and kube-proxy), as kubeadm join does',
    flags: async () => (await import('./join.js')).JOIN_FLAGS,
    run: async (argv) => (await import('./join.js')).runJoin(argv),
  },
  reset: {
    synopsis: 'reset [--force] [flags]',
    summary: 'undoes what up or join did on this machine: pods, mounts, KUBE-* rules, the pod network, the data dirs',
    flags: async () => (await import('./reset.js')).RESET_FLAGS,
    run: async (argv) => (await import('./reset.js')).runReset(argv),
  },
  agent: {
    synopsis: 'agent [flags]',
    summary: 'the kubelet alone (kubelet flags and KubeletConfiguration)',
    engine: KUBELET_ENGINE,
    flags: async () => (await import('./agent-config.js')).AGENT_FLAGS,
    run: runAgent,
  },
  proxy: {
    synopsis: 'proxy [flags]',
    summary: 'the kube-proxy alone (kube-proxy flags and KubeProxyConfiguration)',
    flags: async () => (await import('./proxy-config.js')).PROXY_FLAGS,
    run: runProxy,
  },
  apiserver: {
    synopsis: 'apiserver [flags]',
    summary: 'the dev apiserver and its controllers alone',
    flags: async () => (await import('./apiserver-config.js')).APISERVER_FLAGS,
    run: async (argv) => {
      const { loadApiServerConfig } = await import('./apiserver-config.js');
      const { startApiServer } = await import('../apiserver/main.js');
      const running = await startApiServer(loadApiServerConfig(argv));
      stopOnSignals(() => running.stop());
    },
  },
  addon: {
    synopsis: 'addon dns --kubeconfig <admin kubeconfig> [flags]',
    summary:
      "installs the cluster DNS add-on (the kube-dns Service and its RBAC) on any control plane, as kubeadm's addon phase",
    flags: async () => (await import('./dns-addon.js')).ADDON_FLAGS,
    run: async (argv) => (await import('./dns-addon.js')).runAddon(argv),
  },
  dns: {
    synopsis: 'dns [flags]',
    summary: 'the cluster DNS server alone',
    flags: async () => (await import('./dns-config.js')).DNS_FLAGS,
    run: async (argv) => {
      const { loadDnsConfig } = await import('./dns-config.js');
      const { startDns } = await import('../dns/main.js');
      const cfg = loadDnsConfig(argv);
      const running = await startDns(cfg, createLogger('dns', { verbosity: cfg.verbosity }));
      stopOnSignals(() => running.stop());
    },
  },
  images: {
    synopsis: 'images [flags]',
    summary:
      "builds the demo images (tskube/pause, tskube/app) from the local busybox and pushes them to the node's registry",
    flags: async () => (await import('./demo-images.js')).IMAGES_FLAGS,
    run: async (argv) => (await import('./demo-images.js')).runImages(argv),
  },
  install: {
    synopsis: 'install [--role=control-plane|worker] [flags]',
    summary:
      "configures this machine's containerd (Debian's) and writes the node's tskube configs for the systemd units (scripts/install.sh runs it)",
    flags: async () => (await import('./install.js')).INSTALL_FLAGS,
    run: async (argv) => (await import('./install.js')).runInstall(argv),
  },
  token: {
    synopsis: 'token create|list|delete [token] [flags]',
    summary: 'bootstrap tokens for joining nodes, as kubeadm token does',
    flags: async () => (await import('./token.js')).TOKEN_FLAGS,
    run: async (argv) => (await import('./token.js')).runToken(argv),
  },
};

const NAMES = Object.keys(COMMANDS);

function usage(): string {
  const width = Math.max(...NAMES.map((n) => n.length));
  const lines = NAMES.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n]!.summary}`);
  return `usage: tskube ${NAMES.join('|')} [flags]\n\n${lines.join('\n')}\n\n\`tskube <command> --help\` lists a command's flags and their defaults.\n`;
}

/** One subcommand's help: its synopsis and every flag with its description (which names the default). */
function commandHelp(name: string, synopsis: string, summary: string, flags: Record<string, string>): string {
  const list = Object.entries(flags)
    .map(([k, v]) => `  --${k}\n      ${v}`)
    .join('\n');
  return `usage: tskube ${synopsis}\n\n${summary}.\n\nflags:\n${list}\n  -h, --help\n      this help\n`;
}

function wantsHelp(argv: string[]): boolean {
  return argv.some((a) => a === '-h' || a === '--help' || a === '--help=true');
}

function stopOnSignals(stop: () => Promise<unknown>): void {
  const on = (): void => void stop().finally(() => process.exit(0));
  process.on('SIGTERM', on);
  process.on('SIGINT', on);
}

/** How long a stopping kubelet waits for its servers and sources to close before it exits anyway. */
const AGENT_STOP_WAIT_MS = 1000;

async function runAgent(argv: string[]): Promise<void> {
  const { loadAgentConfig } = await import('./agent-config.js');
  const { startAgent } = await import('./agent.js');
  const boot = createLogger('kubelet');
  const cfg = loadAgentConfig(argv, (m) => boot.warn(m));
  const log = createLogger('kubelet', { verbosity: cfg.verbosity });
  const agent = await startAgent(cfg, log);
  let stopping = false;
  const shutdown = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${sig}; stopping (pods keep running)`);
    // As upstream's kubelet: exit at once. Container stops in flight are abandoned, not awaited (a pod's grace
    // period can be years); the next kubelet picks them up again.
    setTimeout(() => process.exit(0), AGENT_STOP_WAIT_MS).unref();
    void agent.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function runProxy(argv: string[]): Promise<void> {
  const { loadProxyConfig } = await import('./proxy-config.js');
  const { cleanupProxyRules, startProxy } = await import('../proxy/main.js');
  const boot = createLogger('kube-proxy');
  const cfg = loadProxyConfig(argv, (m) => boot.warn(m));
  const log = createLogger('kube-proxy', { verbosity: cfg.verbosity });
  if (cfg.cleanup) {
    const failed = await cleanupProxyRules(log);
    process.exit(failed ? 1 : 0);
  }
  log.info(`starting kube-proxy (${cfg.mode} mode) on node ${cfg.nodeName}`);
  const running = await startProxy(cfg, log);
  let stopping = false;
  const shutdown = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${sig}; stopping (${cfg.mode} rules stay in place)`);
    void running.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** Installed under the upstream names (a `kubelet` link, as kubeadm expects one), tskube acts as that component. */
const AS_COMPONENT: Record<string, string> = { kubelet: 'agent', 'kube-proxy': 'proxy' };

/** `--version`, as upstream's components print it (kubeadm's preflight reads the kubelet's). */
async function componentVersion(name: string): Promise<string | undefined> {
  if (name === 'agent') return `Kubernetes ${(await import('../agent/node/node-object.js')).KUBELET_VERSION}\n`;
  return undefined;
}

async function main(): Promise<void> {
  const invokedAs = AS_COMPONENT[path.basename(process.argv[1] ?? '')];
  const [name, ...rest] = invokedAs ? [invokedAs, ...process.argv.slice(2)] : process.argv.slice(2);
  if (name === undefined || name === 'help' || name === '-h' || name === '--help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const cmd = topic ? COMMANDS[topic] : undefined;
    process.stdout.write(cmd ? commandHelp(topic!, cmd.synopsis, cmd.summary, await cmd.flags()) : usage());
    return;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    process.stderr.write(`tskube: unknown command "${name}"\n${usage()}`);
    process.exit(2);
  }
  if (wantsHelp(rest)) {
    process.stdout.write(commandHelp(name, cmd.synopsis, cmd.summary, await cmd.flags()));
    return;
  }
  const version = rest.some((a) => a === '--version' || a === '--version=true')
    ? await componentVersion(name)
    : undefined;
  if (version) {
    process.stdout.write(version);
    return;
  }
  if (cmd.engine) applyEngineSettings(cmd.engine);
  await cmd.run(rest);
}

main().catch((e: unknown) => {
  process.stderr.write(`tskube: ${(e as Error).message}\n`);
  process.exit(1);
});
