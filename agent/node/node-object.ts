// The Node object this kubelet registers and keeps up to date: labels,
// capacity, addresses, nodeInfo and the four conditions with upstream
// reasons and messages.
import fs from 'node:fs';
import os from 'node:os';

import { goArch } from '../../kube/platform.js';
import { TSKUBE_VERSION } from '../../kube/version.js';

export const KUBELET_VERSION = TSKUBE_VERSION;
export const KUBELET_PORT = 10250;
export const MAX_PODS = 110;

export interface NodeFacts {
  nodeName: string;
  nodeIP: string;
  /** Both families' addresses with a dual-stack --node-ip (nodeIP first): one InternalIP each. */
  nodeIPs?: string[];
  runtimeName: string;
  runtimeVersion: string;
  runtimeReady: boolean;
  runtimeMessage?: string;
  /** maxPods (default 110). */
  maxPods?: number;
  /** capacity and allocatable as the container manager computes them (agent/cm/node-allocatable.ts). */
  resources?: { capacity: Record<string, string>; allocatable: Record<string, string> };
  /** The kubelet API's port, for daemonEndpoints. */
  kubeletPort?: number;
  /** Pressure conditions the eviction manager holds True. */
  pressure?: Set<string>;
  /** Graceful node shutdown has begun. */
  shuttingDown?: boolean;
}

/** What the Node registers with, beyond what it reports (registerWithTaints, --node-labels). */
export interface Registration {
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
}

const readTrim = (f: string): string => {
  try {
    return fs.readFileSync(f, 'utf8').trim();
  } catch {
    return '';
  }
};

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readTrim('/etc/os-release'));
  return m?.[1] ?? 'Linux';
}

export type Condition = {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
};

export function nodeConditions(f: NodeFacts): Condition[] {
  return [
    f.pressure?.has('MemoryPressure')
      ? {
          type: 'MemoryPressure',
          status: 'True',
          reason: 'KubeletHasInsufficientMemory',
          message: 'kubelet has insufficient memory available',
        }
      : {
          type: 'MemoryPressure',
          status: 'False',
          reason: 'KubeletHasSufficientMemory',
          message: 'kubelet has sufficient memory available',
        },
    f.pressure?.has('DiskPressure')
      ? { type: 'DiskPressure', status: 'True', reason: 'KubeletHasDiskPressure', message: 'kubelet has disk pressure' }
      : {
          type: 'DiskPressure',
          status: 'False',
          reason: 'KubeletHasNoDiskPressure',
          message: 'kubelet has no disk pressure',
        },
    f.pressure?.has('PIDPressure')
      ? {
          type: 'PIDPressure',
          status: 'True',
          reason: 'KubeletHasInsufficientPID',
          message: 'kubelet has insufficient PID available',
        }
      : {
          type: 'PIDPressure',
          status: 'False',
          reason: 'KubeletHasSufficientPID',
          message: 'kubelet has sufficient PID available',
        },
    f.shuttingDown
      ? { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'node is shutting down' }
      : f.runtimeReady
        ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
        : {
            type: 'Ready',
            status: 'False',
            reason: 'KubeletNotReady',
            message: f.runtimeMessage ?? 'container runtime is down',
          },
  ];
}

/**
 * The features this kubelet declares in status.declaredFeatures (upstream NodeDeclaredFeatures, beta and on by
 * default since v1.35), sorted: the apiserver refuses, and the scheduler keeps off the node, pods and updates that
 * need a feature the node does not declare.
 */
export const DECLARED_FEATURES = [
  'InPlacePodLevelResourcesVerticalScaling',
  'InPlacePodVerticalScalingInitContainers',
  'RestartAllContainersOnContainerExits',
];

/** The status fields (without heartbeat times), for change detection and for the PATCH. */
export function nodeStatus(f: NodeFacts): Record<string, unknown> {
  const capacity = f.resources?.capacity ?? {
    cpu: String(os.cpus().length),
    memory: `${Math.floor(os.totalmem() / 1024)}Ki`,
    pods: String(f.maxPods ?? MAX_PODS),
  };
  return {
    capacity,
    allocatable: f.resources?.allocatable ?? { ...capacity },
    addresses: [
      ...(f.nodeIP ? (f.nodeIPs ?? [f.nodeIP]).map((address) => ({ type: 'InternalIP', address })) : []),
      { type: 'Hostname', address: f.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: f.kubeletPort || KUBELET_PORT } },
    nodeInfo: {
      machineID: readTrim('/etc/machine-id'),
      systemUUID: readTrim('/sys/class/dmi/id/product_uuid'),
      bootID: readTrim('/proc/sys/kernel/random/boot_id'),
      kernelVersion: os.release(),
      osImage: osImage(),
      containerRuntimeVersion: `${f.runtimeName}://${f.runtimeVersion}`,
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: goArch(),
    },
    conditions: nodeConditions(f),
    declaredFeatures: DECLARED_FEATURES,
  };
}

export function nodeObject(f: NodeFacts, reg: Registration = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: f.nodeName,
      labels: {
        ...(reg.labels ?? {}),
        'kubernetes.io/hostname': f.nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': goArch(),
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': goArch(),
      },
    },
    spec: reg.taints?.length ? { taints: reg.taints } : {},
    status: nodeStatus(f),
  };
}
