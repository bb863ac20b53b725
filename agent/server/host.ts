// What the kubelet API needs from the kubelet: its pods, the runtime and
// where logs live. Handlers answer errors as HttpError(code, text), which the
// server writes as plain text, as upstream's go-restful handlers do.
import type { Pod } from 'kubernetes-types/core/v1.js';

import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import type { KubeletMetrics } from '../metrics.js';
import { type ContainerInfo, readPodState } from '../pods/runtime-state.js';
import type { HealthCheck } from './healthz.js';

export interface ServerHost {
  nodeName: string;
  cri: CriClient;
  podLogsDir: string;
  log: Logger;
  metrics: KubeletMetrics;
  /** The desired pods, static and from the API. */
  pods(): Pod[];
  /** Why a container has no instance yet (ContainerCreating, ImagePullBackOff, ...), if the kubelet knows. */
  waitingReason(uid: string, container: string): string | undefined;
  /** The effective KubeletConfiguration, for /configz. */
  configz(): object;
  /** What /healthz checks: ping, log and syncloop. */
  healthChecks: HealthCheck[];
}

export class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A desired pod by namespace and name (and UID when the path carries one). */
export function findPod(host: ServerHost, ns: string, name: string, uid?: string): Pod | undefined {
  return host
    .pods()
    .find((p) => p.metadata?.namespace === ns && p.metadata?.name === name && (!uid || p.metadata?.uid === uid));
}

const podLabel = (p: Pod): string => `${p.metadata!.namespace!}/${p.metadata!.name!}`;

/** Instances of one container of a pod, newest first. */
export async function containerInstances(host: ServerHost, pod: Pod, container: string): Promise<ContainerInfo[]> {
  const st = await readPodState(host.cri, pod.metadata!.uid!, podLabel(pod));
  return st.containers.filter((c) => c.name === container);
}

/** The running instance of a container, for exec/attach (upstream findContainer). */
export async function runningContainer(host: ServerHost, pod: Pod, container: string): Promise<ContainerInfo> {
  const c = (await containerInstances(host, pod, container)).find((x) => x.state === 'running');
  if (!c) throw new HttpError(404, `container not found (${JSON.stringify(container)})`);
  return c;
}

/** The pod's ready sandbox, for port-forward. */
export async function readySandbox(host: ServerHost, pod: Pod): Promise<string> {
  const st = await readPodState(host.cri, pod.metadata!.uid!, podLabel(pod));
  const sb = st.sandboxes.find((s) => s.ready);
  if (!sb) throw new HttpError(404, `pod ${JSON.stringify(pod.metadata!.name)} has no running sandbox`);
  return sb.id;
}
