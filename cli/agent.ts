// `tskube agent`: the kubelet with its node registration, kubelet API and
// local ports, from an AgentConfig. `tskube up` runs the same in-process.
import fs from 'node:fs';
import { CriClient } from '../agent/cri/client.js';
import { Kubelet } from '../agent/kubelet.js';
import type { Logger } from '../kube/log.js';
import { ApiEventRecorder, LogEventRecorder } from '../kube/events.js';
import { KubeletMetrics } from '../agent/metrics.js';
import { serveLocal } from '../agent/server/metrics-server.js';
import { startKubeletApi } from '../agent/server/start.js';
import { kubeletConfigz, type AgentConfig } from './agent-config.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { startNodeSync, type NodeSync } from '../agent/node/node-sync.js';
import { firstIPv4 } from '../kube/platform.js';
import { tlsBootstrap } from '../agent/node/tls-bootstrap.js';
import { ClientCertRotation } from '../agent/node/cert-rotation.js';
import { PodNetwork } from '../agent/network/network.js';
import { effectiveResolvConf } from '../agent/pods/dns.js';

export interface RunningAgent {
  kubelet: Kubelet;
  /** Stops the kubelet and its servers; pods keep running. */
  stop(): Promise<void>;
}

export async function startAgent(cfg: AgentConfig, log: Logger): Promise<RunningAgent> {
  const cri = new CriClient({ endpoint: cfg.containerRuntimeEndpoint });
  const hostIP = cfg.nodeIP || firstIPv4();
  const resolv = effectiveResolvConf(cfg.resolvConf, (f) => {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch {
      return undefined;
    }
  });
  if (resolv.warning) log.warn(resolv.warning);
  const resolvConf = resolv.file;
  if (cfg.bootstrapKubeconfig) {
    if (!cfg.kubeconfig) throw new Error('--bootstrap-kubeconfig needs --kubeconfig: the file the bootstrapped credentials are written to');
    await tlsBootstrap({ nodeName: cfg.nodeName, kubeconfig: cfg.kubeconfig, bootstrapKubeconfig: cfg.bootstrapKubeconfig, certDir: cfg.certDir }, log);
  }
  const client = cfg.kubeconfig ? new KubeClient(loadKubeconfig(cfg.kubeconfig)) : undefined;
  // The Lease gets its own connection, as upstream's heartbeat client: status patches and volume reads cannot hold it up.
  const heartbeat = cfg.kubeconfig ? new KubeClient(loadKubeconfig(cfg.kubeconfig)) : undefined;
  let nodeSync: NodeSync | undefined;
  let rotation: ClientCertRotation | undefined;
  if (client && heartbeat && cfg.rotateCertificates && cfg.kubeconfig && loadKubeconfig(cfg.kubeconfig).cert) {
    rotation = new ClientCertRotation({ kubeconfig: cfg.kubeconfig, nodeName: cfg.nodeName, certDir: cfg.certDir, clients: [client, heartbeat] }, log);
    rotation.start();
  }
  const metrics = new KubeletMetrics().collectProcessMetrics();
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
    dns: { clusterDNS: cfg.clusterDNS, clusterDomain: cfg.clusterDomain, resolvConf },
    allowedUnsafeSysctls: cfg.allowedUnsafeSysctls,
    gcPeriodMs: process.env.TSKUBE_GC_PERIOD ? Number(process.env.TSKUBE_GC_PERIOD) : undefined,
  });
  if (client && cfg.registerNode) {
    nodeSync = startNodeSync(client, cri, cfg.nodeName, hostIP, log, {
      maxPods: cfg.maxPods,
      leaseDurationSec: cfg.nodeLeaseDurationSeconds,
      heartbeatClient: heartbeat,
      updateMs: cfg.nodeStatusUpdateFrequencyMs,
      reportMs: cfg.nodeStatusReportFrequencyMs,
      labels: cfg.nodeLabels,
      taints: cfg.registerWithTaints,
    });
  }
  const local = cfg.metricsBindAddress
    ? await serveLocal(cfg.metricsBindAddress, { metrics }).catch((e: Error) => {
        throw new Error(`--metrics-bind-address: ${e.message}`);
      })
    : undefined;
  if (local) log.info(`serving metrics on http://${cfg.metricsBindAddress.replace(/:\d+$/, '')}:${local.port}/metrics`);
  const network =
    client && cfg.podNetwork !== 'none'
      ? new PodNetwork({
          mode: cfg.podNetwork,
          nodeName: cfg.nodeName,
          nodeIP: hostIP,
          client,
          cniConfDir: cfg.cniConfDir,
          ipamDir: cfg.cniIpamDir || undefined,
          log,
          // containerd picks the new conflist up within moments; then retry the sandboxes that failed without it.
          onReady: () => setTimeout(() => kubelet.resyncAll(), 500).unref(),
        })
      : undefined;
  await network?.start();
  const kubeletApi = await startKubeletApi(kubelet, cri, cfg, { client, log, metrics, hostIP, configz: () => kubeletConfigz(cfg) });
  let stopped = false;
  const started = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await kubelet.start();
        log.info(`kubelet started on node ${cfg.nodeName}, watching ${cfg.staticPodPath}${cfg.staticPodURL ? ` and ${cfg.staticPodURL}` : ''}`);
        return;
      } catch (e) {
        // The runtime may start after us (systemd ordering); keep trying rather than exit.
        log.error(`cannot start: ${(e as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 10_000)));
      }
    }
  })();
  return {
    kubelet,
    stop: async () => {
      stopped = true;
      nodeSync?.stop();
      rotation?.stop();
      await network?.stop();
      await started;
      await Promise.all([kubelet.stop(), kubeletApi.stop(), local?.close()]);
      cri.close();
      client?.close();
      heartbeat?.close();
    },
  };
}
