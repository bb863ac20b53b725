// computePodActions: the pure "what to do next" for one pod, given its spec
// and what the runtime holds. Mirrors upstream kuberuntime_manager.go so that
// restart policy, init ordering and sandbox recreation behave the same.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { containerHash, legacyContainerHash } from './container-hash.js';
import { podResourcesOf } from './cri-config.js';
import { isDecrease, resizeChanges, resizeNeedsRestart } from './resize.js';
import { containersToReset, currentRun } from './restart-all.js';
import { containerShouldRestart } from './restart-rules.js';
import { type ContainerInfo, latestContainer, type PodRuntimeState } from './runtime-state.js';
import { isSidecar } from './sidecars.js';

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
  /** Init containers to start now: the next regular one, and sidecars that are not running. */
  initToStart: Container[];
  /** Ephemeral containers (kubectl debug) not started yet in this sandbox; they are never restarted. */
  ephemeralToStart: Container[];
  containersToStart: Container[];
  containersToKill: KillAction[];
  /** Running containers (and sidecars) to give their allocated cpu and memory in place, decreases first. */
  containersToResize: { container: Container; id: string }[];
  /** A container restarts for a resize: the pod cgroup takes the new resources before it starts again. */
  resizeRestart?: true;
}

/** Nothing to start, stop, create or resize: what a sync would do with the state is report it. */
export function isIdle(a: PodActions): boolean {
  return (
    !a.killPod &&
    !a.createSandbox &&
    !a.initToStart.length &&
    !a.ephemeralToStart.length &&
    !a.containersToStart.length &&
    !a.containersToKill.length &&
    !a.containersToResize.length
  );
}

/** Upstream containerChanged: the running container was made from another definition. */
export const containerChanged = (c: Container, running: ContainerInfo): boolean =>
  running.hash !== containerHash(c) && running.hash !== legacyContainerHash(c);

export function shouldRestartOnFailure(pod: Pod): boolean {
  return pod.spec?.restartPolicy !== 'Never';
}

function succeeded(c: ContainerInfo | undefined): boolean {
  return c !== undefined && c.state === 'exited' && c.exitCode === 0;
}

/** Upstream ShouldContainerBeRestarted (with ContainerRestartRules). */
export function shouldContainerBeRestarted(pod: Pod, spec: Container, c: ContainerInfo | undefined): boolean {
  if (!c) return true;
  if (c.state === 'running') return false;
  if (c.state === 'unknown' || c.state === 'created') return true;
  return containerShouldRestart(spec, pod.spec, c.exitCode);
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

/** What the init phase asks for (upstream computeInitContainerActions). */
export interface InitActions {
  /** Every regular init container succeeded and every sidecar started: the regular containers may run. */
  done: boolean;
  start: Container[];
  kill: KillAction[];
  /** The last failed regular init container, when that is what holds the pod. */
  failed?: ContainerInfo;
  killPod: boolean;
}

function probeFailure(c: Container, st: ContainerInfo, probes?: ProbeResults): 'liveness' | 'startup' | undefined {
  return probes?.result(st.id, 'Liveness') === 'failure'
    ? 'liveness'
    : probes?.result(st.id, 'Startup') === 'failure'
      ? 'startup'
      : undefined;
}

function probeKill(c: Container, st: ContainerInfo, failed: 'liveness' | 'startup', restart: boolean): KillAction {
  const graceSec =
    (failed === 'liveness' ? c.livenessProbe : c.startupProbe)?.terminationGracePeriodSeconds ?? undefined;
  return {
    container: st,
    reason: 'Killing',
    message: `Container ${c.name} failed ${failed} probe${restart ? ', will be restarted' : ''}`,
    ...(graceSec !== undefined ? { graceSec } : {}),
  };
}

/**
 * Init containers in order, within one sandbox (a new sandbox runs them all again): a regular one must exit 0
 * before the next starts; a sidecar must be running, and past its startup probe, before the next starts, and is
 * restarted whenever it is not running, also once the regular containers run.
 */
export function initContainerActions(
  pod: Pod,
  state: PodRuntimeState,
  sandboxId: string,
  probes?: ProbeResults,
): InitActions {
  const out: InitActions = { done: false, start: [], kill: [], killPod: false };
  const inSandbox = (name: string): ContainerInfo | undefined =>
    state.containers.find((c) => c.name === name && c.sandboxId === sandboxId);
  // Once a regular container exists in this sandbox the pod is initialized: only the sidecars are looked after.
  const initialized = (pod.spec?.containers ?? []).some((c) => inSandbox(c.name));
  for (const c of pod.spec?.initContainers ?? []) {
    const st = inSandbox(c.name);
    if (isSidecar(c)) {
      if (!st || st.state === 'exited' || st.state === 'unknown') {
        out.start.push(c);
        if (!initialized) return out;
        continue;
      }
      if (st.state === 'created') {
        if (!initialized) return out;
        continue;
      }
      const failed = probeFailure(c, st, probes);
      if (failed) {
        out.kill.push(probeKill(c, st, failed, true));
        if (!initialized) return out;
        continue;
      }
      if (!initialized && c.startupProbe && probes?.result(st.id, 'Startup') !== 'success') return out;
      continue;
    }
    if (initialized) continue;
    if (!st) {
      out.start.push(c);
      return out;
    }
    if (st.state === 'running' || st.state === 'created') return out;
    if (st.state === 'exited' && st.exitCode === 0) continue;
    out.failed = st;
    if (containerShouldRestart(c, pod.spec, st.exitCode)) out.start.push(c);
    else out.killPod = true;
    return out;
  }
  out.done = true;
  return out;
}

/**
 * Whether the runtime shows the pod finished for good: under Never every container has exited, under OnFailure every
 * one exited 0 (Always never finishes). Once seen, the pod stays finished (upstream's pod worker keeps a terminal pod
 * terminal), even if the runtime loses the containers before the apiserver's copy of the pod says so.
 */
export function podFinished(pod: Pod, runtime: PodRuntimeState): boolean {
  const cs = pod.spec?.containers ?? [];
  if (!cs.length) return false;
  const { state } = currentRun(pod, runtime);
  return cs.every((c) => {
    const st = latestContainer(state, c.name);
    return st?.state === 'exited' && !containerShouldRestart(c, pod.spec, st.exitCode);
  });
}

export function computePodActions(pod: Pod, runtime: PodRuntimeState, probes?: ProbeResults): PodActions {
  let state = runtime;
  // A pod the apiserver already records as finished never runs again (upstream: terminal pods are only cleaned up).
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') {
    const live =
      state.sandboxes.some((s) => s.ready) ||
      state.containers.some((c) => c.state === 'running' || c.state === 'created');
    return {
      killPod: live,
      createSandbox: false,
      sandboxId: '',
      attempt: 0,
      initToStart: [],
      ephemeralToStart: [],
      containersToStart: [],
      containersToKill: [],
      containersToResize: [],
    };
  }
  const sb = sandboxChanged(pod, state);
  const a: PodActions = {
    killPod: sb.create,
    createSandbox: sb.create,
    sandboxId: sb.id,
    attempt: sb.attempt,
    initToStart: [],
    ephemeralToStart: [],
    containersToStart: [],
    containersToKill: [],
    containersToResize: [],
  };
  const containers = pod.spec?.containers ?? [];

  if (sb.create) {
    // A Never pod that already ran is not brought back with a new sandbox.
    if (!shouldRestartOnFailure(pod) && sb.attempt !== 0 && state.containers.length !== 0) {
      a.createSandbox = false;
      return a;
    }
    const toStart = containers.filter(
      (c) => !(pod.spec?.restartPolicy === 'OnFailure' && succeeded(latestContainer(state, c.name))),
    );
    if (toStart.length === 0 && initContainerActions(pod, state, sb.id).done) {
      a.createSandbox = false;
      return a;
    }
    if ((pod.spec?.initContainers ?? []).length > 0) {
      a.initToStart = [pod.spec!.initContainers![0]!];
      return a;
    }
    a.containersToStart = toStart;
    return a;
  }

  // RestartAllContainers: the old run's containers are stopped first; then the pod starts over from its first init
  // container, as if the old run's instances were gone.
  const run = currentRun(pod, state);
  const reset = containersToReset(pod, state, run.trigger);
  if (reset.length) {
    a.containersToKill = reset.map((c) => ({
      container: c,
      reason: 'Killing',
      message: `Container ${c.name} is restarted with all of the pod's containers`,
      graceSec: 0,
    }));
    return a;
  }
  state = run.state;

  // Upstream starts ephemeral containers before the init containers, so a pod stuck in init can be debugged.
  a.ephemeralToStart = ((pod.spec?.ephemeralContainers ?? []) as Container[]).filter(
    (c) => !state.containers.some((x) => x.name === c.name && x.sandboxId === sb.id),
  );
  const init = initContainerActions(pod, state, sb.id, probes);
  a.initToStart = init.start;
  a.containersToKill.push(...init.kill);
  if (init.killPod) a.killPod = true;
  if (!init.done) {
    // Running init containers (and sidecars) may be resized while the pod initializes.
    if (!a.killPod) resizeActions(pod, state, sb.id, a);
    return a;
  }

  let keep = 0;
  for (const c of containers) {
    const st = latestContainer(state, c.name);
    if (!st || st.state !== 'running') {
      if (shouldContainerBeRestarted(pod, c, st)) a.containersToStart.push(c);
      continue;
    }
    if (containerChanged(c, st)) {
      a.containersToStart.push(c);
      a.containersToKill.push({
        container: st,
        reason: 'Killing',
        message: `Container ${c.name} definition changed, will be restarted`,
      });
      continue;
    }
    const failed = probeFailure(c, st, probes);
    if (failed) {
      // Killed now, started by a later sync once it shows as exited: that start goes through the crash-loop
      // backoff like any other restart (so a container its liveness probe keeps killing backs off 10 s, 20 s, ...).
      const restart = shouldRestartOnFailure(pod);
      if (restart) keep++;
      a.containersToKill.push(probeKill(c, st, failed, restart));
      continue;
    }
    keep++;
  }
  // Sidecars do not keep a pod alive: once its regular containers are done, they are stopped with it.
  if (keep === 0 && a.containersToStart.length === 0) a.killPod = true;
  if (!a.killPod) resizeActions(pod, state, sb.id, a);
  return a;
}

/** Upstream computePodResizeAction: running containers whose cgroups differ from their resources are updated, or restarted when their resize policy says so. */
function resizeActions(pod: Pod, state: PodRuntimeState, sandboxId: string, a: PodActions): void {
  const killed = new Set(a.containersToKill.map((k) => k.container.id));
  const decreases: PodActions['containersToResize'] = [];
  const increases: PodActions['containersToResize'] = [];
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    const st = state.containers.find((x) => x.name === c.name && x.sandboxId === sandboxId);
    if (!st || st.state !== 'running' || killed.has(st.id)) continue;
    const changed = resizeChanges(c, st.resources, podResourcesOf(pod));
    if (!changed.length) continue;
    // A running non-sidecar init container is resized in place: restarting it would run it again.
    if (resizeNeedsRestart(c, changed) && (isSidecar(c) || !(pod.spec?.initContainers ?? []).includes(c))) {
      a.containersToKill.push({
        container: st,
        reason: 'Killing',
        message: `Container ${c.name} resize requires restart`,
      });
      a.resizeRestart = true;
      (isSidecar(c) ? a.initToStart : a.containersToStart).push(c);
    } else (isDecrease(c, st.resources, podResourcesOf(pod)) ? decreases : increases).push({ container: c, id: st.id });
  }
  a.containersToResize.push(...decreases, ...increases);
}
