// Pod spec -> CRI PodSandboxConfig / ContainerConfig, with upstream labels,
// annotations, log paths and namespace modes.
import path from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerConfigIn, PodSandboxConfigIn } from '../cri/types.js';
import { milliValue, parseQuantity } from '../../kube/quantity.js';
import { containerHash } from './actions.js';
import * as L from './labels.js';

export interface NodeContext {
  nodeName: string;
  podLogsDir: string;
  rootDir: string;
  hostIP: string;
}

export function podLogDir(podLogsDir: string, pod: Pod): string {
  const md = pod.metadata!;
  return path.join(podLogsDir, `${md.namespace!}_${md.name!}_${md.uid!}`);
}

function podLabels(pod: Pod): Record<string, string> {
  const md = pod.metadata!;
  return { [L.L_POD_NAME]: md.name!, [L.L_POD_NAMESPACE]: md.namespace!, [L.L_POD_UID]: md.uid! };
}

export function buildSandboxConfig(pod: Pod, attempt: number, node: NodeContext): PodSandboxConfigIn {
  const md = pod.metadata!;
  const spec = pod.spec!;
  const hostNetwork = spec.hostNetwork === true;
  const portMappings = [];
  for (const c of spec.containers) {
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      portMappings.push({ protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP', container_port: p.containerPort, host_port: p.hostPort, host_ip: p.hostIP ?? '' });
    }
  }
  const annotations: Record<string, string> = { ...(md.annotations ?? {}) };
  return {
    metadata: { name: md.name!, uid: md.uid!, namespace: md.namespace!, attempt },
    hostname: hostNetwork ? '' : (spec.hostname ?? md.name!).slice(0, 63).replace(/[-.]+$/, ''),
    log_directory: podLogDir(node.podLogsDir, pod),
    port_mappings: portMappings,
    labels: { ...(md.labels ?? {}), ...podLabels(pod) },
    annotations,
    linux: {
      cgroup_parent: '',
      security_context: {
        namespace_options: { network: hostNetwork ? 'NODE' : 'POD', pid: spec.hostPID ? 'NODE' : 'CONTAINER', ipc: spec.hostIPC ? 'NODE' : 'POD' },
        privileged: spec.containers.some((c) => c.securityContext?.privileged === true),
      },
    },
  };
}

export interface ContainerEnvContext {
  podIP: string;
  hostIP: string;
}

function envValue(pod: Pod, fieldPath: string, ctx: ContainerEnvContext): string | undefined {
  const md = pod.metadata!;
  switch (fieldPath) {
    case 'metadata.name': return md.name;
    case 'metadata.namespace': return md.namespace;
    case 'metadata.uid': return md.uid;
    case 'spec.nodeName': return pod.spec?.nodeName;
    case 'spec.serviceAccountName': return pod.spec?.serviceAccountName ?? '';
    case 'status.podIP': return ctx.podIP;
    case 'status.hostIP': return ctx.hostIP;
    default: return undefined;
  }
}

/** Linux resources as upstream computes them for cgroupfs (shares from requests, quota from limits). */
export function linuxResources(c: Container): { cpu_shares: string; cpu_quota: string; cpu_period: string; memory_limit_in_bytes: string } {
  const req = c.resources?.requests ?? {};
  const lim = c.resources?.limits ?? {};
  const cpuReq = req.cpu ?? lim.cpu;
  const shares = cpuReq === undefined ? 2 : Math.max(2, Math.floor((milliValue(cpuReq) * 1024) / 1000));
  const period = 100_000;
  const quota = lim.cpu === undefined ? 0 : Math.max(1000, Math.floor((milliValue(lim.cpu) * period) / 1000));
  const mem = lim.memory === undefined ? 0 : Math.floor(parseQuantity(lim.memory));
  return { cpu_shares: String(shares), cpu_quota: String(quota), cpu_period: String(quota ? period : 0), memory_limit_in_bytes: String(mem) };
}

export function buildContainerConfig(
  pod: Pod,
  c: Container,
  kind: 'init' | 'container',
  restartCount: number,
  imageRef: string,
  ctx: ContainerEnvContext,
  mounts: ContainerConfigIn['mounts'],
): ContainerConfigIn {
  const spec = pod.spec!;
  const envs: { key: string; value: string }[] = [];
  for (const e of c.env ?? []) {
    if (e.value !== undefined) envs.push({ key: e.name, value: e.value });
    else if (e.valueFrom?.fieldRef) {
      const v = envValue(pod, e.valueFrom.fieldRef.fieldPath, ctx);
      if (v !== undefined) envs.push({ key: e.name, value: v });
    } else if (!e.valueFrom) envs.push({ key: e.name, value: '' });
  }
  return {
    metadata: { name: c.name, attempt: restartCount },
    image: { image: imageRef, user_specified_image: c.image! },
    command: c.command ?? [],
    args: c.args ?? [],
    working_dir: c.workingDir ?? '',
    envs,
    mounts,
    labels: { ...podLabels(pod), [L.L_CONTAINER_NAME]: c.name },
    annotations: {
      [L.A_CONTAINER_HASH]: containerHash(c),
      [L.A_RESTART_COUNT]: String(restartCount),
      [L.A_TERMINATION_MESSAGE_PATH]: c.terminationMessagePath ?? '/dev/termination-log',
      [L.A_TERMINATION_MESSAGE_POLICY]: c.terminationMessagePolicy ?? 'File',
      [L.A_POD_TERMINATION_GRACE]: String(spec.terminationGracePeriodSeconds ?? 30),
      [L.L_CONTAINER_TYPE]: kind,
      ...(c.ports?.length ? { [L.A_PORTS]: JSON.stringify(c.ports) } : {}),
    },
    log_path: path.join(c.name, `${restartCount}.log`),
    stdin: c.stdin ?? false,
    stdin_once: c.stdinOnce ?? false,
    tty: c.tty ?? false,
    linux: {
      resources: linuxResources(c),
      security_context: {
        privileged: c.securityContext?.privileged ?? false,
        namespace_options: { network: spec.hostNetwork ? 'NODE' : 'POD', pid: spec.hostPID ? 'NODE' : 'CONTAINER', ipc: spec.hostIPC ? 'NODE' : 'POD' },
        ...(c.securityContext?.runAsUser !== undefined ? { run_as_user: { value: String(c.securityContext.runAsUser) } } : {}),
        ...(c.securityContext?.runAsGroup !== undefined ? { run_as_group: { value: String(c.securityContext.runAsGroup) } } : {}),
        readonly_rootfs: c.securityContext?.readOnlyRootFilesystem ?? false,
        no_new_privs: c.securityContext?.allowPrivilegeEscalation === false,
      },
    },
  };
}
