// The tskube command: one subcommand per daemon.
import os from 'node:os';
import { CriClient } from '../agent/cri/client.js';
import { Kubelet } from '../agent/kubelet.js';
import { createLogger } from '../kube/log.js';
import { ApiEventRecorder, LogEventRecorder } from '../kube/events.js';
import { KubeletMetrics } from '../agent/metrics.js';
import { serveLocal } from '../agent/server/metrics-server.js';
import { startKubeletApi } from '../agent/server/start.js';
import { kubeletConfigz } from './agent-config.js';
import { AGENT_FLAGS, loadAgentConfig } from './agent-config.js';
import { APISERVER_FLAGS, loadApiServerConfig } from './apiserver-config.js';
import { PROXY_FLAGS, loadProxyConfig } from './proxy-config.js';
import { startProxy } from '../proxy/main.js';
import { startApiServer } from '../apiserver/main.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { startNodeSync, type NodeSync } from '../agent/node/node-sync.js';

function usage(): string {
  const list = (f: Record<string, string>) => Object.entries(f).map(([k, v]) => `  --${k}  ${v}`).join('\n');
  return `usage: tskube agent|proxy|apiserver [flags]\n\nagent flags:\n${list(AGENT_FLAGS)}\n\nproxy flags:\n${list(PROXY_FLAGS)}\n\napiserver flags:\n${list(APISERVER_FLAGS)}\n`;
}

function firstIPv4(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

async function runAgent(argv: string[]): Promise<void> {
  const boot = createLogger('kubelet');
  const cfg = loadAgentConfig(argv, (m) => boot.warn(m));
  const log = createLogger('kubelet', { verbosity: cfg.verbosity });
  const cri = new CriClient({ endpoint: cfg.containerRuntimeEndpoint });
  const hostIP = cfg.nodeIP || firstIPv4();
  const client = cfg.kubeconfig ? new KubeClient(loadKubeconfig(cfg.kubeconfig)) : undefined;
  let nodeSync: NodeSync | undefined;
  const metrics = new KubeletMetrics();
  const kubelet = new Kubelet({
    metrics,
    client,
    nodeUid: () => nodeSync?.status.uid ?? '',
    cri,
    log,
    events: client ? new ApiEventRecorder(client, { component: 'kubelet', host: cfg.nodeName }, log, new LogEventRecorder(log)) : new LogEventRecorder(log),
    node: { nodeName: cfg.nodeName, hostIP, podLogsDir: cfg.podLogsDir, rootDir: cfg.rootDir },
    manifestPath: cfg.staticPodPath,
    fileCheckFrequencyMs: cfg.fileCheckFrequencyMs,
    manifestURL: cfg.staticPodURL || undefined,
    manifestURLHeaders: cfg.staticPodURLHeader,
    httpCheckFrequencyMs: cfg.httpCheckFrequencyMs,
    volumeResyncMs: cfg.syncFrequencyMs,
    gcPeriodMs: process.env.TSKUBE_GC_PERIOD ? Number(process.env.TSKUBE_GC_PERIOD) : undefined,
  });
  if (client && cfg.registerNode) {
    nodeSync = startNodeSync(client, cri, cfg.nodeName, hostIP, log, {
      maxPods: cfg.maxPods,
      leaseDurationSec: cfg.nodeLeaseDurationSeconds,
      updateMs: cfg.nodeStatusUpdateFrequencyMs,
      reportMs: cfg.nodeStatusReportFrequencyMs,
      labels: cfg.nodeLabels,
      taints: cfg.registerWithTaints,
    });
  }
  if (cfg.metricsBindAddress) {
    const m = await serveLocal(cfg.metricsBindAddress, metrics).catch((e: Error) => {
      throw new Error(`--metrics-bind-address: ${e.message}`);
    });
    log.info(`serving metrics on http://${cfg.metricsBindAddress.replace(/:\d+$/, '')}:${m.port}/metrics`);
  }
  const kubeletApi = await startKubeletApi(kubelet, cri, cfg, { client, log, metrics, hostIP, configz: () => kubeletConfigz(cfg) });
  let stopping = false;
  const shutdown = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${sig}; stopping (pods keep running)`);
    nodeSync?.stop();
    void Promise.all([kubelet.stop(), kubeletApi.stop()]).finally(() => {
      cri.close();
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  for (let attempt = 0; ; attempt++) {
    try {
      await kubelet.start();
      break;
    } catch (e) {
      // The runtime may start after us (systemd ordering); keep trying rather than exit.
      log.error(`cannot start: ${(e as Error).message}; retrying`);
      await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 10_000)));
    }
  }
  log.info(`kubelet started on node ${cfg.nodeName}, watching ${cfg.staticPodPath}${cfg.staticPodURL ? ` and ${cfg.staticPodURL}` : ''}`);
}

async function runProxy(argv: string[]): Promise<void> {
  const boot = createLogger('kube-proxy');
  const cfg = loadProxyConfig(argv, (m) => boot.warn(m));
  const log = createLogger('kube-proxy', { verbosity: cfg.verbosity });
  log.info(`starting kube-proxy (${cfg.mode} mode) on node ${cfg.nodeName}`);
  const running = await startProxy(cfg, log);
  let stopping = false;
  const shutdown = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    log.info(`received ${sig}; stopping (iptables rules stay in place)`);
    void running.stop().finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function main(): Promise<void> {
  const [cmd, ...rest] = process.argv.slice(2);
  switch (cmd) {
    case 'agent':
      await runAgent(rest);
      return;
    case 'proxy':
      await runProxy(rest);
      return;
    case 'apiserver': {
      const running = await startApiServer(loadApiServerConfig(rest));
      const stop = (): void => void running.stop().finally(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      return;
    }
    case '-h':
    case '--help':
    case 'help':
    case undefined:
      process.stdout.write(usage());
      return;
    default:
      process.stderr.write(`tskube: unknown command "${cmd}" (up is not built yet)\n${usage()}`);
      process.exit(2);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`tskube: ${(e as Error).message}\n`);
  process.exit(1);
});
