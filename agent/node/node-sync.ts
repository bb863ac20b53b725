// Joins an apiserver: registers the Node (retrying until it works), then
// keeps node status and the Lease heartbeat going. Pods never wait on this.
import type { KubeApi } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import { LeaseHeartbeat } from './lease.js';
import type { NodeFacts } from './node-object.js';
import { NodeStatusManager, type NodeStatusOptions } from './node-status.js';

export interface NodeSync {
  status: NodeStatusManager;
  lease: LeaseHeartbeat;
  stop(): void;
}

/** Node facts from the runtime: version, and the RuntimeReady/NetworkReady conditions. */
export function runtimeFacts(
  cri: CriClient,
  nodeName: string,
  nodeIP: string,
  maxPods?: number,
  extra: Pick<NodeFacts, 'resources' | 'kubeletPort' | 'nodeIPs'> & {
    pressure?: () => Set<string>;
    shuttingDown?: () => boolean;
  } = {},
): () => Promise<NodeFacts> {
  return async () => {
    const pressure = extra.pressure?.();
    const shuttingDown = extra.shuttingDown?.();
    try {
      const [v, st] = await Promise.all([cri.version(), cri.status()]);
      const bad = (st.status?.conditions ?? []).filter(
        (c) => (c.type === 'RuntimeReady' || c.type === 'NetworkReady') && !c.status,
      );
      return {
        nodeName,
        nodeIP,
        nodeIPs: extra.nodeIPs,
        maxPods,
        resources: extra.resources,
        kubeletPort: extra.kubeletPort,
        pressure,
        shuttingDown,
        runtimeName: v.runtime_name,
        runtimeVersion: v.runtime_version,
        runtimeReady: bad.length === 0,
        runtimeMessage: bad.length
          ? `container runtime ${bad.map((c) => `${c.type}=false reason:${c.reason} message:${c.message}`).join(', ')}`
          : undefined,
      };
    } catch (e) {
      return {
        nodeName,
        nodeIP,
        nodeIPs: extra.nodeIPs,
        maxPods,
        resources: extra.resources,
        kubeletPort: extra.kubeletPort,
        pressure,
        shuttingDown,
        runtimeName: 'containerd',
        runtimeVersion: 'unknown',
        runtimeReady: false,
        runtimeMessage: `container runtime is down: ${(e as Error).message}`,
      };
    }
  };
}

export interface NodeSyncOptions extends NodeStatusOptions {
  maxPods?: number;
  resources?: NodeFacts['resources'];
  kubeletPort?: number;
  /** Both families' addresses with a dual-stack --node-ip. */
  nodeIPs?: string[];
  pressure?: () => Set<string>;
  shuttingDown?: () => boolean;
  leaseDurationSec?: number;
  /** A client of its own for the Lease (upstream's heartbeat client), so pod traffic cannot starve it. */
  heartbeatClient?: KubeApi;
}

export function startNodeSync(
  client: KubeApi,
  cri: CriClient,
  nodeName: string,
  nodeIP: string,
  log: Logger,
  o: NodeSyncOptions = {},
): NodeSync {
  const status = new NodeStatusManager(
    client,
    runtimeFacts(cri, nodeName, nodeIP, o.maxPods, {
      resources: o.resources,
      kubeletPort: o.kubeletPort,
      nodeIPs: o.nodeIPs,
      pressure: o.pressure,
      shuttingDown: o.shuttingDown,
    }),
    log,
    o,
  );
  const lease = new LeaseHeartbeat(o.heartbeatClient ?? client, nodeName, log, { durationSec: o.leaseDurationSec });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (delay: number): Promise<void> => {
    if (stopped) return;
    try {
      await status.register();
      lease.setNodeUid(status.uid);
      lease.start();
      status.start();
    } catch (e) {
      log.warn(
        `unable to register node ${nodeName} with the apiserver, retrying in ${delay} ms: ${(e as Error).message}`,
      );
      timer = setTimeout(() => void attempt(Math.min(delay * 2, 7000)), delay);
    }
  };
  void attempt(200);
  return {
    status,
    lease,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      lease.stop();
      status.stop();
    },
  };
}
