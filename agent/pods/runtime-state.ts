// What the runtime currently holds for one pod, read back from CRI labels
// and annotations. This is the kubelet's only memory across restarts.
import { type CriClient, CriError } from '../cri/client.js';
import type { Container as CriContainer, ContainerStatus, PodSandbox, PodSandboxStatusResponse } from '../cri/types.js';
import { podFingerprint } from '../pleg/fingerprint.js';
import {
  A_CONTAINER_HASH,
  A_MEMORY_REQUEST,
  A_POD_TERMINATION_GRACE,
  A_RESTART_ALL_AFTER,
  A_RESTART_COUNT,
  L_CONTAINER_NAME,
  L_CONTAINER_TYPE,
  L_POD_NAME,
  L_POD_NAMESPACE,
  L_POD_UID,
} from './labels.js';
import type { ActualResources } from './resize.js';
import { terminationMessage } from './termination-message.js';

export type CState = 'created' | 'running' | 'exited' | 'unknown';

export interface ContainerInfo {
  id: string;
  sandboxId: string;
  name: string;
  type: 'init' | 'container';
  attempt: number;
  state: CState;
  hash: string;
  restartCount: number;
  exitCode: number;
  reason: string;
  message: string;
  createdAt: number; // ms since epoch
  startedAt: number;
  finishedAt: number;
  image: string;
  imageRef: string;
  /** The RestartAllContainers trigger this instance was started after (its container ID), if any. */
  restartAllAfter?: string;
  /** The cgroup settings the runtime reports (in-place resize compares them with the allocated resources). */
  resources?: ActualResources;
}

export interface SandboxInfo {
  id: string;
  ready: boolean;
  attempt: number;
  createdAt: number;
  ip: string;
  /** Further pod IPs from CRI (the other family of a dual-stack pod network). */
  additionalIps?: string[];
  hostNetwork: boolean;
  podName: string;
  podNamespace: string;
  podUid: string;
  terminationGraceSec?: number;
}

export interface PodRuntimeState {
  uid: string;
  /** The PLEG's fingerprint of the lists this was read from (agent/pleg/fingerprint.ts); unset in hand-made states. */
  fingerprint?: string;
  /** newest first */
  sandboxes: SandboxInfo[];
  /** newest first */
  containers: ContainerInfo[];
}

const nsToMs = (ns: string | number): number => Math.floor(Number(ns) / 1e6);

function cstate(s: string): CState {
  switch (s) {
    case 'CONTAINER_CREATED':
      return 'created';
    case 'CONTAINER_RUNNING':
      return 'running';
    case 'CONTAINER_EXITED':
      return 'exited';
    default:
      return 'unknown';
  }
}

function actualResources(l: {
  cpu_shares: string;
  cpu_quota: string;
  cpu_period: string;
  memory_limit_in_bytes: string;
}): ActualResources {
  return {
    cpuShares: Number(l.cpu_shares),
    cpuQuota: Number(l.cpu_quota),
    cpuPeriod: Number(l.cpu_period),
    memoryLimit: Number(l.memory_limit_in_bytes),
  };
}

export function containerInfo(c: CriContainer, st?: ContainerStatus): ContainerInfo {
  const ann = st?.annotations ?? c.annotations;
  return {
    id: c.id,
    sandboxId: c.pod_sandbox_id,
    name: c.labels[L_CONTAINER_NAME] ?? c.metadata?.name ?? '',
    type: ann[L_CONTAINER_TYPE] === 'init' || c.labels[L_CONTAINER_TYPE] === 'init' ? 'init' : 'container',
    attempt: c.metadata?.attempt ?? 0,
    state: cstate(st?.state ?? c.state),
    hash: ann[A_CONTAINER_HASH] ?? '',
    restartCount: Number(ann[A_RESTART_COUNT] ?? 0) || 0,
    ...(ann[A_RESTART_ALL_AFTER] ? { restartAllAfter: ann[A_RESTART_ALL_AFTER] } : {}),
    exitCode: st?.exit_code ?? 0,
    reason: st?.reason ?? '',
    message: st?.message ?? '',
    createdAt: nsToMs(st?.created_at ?? c.created_at),
    startedAt: nsToMs(st?.started_at ?? 0),
    finishedAt: nsToMs(st?.finished_at ?? 0),
    image: c.image?.image ?? '',
    imageRef: st?.image_ref ?? c.image_ref,
    ...(st?.resources?.linux
      ? { resources: { ...actualResources(st.resources.linux), ...memoryRequestOf(ann[A_MEMORY_REQUEST]) } }
      : {}),
  };
}

const memoryRequestOf = (annotation: string | undefined): { memoryRequest?: number } =>
  annotation && Number.isSafeInteger(Number(annotation)) ? { memoryRequest: Number(annotation) } : {};

export function sandboxInfo(s: PodSandbox, ip = '', hostNetwork = false, additionalIps: string[] = []): SandboxInfo {
  const grace = s.annotations[A_POD_TERMINATION_GRACE];
  return {
    id: s.id,
    ready: s.state === 'SANDBOX_READY',
    attempt: s.metadata?.attempt ?? 0,
    createdAt: nsToMs(s.created_at),
    ip,
    ...(additionalIps.length ? { additionalIps } : {}),
    hostNetwork,
    podName: s.labels[L_POD_NAME] ?? s.metadata?.name ?? '',
    podNamespace: s.labels[L_POD_NAMESPACE] ?? s.metadata?.namespace ?? '',
    podUid: s.labels[L_POD_UID] ?? s.metadata?.uid ?? '',
    terminationGraceSec: grace !== undefined ? Number(grace) : undefined,
  };
}

/** A ready sandbox's network as its status gave it: fixed for the sandbox's life (made once, at RunPodSandbox). */
export interface SandboxNetwork {
  ip: string;
  hostNetwork: boolean;
  additionalIps: string[];
}

/** What a PodSandboxStatus answer says of the sandbox's network. */
export function sandboxNetwork(st: PodSandboxStatusResponse): SandboxNetwork {
  return {
    ip: st.status?.network?.ip ?? '',
    hostNetwork: st.status?.linux?.namespaces?.options?.network === 'NODE',
    additionalIps: (st.status?.network?.additional_ips ?? []).map((x) => x.ip ?? '').filter(Boolean),
  };
}

/**
 * GetPodStatus: sandboxes (with IPs) and containers (with exit codes) of one pod. `networks` (a pod worker's, by
 * sandbox ID) spares the PodSandboxStatus call for ready sandboxes read before, and is kept to the listed ones.
 */
export async function readPodState(
  cri: CriClient,
  uid: string,
  podLabel: string,
  networks?: Map<string, SandboxNetwork>,
): Promise<PodRuntimeState> {
  const [sbs, cs] = await Promise.all([
    cri.listPodSandbox({ label_selector: { [L_POD_UID]: uid } }),
    cri.listContainers({ label_selector: { [L_POD_UID]: uid } }),
  ]);
  // A status call that fails for any reason but "gone" aborts the read (and the sync that asked): taking it for a
  // sandbox without IP or a container that exited 0 would recreate a healthy pod or finish it for good.
  const sandboxes = (
    await Promise.all(
      sbs.map(async (s) => {
        if (s.state !== 'SANDBOX_READY') return sandboxInfo(s);
        let net = networks?.get(s.id);
        if (!net) {
          const st = await goneIsUndefined(cri.podSandboxStatus(s.id, podLabel));
          if (!st) return undefined;
          net = sandboxNetwork(st);
          networks?.set(s.id, net);
        }
        return sandboxInfo(s, net.ip, net.hostNetwork, net.additionalIps);
      }),
    )
  ).filter((x): x is SandboxInfo => x !== undefined);
  if (networks)
    for (const id of networks.keys())
      if (!sbs.some((s) => s.id === id && s.state === 'SANDBOX_READY')) networks.delete(id);
  const containers = (
    await Promise.all(
      cs.map(async (c) => {
        const st = await goneIsUndefined(cri.containerStatus(c.id, podLabel));
        if (!st) return undefined;
        const info = containerInfo(c, st);
        if (info.state === 'exited') info.message = await terminationMessage(st);
        return info;
      }),
    )
  ).filter((x): x is ContainerInfo => x !== undefined);
  sandboxes.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  containers.sort((a, b) => b.createdAt - a.createdAt || b.attempt - a.attempt);
  return { uid, fingerprint: podFingerprint(sbs, cs), sandboxes, containers };
}

/** A CRI answer, or undefined when the object went away between the list and the status call. */
async function goneIsUndefined<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof CriError && e.notFound) return undefined;
    throw e;
  }
}

/** The newest instance of a named container, if any. */
export function latestContainer(state: PodRuntimeState, name: string): ContainerInfo | undefined {
  return state.containers.find((c) => c.name === name);
}
