// Pod spec -> CRI PodSandboxConfig / ContainerConfig, with upstream labels,
// annotations, log paths and namespace modes.
import path from 'node:path';

import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { milliValue, parseQuantity } from '../../kube/quantity.js';
import type { LinuxContainerSecurityContext } from '../../proto/gen/runtime/v1/LinuxContainerSecurityContext.js';
import type { ContainerConfigIn, PodSandboxConfigIn } from '../cri/types.js';
import { containerHash } from './container-hash.js';
import { expand } from './env.js';
import { podHostnameAndDomain } from './etc-hosts.js';
import * as L from './labels.js';
import { appArmorProfile, seccompProfile } from './security-profiles.js';
import { sandboxSysctls } from './sysctls.js';

export type ContainerKind = 'init' | 'container' | 'ephemeral';

export interface NodeContext {
  nodeName: string;
  podLogsDir: string;
  /** Where the <pod>_<ns>_<container>-<id>.log links go (/var/log/containers); unset: none. */
  containerLogsDir?: string;
  rootDir: string;
  hostIP: string;
  /** The node's addresses of both families with --node-ip's dual-stack pair (hostIP first); unset: [hostIP]. */
  hostIPs?: string[];
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
      portMappings.push({
        protocol: (p.protocol ?? 'TCP') as 'TCP' | 'UDP' | 'SCTP',
        container_port: p.containerPort,
        host_port: p.hostPort,
        host_ip: p.hostIP ?? '',
      });
    }
  }
  const annotations: Record<string, string> = { ...(md.annotations ?? {}) };
  const seccomp = seccompProfile(pod, undefined, node.rootDir);
  const apparmor = appArmorProfile(pod, undefined);
  const sysctls = sandboxSysctls(pod);
  return {
    metadata: { name: md.name!, uid: md.uid!, namespace: md.namespace!, attempt },
    hostname: hostNetwork ? '' : podHostnameAndDomain(pod, '').hostname,
    log_directory: podLogDir(node.podLogsDir, pod),
    port_mappings: portMappings,
    labels: { ...(md.labels ?? {}), ...podLabels(pod) },
    annotations,
    linux: {
      cgroup_parent: '',
      ...(Object.keys(sysctls).length ? { sysctls } : {}),
      security_context: {
        namespace_options: {
          network: hostNetwork ? 'NODE' : 'POD',
          pid: spec.hostPID ? 'NODE' : 'CONTAINER',
          ipc: spec.hostIPC ? 'NODE' : 'POD',
        },
        // Upstream: any privileged container, init containers included, makes the sandbox privileged.
        privileged: [...(spec.initContainers ?? []), ...spec.containers].some(
          (c) => c.securityContext?.privileged === true,
        ),
        ...(seccomp ? { seccomp } : {}),
        ...(apparmor ? { apparmor } : {}),
      },
    },
  };
}

/** Pod-level requirements (v1.34+; kubernetes-types stops at v1.30). */
export type PodResources = { requests?: Record<string, string>; limits?: Record<string, string> } | undefined;

/** The pod-level requirements of a pod, if it sets any. */
export const podResourcesOf = (pod: Pod | undefined): PodResources =>
  (pod?.spec as { resources?: PodResources } | undefined)?.resources;

/**
 * Linux resources as upstream computes them for cgroupfs: shares from the cpu request (or the limit), quota and
 * memory limit from the limits; a container without its own cpu or memory limit takes the pod-level one.
 */
/** A container's memory request in bytes (0 when it has none), as recorded for resize decisions. */
export const memoryRequestBytes = (c: Container): number => {
  const q = c.resources?.requests?.memory;
  return q === undefined ? 0 : parseQuantity(String(q));
};

export function linuxResources(
  c: Container,
  podResources?: PodResources,
): {
  cpu_shares: string;
  cpu_quota: string;
  cpu_period: string;
  memory_limit_in_bytes: string;
} {
  const req = c.resources?.requests ?? {};
  const lim: Record<string, string> = { ...(c.resources?.limits ?? {}) };
  const podLimits = podResources?.limits ?? {};
  const zero = (q: string | undefined, f: (x: string) => number): boolean => q === undefined || f(q) === 0;
  if (zero(lim.cpu, milliValue) && !zero(podLimits.cpu, milliValue)) lim.cpu = podLimits.cpu!;
  if (zero(lim.memory, parseQuantity) && !zero(podLimits.memory, parseQuantity)) lim.memory = podLimits.memory!;
  const cpuReq = req.cpu ?? lim.cpu;
  const shares = cpuReq === undefined ? 2 : Math.max(2, Math.floor((milliValue(cpuReq) * 1024) / 1000));
  const period = 100_000;
  const quota = lim.cpu === undefined ? 0 : Math.max(1000, Math.floor((milliValue(lim.cpu) * period) / 1000));
  const mem = lim.memory === undefined ? 0 : Math.floor(parseQuantity(lim.memory));
  return {
    cpu_shares: String(shares),
    cpu_quota: String(quota),
    cpu_period: String(quota ? period : 0),
    memory_limit_in_bytes: String(mem),
  };
}

/** Container security context over the pod's (runAsUser, runAsGroup, groups, profiles), as upstream merges them. */
function securityContext(pod: Pod, c: Container, rootDir: string): LinuxContainerSecurityContext {
  const ps = pod.spec?.securityContext ?? {};
  const cs = c.securityContext ?? {};
  const user = cs.runAsUser ?? ps.runAsUser;
  const group = cs.runAsGroup ?? ps.runAsGroup;
  const spec = pod.spec!;
  const caps = cs.capabilities;
  const groups = [...(ps.fsGroup !== undefined ? [ps.fsGroup] : []), ...(ps.supplementalGroups ?? [])];
  const seccomp = seccompProfile(pod, c, rootDir);
  const apparmor = appArmorProfile(pod, c);
  return {
    privileged: cs.privileged ?? false,
    namespace_options: {
      network: spec.hostNetwork ? 'NODE' : 'POD',
      pid: spec.hostPID ? 'NODE' : 'CONTAINER',
      ipc: spec.hostIPC ? 'NODE' : 'POD',
    },
    ...(user !== undefined ? { run_as_user: { value: String(user) } } : {}),
    ...(group !== undefined ? { run_as_group: { value: String(group) } } : {}),
    ...(groups.length ? { supplemental_groups: groups.map(String) } : {}),
    ...(caps ? { capabilities: { add_capabilities: caps.add ?? [], drop_capabilities: caps.drop ?? [] } } : {}),
    readonly_rootfs: cs.readOnlyRootFilesystem ?? false,
    no_new_privs: cs.allowPrivilegeEscalation === false,
    ...(seccomp ? { seccomp } : {}),
    ...(apparmor ? { apparmor } : {}),
  };
}

function withTarget(sc: LinuxContainerSecurityContext, targetId: string | undefined): LinuxContainerSecurityContext {
  return targetId ? { ...sc, namespace_options: { ...sc.namespace_options, pid: 'TARGET', target_id: targetId } } : sc;
}

/** `env`: the container's resolved environment; command and args expand $(VAR) from it, as upstream. */
export function buildContainerConfig(
  pod: Pod,
  c: Container,
  kind: ContainerKind,
  restartCount: number,
  imageRef: string,
  env: Map<string, string>,
  mounts: ContainerConfigIn['mounts'],
  rootDir = '/var/lib/kubelet',
  /** An ephemeral container's target: it shares that container's PID namespace. */
  targetId?: string,
  /** The RestartAllContainers trigger this container starts after (restart-all.ts). */
  restartAllAfter?: string,
): ContainerConfigIn {
  const spec = pod.spec!;
  return {
    metadata: { name: c.name, attempt: restartCount },
    image: { image: imageRef, user_specified_image: c.image! },
    command: (c.command ?? []).map((x) => expand(x, env)),
    args: (c.args ?? []).map((x) => expand(x, env)),
    working_dir: c.workingDir ?? '',
    envs: [...env].map(([key, value]) => ({ key, value })),
    mounts,
    labels: { ...podLabels(pod), [L.L_CONTAINER_NAME]: c.name },
    annotations: {
      [L.A_CONTAINER_HASH]: containerHash(c),
      [L.A_RESTART_COUNT]: String(restartCount),
      ...(restartAllAfter ? { [L.A_RESTART_ALL_AFTER]: restartAllAfter } : {}),
      [L.A_MEMORY_REQUEST]: String(memoryRequestBytes(c)),
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
      resources: linuxResources(c, podResourcesOf(pod)),
      security_context: withTarget(securityContext(pod, c, rootDir), targetId),
    },
  };
}
