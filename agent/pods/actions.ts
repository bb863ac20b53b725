// computePodActions: the pure "what to do next" for one pod, given its spec
// and what the runtime holds. Mirrors upstream kuberuntime_manager.go so that
// restart policy, init ordering and sandbox recreation behave the same.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import { canonicalJson, fnv32aHex } from '../../kube/hash.js';
import { latestContainer, type ContainerInfo, type PodRuntimeState } from './runtime-state.js';

export interface KillAction {
  container: ContainerInfo;
  reason: string;
  message: string;
  /** A probe's terminationGracePeriodSeconds, which wins over the pod's for liveness and startup kills. */
  graceSec?: number;
}

/** Probe results by container ID, as the prober manager keeps them. */
export interface ProbeResults {
  result(containerId: string, type: 'Liveness' | 'Startup'): string | undefined;
}

export interface PodActions {
  /** Stop every container and the sandbox. */
  killPod: boolean;
  createSandbox: boolean;
  /** Ready sandbox to use when not creating one. */
  sandboxId: string;
  /** Attempt number for a new sandbox. */
  attempt: number;
  nextInit?: Container;
  containersToStart: Container[];
  containersToKill: KillAction[];
}

/** Hash of the fields that, when changed, require a new container (upstream HashContainer). */
export function containerHash(c: Container): string {
  const { resources: _r, ...rest } = c;
  return fnv32aHex(canonicalJson(rest));
}

export function shouldRestartOnFailure(pod: Pod): boolean {
  return pod.spec?.restartPolicy !== 'Never';
}

function succeeded(c: ContainerInfo | undefined): boolean {
  return c !== undefined && c.state === 'exited' && c.exitCode === 0;
}

function initFailed(c: ContainerInfo): boolean {
  return (c.state === 'exited' && c.exitCode !== 0) || c.state === 'unknown';
}

/** Upstream ShouldContainerBeRestarted. */
export function shouldContainerBeRestarted(pod: Pod, c: ContainerInfo | undefined): boolean {
  if (!c) return true;
  if (c.state === 'running') return false;
  if (c.state === 'unknown' || c.state === 'created') return true;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Never') return false;
  if (policy === 'OnFailure' && c.exitCode === 0) return false;
  return true;
}

/** Upstream podSandboxChanged. */
function sandboxChanged(pod: Pod, state: PodRuntimeState): { create: boolean; attempt: number; id: string } {
  const newest = state.sandboxes[0];
  if (!newest) return { create: true, attempt: 0, id: '' };
  const next = newest.attempt + 1;
  const ready = state.sandboxes.filter((s) => s.ready);
  if (ready.length > 1 || !newest.ready) return { create: true, attempt: next, id: newest.id };
  const wantHost = pod.spec?.hostNetwork === true;
  if (newest.hostNetwork !== wantHost) return { create: true, attempt: next, id: newest.id };
  if (!wantHost && !newest.ip) return { create: true, attempt: next, id: newest.id };
  return { create: false, attempt: newest.attempt, id: newest.id };
}

/** Upstream findNextInitContainerToRun: [last failed status, next container, done]. */
export function nextInitContainer(pod: Pod, state: PodRuntimeState): { failed?: ContainerInfo; next?: Container; done: boolean } {
  const inits = pod.spec?.initContainers ?? [];
  if (inits.length === 0) return { done: true };
  for (const c of pod.spec!.containers) {
    if (latestContainer(state, c.name)?.state === 'running') return { done: true };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const st = latestContainer(state, inits[i]!.name);
    if (st && initFailed(st)) return { failed: st, next: inits[i], done: false };
  }
  for (let i = inits.length - 1; i >= 0; i--) {
    const st = latestContainer(state, inits[i]!.name);
    if (!st) continue;
    if (st.state === 'running' || st.state === 'created') return { done: false };
    if (st.state === 'exited') return i === inits.length - 1 ? { done: true } : { next: inits[i + 1], done: false };
  }
  return { next: inits[0], done: false };
}

export function computePodActions(pod: Pod, state: PodRuntimeState, probes?: ProbeResults): PodActions {
  // A pod the apiserver already records as finished never runs again (upstream: terminal pods are only cleaned up).
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
    const live = state.sandboxes.some((s) => s.ready) || state.containers.some((c) => c.state === 'running' || c.state === 'created');
    return { killPod: live, createSandbox: false, sandboxId: '', attempt: 0, containersToStart: [], containersToKill: [] };
  }
  const sb = sandboxChanged(pod, state);
  const a: PodActions = { killPod: sb.create, createSandbox: sb.create, sandboxId: sb.id, attempt: sb.attempt, containersToStart: [], containersToKill: [] };
  const containers = pod.spec?.containers ?? [];

  if (sb.create) {
    // A Never pod that already ran is not brought back with a new sandbox.
    if (!shouldRestartOnFailure(pod) && sb.attempt !== 0 && state.containers.length !== 0) {
      a.createSandbox = false;
      return a;
    }
    const toStart = containers.filter((c) => !(pod.spec?.restartPolicy === 'OnFailure' && succeeded(latestContainer(state, c.name))));
    if (toStart.length === 0 && nextInitContainer(pod, state).done) {
      a.createSandbox = false;
      return a;
    }
    if ((pod.spec?.initContainers ?? []).length > 0) {
      a.nextInit = pod.spec!.initContainers![0];
      return a;
    }
    a.containersToStart = toStart;
    return a;
  }

  const init = nextInitContainer(pod, state);
  if (!init.done) {
    if (init.next) {
      if (init.failed && !shouldRestartOnFailure(pod)) a.killPod = true;
      else a.nextInit = init.next;
    }
    return a;
  }

  let keep = 0;
  for (const c of containers) {
    const st = latestContainer(state, c.name);
    if (!st || st.state !== 'running') {
      if (shouldContainerBeRestarted(pod, st)) a.containersToStart.push(c);
      continue;
    }
    if (st.hash !== containerHash(c)) {
      a.containersToStart.push(c);
      a.containersToKill.push({ container: st, reason: 'Killing', message: `Container ${c.name} definition changed, will be restarted` });
      continue;
    }
    const failed = probes?.result(st.id, 'Liveness') === 'failure' ? 'liveness' : probes?.result(st.id, 'Startup') === 'failure' ? 'startup' : undefined;
    if (failed) {
      // Killed now, started by a later sync once it shows as exited: that start goes through the crash-loop
      // backoff like any other restart (so a container its liveness probe keeps killing backs off 10 s, 20 s, ...).
      const restart = shouldRestartOnFailure(pod);
      if (restart) keep++;
      const graceSec = (failed === 'liveness' ? c.livenessProbe : c.startupProbe)?.terminationGracePeriodSeconds ?? undefined;
      a.containersToKill.push({ container: st, reason: 'Killing', message: `Container ${c.name} failed ${failed} probe${restart ? ', will be restarted' : ''}`, ...(graceSec !== undefined ? { graceSec } : {}) });
      continue;
    }
    keep++;
  }
  if (keep === 0 && a.containersToStart.length === 0) a.killPod = true;
  return a;
}
