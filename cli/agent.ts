// `tskube agent`: the kubelet with its node registration, kubelet API and
// local ports, from an AgentConfig. `tskube up` runs the same in-process.
import fs from 'node:fs';

import { ContainerManager } from '../agent/cm/container-manager.js';
import { FatalConfigError } from '../agent/cm/errors.js';
import { checkReservations, nodeResources, readCapacity, reserved } from '../agent/cm/node-allocatable.js';
import { CriClient } from '../agent/cri/client.js';
import type { Signal } from '../agent/eviction/decide.js';
import { EvictionManager } from '../agent/eviction/eviction-manager.js';
import { observeNode } from '../agent/eviction/observe.js';
import { ImageGcManager } from '../agent/images/image-gc.js';
import { Kubelet } from '../agent/kubelet.js';
import { KubeletMetrics } from '../agent/metrics.js';
import { PodNetwork } from '../agent/network/network.js';
import { ClientCertRotation, clientCredentials } from '../agent/node/cert-rotation.js';
import { type NodeSync, startNodeSync } from '../agent/node/node-sync.js';
import { tlsBootstrap } from '../agent/node/tls-bootstrap.js';
import { effectiveResolvConf } from '../agent/pods/dns.js';
import { containerLogsDir } from '../agent/pods/log-links.js';
import { serveLocal } from '../agent/server/metrics-server.js';
import { NodeShutdownManager } from '../agent/shutdown/node-shutdown.js';
import { ensureManifestDir } from '../agent/sources/file.js';
import { familyOfText } from '../kube/cidr.js';
import { KubeClient } from '../kube/client.js';
import { ApiEventRecorder, LogEventRecorder } from '../kube/events.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import type { Logger } from '../kube/log.js';
import { firstIPv4 } from '../kube/platform.js';
import { type AgentConfig, kubeletConfigz } from './agent-config.js';

export interface RunningAgent {
  kubelet: Kubelet;
  /** Stops the kubelet and its servers; pods keep running. */
  stop(): Promise<void>;
}

export async function startAgent(cfg: AgentConfig, log: Logger): Promise<RunningAgent> {
  const cri = new CriClient({ endpoint: cfg.containerRuntimeEndpoint });
  const hostIP = cfg.nodeIP || firstIPv4();
  // Dual stack: both families' addresses on the Node and in pod statuses.
  const hostIPs = cfg.nodeIPs.length ? cfg.nodeIPs : [hostIP];
  const resolv = effectiveResolvConf(cfg.resolvConf, (f) => {
    try {
      return fs.readFileSync(f, 'utf8');
    } catch {
      return undefined;
    }
  });
  if (resolv.warning) log.warn(resolv.warning);
  const resolvConf = resolv.file;
  if (cfg.staticPodPath && ensureManifestDir(cfg.staticPodPath))
    log.info(`created the static pod directory ${cfg.staticPodPath}`);
  if (cfg.bootstrapKubeconfig) {
    if (!cfg.kubeconfig)
      throw new Error(
        '--bootstrap-kubeconfig needs --kubeconfig: the file the bootstrapped credentials are written to',
      );
    await tlsBootstrap(
      {
        nodeName: cfg.nodeName,
        kubeconfig: cfg.kubeconfig,
        bootstrapKubeconfig: cfg.bootstrapKubeconfig,
        certDir: cfg.certDir,
      },
      log,
    );
  }
  const credentials = (file: string) => clientCredentials(file, cfg.certDir, cfg.rotateCertificates);
  const client = cfg.kubeconfig ? new KubeClient(credentials(cfg.kubeconfig)) : undefined;
  // The Lease gets its own connection, as upstream's heartbeat client: status patches and volume reads cannot hold it up.
  const heartbeat = cfg.kubeconfig ? new KubeClient(credentials(cfg.kubeconfig)) : undefined;
  let nodeSync: NodeSync | undefined;
  let rotation: ClientCertRotation | undefined;
  if (client && heartbeat && cfg.rotateCertificates && cfg.kubeconfig && loadKubeconfig(cfg.kubeconfig).cert) {
    rotation = new ClientCertRotation(
      { kubeconfig: cfg.kubeconfig, nodeName: cfg.nodeName, certDir: cfg.certDir, clients: [client, heartbeat] },
      log,
    );
    rotation.start();
  }
  const metrics = new KubeletMetrics().collectProcessMetrics();
  // Node resources: checked against the reservations before anything runs, as upstream's validation.
  const capacity = readCapacity(cfg.rootDir, cfg.maxPods);
  const reservations = {
    kubeReserved: cfg.kubeReserved,
    systemReserved: cfg.systemReserved,
    evictionHard: cfg.evictionHard,
  };
  checkReservations(capacity, reservations);
  const resources = nodeResources(capacity, reservations);
  const cgroups = new ContainerManager(
    {
      cgroupDriver: cfg.cgroupDriver,
      cgroupsPerQOS: cfg.cgroupsPerQOS,
      cgroupRoot: cfg.cgroupRoot,
      enforceNodeAllocatable: cfg.enforceNodeAllocatable,
      podPidsLimit: cfg.podPidsLimit,
    },
    {
      cpuMilli: capacity.cpuMilli,
      memory: capacity.memory,
      reservedCpuMilli: reserved(reservations, 'cpu'),
      reservedMemory: reserved(reservations, 'memory'),
    },
    log,
  );
  let eviction: EvictionManager | undefined;
  let shutdown: NodeShutdownManager | undefined;
  const events = client
    ? new ApiEventRecorder(client, { component: 'kubelet', host: cfg.nodeName }, log, new LogEventRecorder(log))
    : new LogEventRecorder(log);
  const kubelet = new Kubelet({
    cgroups,
    pressure: () => eviction?.conditions() ?? new Set(),
    shuttingDown: () => shutdown?.shuttingDown ?? false,
    allocatable: resources.allocatable,
    metrics,
    client,
    nodeUid: () => nodeSync?.status.uid ?? '',
    cri,
    log,
    events,
    node: {
      nodeName: cfg.nodeName,
      hostIP,
      hostIPs,
      podLogsDir: cfg.podLogsDir,
      rootDir: cfg.rootDir,
      containerLogsDir: containerLogsDir(cfg.podLogsDir),
    },
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
  const allocatableMemory = capacity.memory - reserved(reservations, 'memory');
  // The image filesystem: where the runtime says its images are (ImageFsInfo), else the kubelet's root dir.
  let imageFsDir: string | undefined;
  const imageFs = async (): Promise<string> =>
    (imageFsDir ??= (await cri.imageFsInfo().catch(() => []))[0] ?? cfg.rootDir);
  const statfs = (dir: string): { capacity: number; available: number } | undefined => {
    try {
      const s = fs.statfsSync(dir);
      return { capacity: s.blocks * s.bsize, available: s.bavail * s.bsize };
    } catch {
      return undefined;
    }
  };
  const imageGc = new ImageGcManager(
    {
      highThresholdPercent: cfg.imageGCHighThresholdPercent,
      lowThresholdPercent: cfg.imageGCLowThresholdPercent,
      minAgeMs: cfg.imageMinimumGCAgeMs,
      maxAgeMs: cfg.imageMaximumGCAgeMs,
    },
    {
      cri,
      imageFs: () => statfs(imageFsDir ?? cfg.rootDir),
      sandboxImage: () => cri.sandboxImage().catch(() => undefined),
      events,
      nodeName: cfg.nodeName,
      log,
    },
    process.env.TSKUBE_IMAGE_GC_PERIOD ? Number(process.env.TSKUBE_IMAGE_GC_PERIOD) : undefined,
  );
  void imageFs().then(() => imageGc.start());
  eviction = new EvictionManager(
    {
      thresholds: [
        ...Object.entries(cfg.evictionHard).map(([signal, value]) => ({
          signal: signal as Signal,
          value,
          gracePeriodMs: 0,
        })),
        ...Object.entries(cfg.evictionSoft).map(([signal, s]) => ({
          signal: signal as Signal,
          value: s.threshold,
          gracePeriodMs: s.gracePeriodMs,
        })),
      ],
      transitionPeriodMs: cfg.evictionPressureTransitionPeriodMs,
      maxPodGracePeriodSec: cfg.evictionMaxPodGracePeriod,
      monitoringMs: process.env.TSKUBE_EVICTION_PERIOD ? Number(process.env.TSKUBE_EVICTION_PERIOD) : undefined,
      rootDir: cfg.rootDir,
      podLogsDir: cfg.podLogsDir,
    },
    {
      observe: async () =>
        observeNode({
          tree: cgroups.tree,
          rootDir: cfg.rootDir,
          imageFsDir: await imageFs(),
          memoryCapacity: capacity.memory,
          kubepods: cfg.cgroupsPerQOS ? { cgroup: cgroups.kubepodsPath(), allocatable: allocatableMemory } : undefined,
        }),
      cri,
      activePods: () => kubelet.evictionCandidates(),
      reclaimDisk: async () => {
        await kubelet.gc();
        await imageGc
          .deleteUnusedImages()
          .catch((e: Error) => log.warn(`eviction: deleting unused images: ${e.message}`));
      },
      events,
      nodeName: cfg.nodeName,
      log,
    },
  );
  shutdown = new NodeShutdownManager(cfg.shutdownGracePeriodMs / 1000, cfg.shutdownGracePeriodCriticalPodsMs / 1000, {
    pods: () => kubelet.shutdownCandidates(),
    log,
  });
  shutdown.start();
  // No thresholds at all (evictionHard: {}): nothing to watch.
  if (eviction && (Object.keys(cfg.evictionHard).length || Object.keys(cfg.evictionSoft).length)) eviction.start();
  if (client && cfg.registerNode) {
    nodeSync = startNodeSync(client, cri, cfg.nodeName, hostIP, log, {
      pressure: () => eviction!.conditions(),
      shuttingDown: () => shutdown?.shuttingDown ?? false,
      maxPods: cfg.maxPods,
      nodeIPs: hostIPs,
      resources,
      kubeletPort: cfg.port,
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
          nodeIP: hostIPs.find((ip) => familyOfText(ip) === 'IPv4'),
          nodeIP6: hostIPs.find((ip) => familyOfText(ip) === 'IPv6'),
          client,
          cniConfDir: cfg.cniConfDir,
          ipamDir: cfg.cniIpamDir || undefined,
          log,
          // containerd picks the new conflist up within moments; then retry the sandboxes that failed without it.
          onReady: () => setTimeout(() => kubelet.resyncAll(), 500).unref(),
        })
      : undefined;
  await network?.start();
  let stopped = false;
  const started = (async () => {
    for (let attempt = 0; !stopped; attempt++) {
      try {
        await kubelet.start();
        log.info(
          `kubelet started on node ${cfg.nodeName}, watching ${cfg.staticPodPath}${cfg.staticPodURL ? ` and ${cfg.staticPodURL}` : ''}`,
        );
        return;
      } catch (e) {
        // A configuration the runtime contradicts cannot get better: upstream exits.
        if (e instanceof FatalConfigError) {
          log.error(`cannot start: ${e.message}`);
          process.exit(1);
        }
        // The runtime may start after us (systemd ordering); keep trying rather than exit.
        log.error(`cannot start: ${(e as Error).message}; retrying`);
        await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** attempt, 10_000)));
      }
    }
  })();
  // The kubelet API (its code, its serving certificate: openssl on a first start) comes up once the pod sources have
  // started, or after a second without the runtime: static pods do not wait for it, on a single-threaded start.
  const apiStarting = Promise.race([started, new Promise((r) => setTimeout(r, 1000).unref())])
    .then(() => import('../agent/server/start.js'))
    .then(({ startKubeletApi }) =>
      startKubeletApi(kubelet, cri, cfg, {
        client,
        log,
        metrics,
        hostIP,
        hostIPs,
        configz: () => kubeletConfigz(cfg),
        cgroups,
      }),
    );
  const kubeletApi = await apiStarting.catch(async (e: Error) => {
    stopped = true;
    await started;
    await kubelet.stop();
    throw e;
  });
  return {
    kubelet,
    stop: async () => {
      stopped = true;
      eviction?.stop();
      shutdown?.stop();
      imageGc.stop();
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
