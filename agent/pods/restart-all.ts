// The RestartAllContainers restart-rule action (upstream RestartAllContainersOnContainerExits, beta in v1.36): a
// container exiting with a matching code restarts every container of the pod in place, from the first init
// container, in the same sandbox. Upstream removes the old containers; here they stay in the runtime (their exit codes
// are the next instances' lastState) and each container started for the new run carries the trigger's container ID
// (A_RESTART_ALL_AFTER): an instance without the newest trigger's ID belongs to the old run. The division survives a
// kubelet restart and holds for containers started after the trigger exited but before the kubelet saw it.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { matchingRestartRule } from './restart-rules.js';
import type { ContainerInfo, PodRuntimeState } from './runtime-state.js';

export const RESTART_ALL = 'RestartAllContainers';

const specsOf = (pod: Pod): Container[] => [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];

/** Upstream AllContainersCouldRestart: some init or regular container has a RestartAllContainers rule. */
export function allContainersCouldRestart(pod: Pod): boolean {
  return specsOf(pod).some((c) =>
    ((c as Container & { restartPolicyRules?: { action?: string }[] }).restartPolicyRules ?? []).some(
      (r) => r.action === RESTART_ALL,
    ),
  );
}

/** The newest exit in the pod's current sandbox that asked for RestartAllContainers; undefined if none. */
export function restartAllTrigger(pod: Pod, state: PodRuntimeState): ContainerInfo | undefined {
  const sandboxId = state.sandboxes[0]?.id;
  if (!sandboxId || !allContainersCouldRestart(pod)) return undefined;
  const specs = new Map(specsOf(pod).map((c) => [c.name, c] as const));
  let trigger: ContainerInfo | undefined;
  for (const c of state.containers) {
    const spec = specs.get(c.name);
    if (!spec || c.sandboxId !== sandboxId || c.state !== 'exited') continue;
    if (matchingRestartRule(spec, c.exitCode)?.action !== RESTART_ALL) continue;
    if (!trigger || c.finishedAt > trigger.finishedAt) trigger = c;
  }
  return trigger;
}

/** An instance of the run before the newest RestartAllContainers trigger. */
export const isBeforeReset = (c: ContainerInfo, trigger: ContainerInfo | undefined): boolean =>
  trigger !== undefined && c.restartAllAfter !== trigger.id;

/** The runtime state as the current run sees it: instances of the old run are not part of it. */
export function currentRun(pod: Pod, state: PodRuntimeState): { state: PodRuntimeState; trigger?: ContainerInfo } {
  const trigger = restartAllTrigger(pod, state);
  if (!trigger) return { state };
  return { state: { ...state, containers: state.containers.filter((c) => !isBeforeReset(c, trigger)) }, trigger };
}

/** Instances of the old run still running: they are stopped (without grace, as upstream) before anything starts. */
export function containersToReset(
  pod: Pod,
  state: PodRuntimeState,
  trigger: ContainerInfo | undefined,
): ContainerInfo[] {
  const names = new Set(specsOf(pod).map((c) => c.name));
  return state.containers.filter(
    (c) => names.has(c.name) && isBeforeReset(c, trigger) && (c.state === 'running' || c.state === 'created'),
  );
}
