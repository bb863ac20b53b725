// Pod status as the kubelet computes it (upstream generateAPIPodStatus /
// getPhase): phase, conditions, container statuses, IPs and QoS class, from
// the runtime state and the workers' waiting reasons. Pure.
import type { Container, Pod, PodSpec } from 'kubernetes-types/core/v1.js';

import { podQos } from '../../kube/pod-qos.js';
import { podLevelStatusResources } from '../../kube/pod-resources.js';
import { rfc3339 } from '../../kube/time.js';
import { type PodResources, podResourcesOf } from '../pods/cri-config.js';
import { resizeChanges, type ResizePending, statusResources } from '../pods/resize.js';
import { allContainersCouldRestart, containersToReset, isBeforeReset, restartAllTrigger } from '../pods/restart-all.js';
import { containerShouldRestart } from '../pods/restart-rules.js';
import type { ContainerInfo, PodRuntimeState } from '../pods/runtime-state.js';
import { isSidecar } from '../pods/sidecars.js';
import type { Waiting } from '../pods/worker.js';

type Obj = Record<string, any>;
const iso = (ms: number): string => rfc3339(new Date(ms));

/** Upstream's waiting reason and message for containers stopped by RestartAllContainers, until they start again. */
const RESTARTING_ALL = 'RestartingAllContainers';
const RESTARTING_ALL_MESSAGE = 'The container is removed because RestartAllContainers in place';

function instances(state: PodRuntimeState, name: string): ContainerInfo[] {
  return state.containers.filter((c) => c.name === name); // newest first
}

function terminated(c: ContainerInfo): Obj {
  return {
    terminated: {
      exitCode: c.exitCode,
      reason: c.reason || (c.exitCode === 0 ? 'Completed' : 'Error'),
      ...(c.message ? { message: c.message } : {}),
      startedAt: c.startedAt ? iso(c.startedAt) : null,
      finishedAt: c.finishedAt ? iso(c.finishedAt) : null,
      containerID: `containerd://${c.id}`,
    },
  };
}

/** Readiness and startup as the prober sees them; without one, a running container is ready and started. */
export interface ProbeStatus {
  ready(name: string, containerId: string): boolean;
  started(name: string, containerId: string): boolean;
}

export function containerStatus(
  spec: Container,
  state: PodRuntimeState,
  waiting: Waiting | undefined,
  probes?: ProbeStatus,
  /** Why a container not created yet waits: PodInitializing in a pod with init containers, as upstream. */
  notCreated: 'ContainerCreating' | 'PodInitializing' = 'ContainerCreating',
  /** The newest RestartAllContainers trigger: a stopped container of the run before it waits to start over. */
  trigger?: ContainerInfo,
): Obj {
  const [cur, prev] = instances(state, spec.name);
  let st: Obj;
  let last: Obj = {};
  if (cur && cur.state === 'exited' && isBeforeReset(cur, trigger))
    return {
      name: spec.name,
      state: { waiting: { reason: RESTARTING_ALL, message: RESTARTING_ALL_MESSAGE } },
      lastState: terminated(cur),
      ready: false,
      started: false,
      restartCount: cur.restartCount + 1,
      image: spec.image,
      imageID: cur.imageRef,
      containerID: `containerd://${cur.id}`,
    };
  if (!cur)
    st = {
      waiting: {
        reason: waiting?.reason && waiting.reason !== 'ContainerCreating' ? waiting.reason : notCreated,
        ...(waiting?.message ? { message: waiting.message } : {}),
      },
    };
  else if (cur.state === 'running') st = { running: { startedAt: iso(cur.startedAt || cur.createdAt) } };
  else if (cur.state === 'exited' && waiting && waiting.reason !== 'ContainerCreating') {
    // Waiting to be restarted (CrashLoopBackOff...): the exited instance becomes lastState.
    st = { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } };
    last = terminated(cur);
  } else if (cur.state === 'exited') st = terminated(cur);
  else st = { waiting: { reason: 'ContainerCreating' } };
  if (prev && !last.terminated && prev.state === 'exited') last = terminated(prev);
  const running = cur?.state === 'running';
  return {
    name: spec.name,
    state: st,
    lastState: last,
    ready: running && (probes?.ready(spec.name, cur.id) ?? true),
    started: running && (probes?.started(spec.name, cur.id) ?? true),
    restartCount: cur?.restartCount ?? 0,
    image: spec.image,
    imageID: cur?.imageRef ?? '',
    ...(cur ? { containerID: `containerd://${cur.id}` } : {}),
  };
}

/** Upstream getPhase (with ContainerRestartRules: a container's own rules and policy say whether it restarts). */
export function podPhase(pod: Pod, init: Obj[], statuses: Obj[], terminal = false): string {
  const spec = pod.spec;
  const byName = new Map([...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => [c.name, c]));
  const restartable = (s: Obj, exitCode: number): boolean => {
    // Stopped by RestartAllContainers: it starts again with the others (upstream's RestartingAllContainers reason).
    if (s.state.waiting?.reason === RESTARTING_ALL) return true;
    const c = byName.get(s.name as string);
    return c ? containerShouldRestart(c, spec, exitCode) : (spec?.restartPolicy ?? 'Always') !== 'Never';
  };
  /** The exit code of a container that has stopped (and maybe waits to restart). */
  const exitOf = (s: Obj): number | undefined =>
    s.state.terminated?.exitCode ?? (s.state.waiting ? s.lastState?.terminated?.exitCode : undefined);
  const pendingInit = init.some((s) => !(s.state.terminated && s.state.terminated.exitCode === 0));
  if (init.length && pendingInit) {
    const failedForGood = init.some((s) => {
      const code = exitOf(s);
      return code !== undefined && code !== 0 && !restartable(s, code);
    });
    return failedForGood ? 'Failed' : 'Pending';
  }
  let waiting = 0,
    running = 0,
    stopped = 0,
    stoppedForGood = 0,
    succeeded = 0;
  for (const s of statuses) {
    if (s.state.running) running++;
    else if (s.state.terminated || (s.state.waiting && s.lastState?.terminated)) {
      stopped++;
      if (!restartable(s, exitOf(s)!)) stoppedForGood++;
      if (s.state.terminated?.exitCode === 0) succeeded++;
    } else if (s.state.waiting) waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0 && stopped === statuses.length) {
    // Some are restarting, unless the pod is done for good; otherwise every one is done.
    if (stopped !== stoppedForGood && !terminal) return 'Running';
    return stopped === succeeded ? 'Succeeded' : 'Failed';
  }
  return 'Pending';
}

function cond(type: string, ok: boolean, reason?: string, message?: string): Obj {
  return { type, status: ok ? 'True' : 'False', ...(ok || !reason ? {} : { reason, message }) };
}

export interface StatusInput {
  pod: Pod;
  state: PodRuntimeState;
  waiting: Map<string, Waiting>;
  hostIP: string;
  /** Both families' node addresses (dual stack), hostIP first; unset: [hostIP]. */
  hostIPs?: string[];
  startTime: string;
  probes?: ProbeStatus;
  /** The kubelet ended the pod itself (activeDeadlineSeconds): the phase is Failed with this reason and message. */
  evicted?: { reason: string; message: string; disruption?: boolean; at?: string };
  /** In-place resize: the pod with its allocated resources, a resize that does not fit, and a failure to apply one. */
  resize?: { allocated: Pod; pending?: ResizePending; error?: string; actuatedPodResources?: PodResources };
  /** The kubelet has stopped the pod for good (it is being deleted): stopped containers make it Succeeded or Failed. */
  terminal?: boolean;
}

/** PodResizePending and PodResizeInProgress (upstream 1.33), present only while true. */
function resizeConditions(i: StatusInput): Obj[] {
  const r = i.resize;
  if (!r) return [];
  const out: Obj[] = [];
  if (r.pending)
    out.push({ type: 'PodResizePending', status: 'True', reason: r.pending.reason, message: r.pending.message });
  const running = [...(r.allocated.spec?.initContainers ?? []), ...(r.allocated.spec?.containers ?? [])].some((c) => {
    const cur = instances(i.state, c.name)[0];
    return cur?.state === 'running' && resizeChanges(c, cur.resources, podResourcesOf(r.allocated)).length > 0;
  });
  if (r.error) out.push({ type: 'PodResizeInProgress', status: 'True', reason: 'Error', message: r.error });
  else if (running) out.push({ type: 'PodResizeInProgress', status: 'True' });
  return out;
}

/** Upstream GenerateAllContainersRestartingCondition: True while the old run's containers are being stopped. */
function allContainersRestarting(i: StatusInput, phase: string, trigger: ContainerInfo | undefined): Obj {
  const type = 'AllContainersRestarting';
  if (phase === 'Succeeded') return { type, status: 'False', reason: 'PodCompleted' };
  if (phase === 'Failed') return { type, status: 'False', reason: 'PodFailed' };
  if (!containersToReset(i.pod, i.state, trigger).length) return { type, status: 'False' };
  return {
    type,
    status: 'True',
    reason: 'RestartAllContainersStarted',
    message: 'container exited with restart policy rule',
  };
}

/** The condition types the kubelet removes when they no longer hold. */
export const TRANSIENT_CONDITIONS = ['PodResizePending', 'PodResizeInProgress'];

/**
 * Upstream's Ready condition: the containers (sidecars included) must be ready, then every readiness gate's
 * condition, which something else writes into the pod's status, must be True.
 */
function readyCondition(pod: Pod, notReady: string[], list: (names: string[]) => string): Obj {
  if (notReady.length)
    return cond('Ready', false, 'ContainersNotReady', `containers with unready status: ${list(notReady)}`);
  const unready: string[] = [];
  for (const g of pod.spec?.readinessGates ?? []) {
    const c = pod.status?.conditions?.find((x) => x.type === g.conditionType);
    if (!c) unready.push(`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`);
    else if (c.status !== 'True')
      unready.push(`the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`);
  }
  return unready.length ? cond('Ready', false, 'ReadinessGatesNotReady', unready.join(', ')) : cond('Ready', true);
}

/** The status without transition times; the status manager adds and keeps those. */
export function computePodStatus(i: StatusInput): Obj {
  const spec = i.pod.spec!;
  const initSpecs = spec.initContainers ?? [];
  const notCreated = initSpecs.length ? 'PodInitializing' : 'ContainerCreating';
  const trigger = restartAllTrigger(i.pod, i.state);
  // Sidecars report as running containers do (probes, ready, started); regular init containers are ready once they exit 0.
  const init = initSpecs.map((c) =>
    isSidecar(c)
      ? containerStatus(c, i.state, i.waiting.get(c.name), i.probes, notCreated, trigger)
      : containerStatus(c, i.state, i.waiting.get(c.name), undefined, notCreated, trigger),
  );
  init.forEach((s, k) => {
    if (!isSidecar(initSpecs[k]!)) s.ready = !!(s.state.terminated && s.state.terminated.exitCode === 0);
  });
  const main = spec.containers.map((c) =>
    containerStatus(c, i.state, i.waiting.get(c.name), i.probes, notCreated, trigger),
  );
  // Ephemeral containers are never ready and not part of the pod's phase or conditions.
  const ephemeral = (spec.ephemeralContainers ?? []).map((c) => ({
    ...containerStatus(c as Container, i.state, i.waiting.get(c.name)),
    ready: false,
  }));
  const regularInit = init.filter((_, k) => !isSidecar(initSpecs[k]!));
  const sidecars = init.filter((_, k) => isSidecar(initSpecs[k]!));
  // Initialized once a regular container has run (a sidecar restarting later does not undo it), or when every regular
  // init container succeeded and every sidecar started.
  // A RestartAllContainers reset does not undo it (upstream keeps an Initialized pod Initialized).
  const appRan = main.some((s) => !s.state.waiting || s.lastState?.terminated);
  const phase = i.evicted
    ? 'Failed'
    : podPhase(
        i.pod,
        appRan
          ? []
          : [...regularInit, ...sidecars.filter((s) => !s.started).map((s) => ({ ...s, state: { waiting: {} } }))],
        main,
        i.terminal,
      );
  const sandbox = i.state.sandboxes[0];
  const sandboxUp = !!sandbox?.ready && (spec.hostNetwork === true || !!sandbox.ip);
  const podIP = spec.hostNetwork ? i.hostIP : sandbox?.ready ? sandbox.ip : '';
  const hostIPs = i.hostIP ? (i.hostIPs ?? [i.hostIP]) : [];
  const notInit = appRan
    ? []
    : init.filter((s, k) => (isSidecar(initSpecs[k]!) ? !s.started : !s.ready)).map((s) => s.name);
  const notReady = [...sidecars, ...main].filter((s) => !s.ready).map((s) => s.name);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const list = (names: string[]) => `[${names.join(' ')}]`;
  const conditions = [
    cond('PodReadyToStartContainers', sandboxUp),
    phase === 'Succeeded'
      ? { ...cond('Initialized', true), reason: 'PodCompleted' }
      : cond(
          'Initialized',
          notInit.length === 0,
          'ContainersNotInitialized',
          `containers with incomplete status: ${list(notInit)}`,
        ),
    done ? { ...cond('Ready', false), reason: 'PodCompleted' } : readyCondition(i.pod, notReady, list),
    done
      ? { ...cond('ContainersReady', false), reason: 'PodCompleted' }
      : cond(
          'ContainersReady',
          notReady.length === 0,
          'ContainersNotReady',
          `containers with unready status: ${list(notReady)}`,
        ),
    cond('PodScheduled', true),
    ...(allContainersCouldRestart(i.pod) ? [allContainersRestarting(i, phase, trigger)] : []),
    ...(done ? [] : resizeConditions(i)),
    // Node-pressure eviction (upstream 1.31+): the DisruptionTarget condition says the kubelet ended the pod.
    ...(i.evicted?.disruption
      ? [
          {
            type: 'DisruptionTarget',
            status: 'True',
            lastProbeTime: null,
            lastTransitionTime: i.evicted.at ?? i.startTime,
            reason: 'TerminationByKubelet',
            message: i.evicted.message,
          },
        ]
      : []),
  ];
  // containerStatuses[].resources and allocatedResources, as upstream's kubelet (v1.33+) reports them for every
  // container the runtime has: what it holds (the runtime's values when running), and its allocated requests.
  const alloc = i.resize?.allocated.spec ?? spec;
  const withResources = (s: Obj, allocated: Container, name: string): void => {
    const cur = instances(i.state, name)[0];
    if (!cur) return;
    s.resources = statusResources(allocated, cur);
    const requests = allocated.resources?.requests;
    if (requests && Object.keys(requests).length) s.allocatedResources = { ...requests };
  };
  main.forEach((s, k) => withResources(s, alloc.containers[k] ?? spec.containers[k]!, spec.containers[k]!.name));
  init.forEach((s, k) => withResources(s, alloc.initContainers?.[k] ?? initSpecs[k]!, initSpecs[k]!.name));
  // status.resources: what the pod cgroup was last given (a resize the kubelet refused or has not applied yet is not
  // there); allocatedResources: the allocated requests.
  const actuated = i.resize && 'actuatedPodResources' in i.resize;
  const podResources = {
    ...podLevelStatusResources(alloc),
    ...(actuated
      ? {
          resources: podLevelStatusResources({ ...alloc, resources: i.resize!.actuatedPodResources } as PodSpec)
            .resources,
        }
      : {}),
  };
  // The generation this status reflects, on the status and each condition the kubelet owns (GA in v1.35).
  const generation = i.pod.metadata?.generation;
  if (generation) for (const c of conditions) c.observedGeneration = generation;
  return {
    ...(generation ? { observedGeneration: generation } : {}),
    phase,
    ...(i.evicted ? { reason: i.evicted.reason, message: i.evicted.message } : {}),
    conditions,
    ...podResources,
    hostIP: i.hostIP,
    hostIPs: hostIPs.map((ip) => ({ ip })),
    // Dual-stack: the runtime's first IP, then its additional ones (upstream keeps one per family, the first first);
    // a host-network pod has the node's.
    ...(podIP
      ? {
          podIP,
          podIPs: (spec.hostNetwork ? hostIPs : [podIP, ...(sandbox?.additionalIps ?? [])]).map((ip) => ({ ip })),
        }
      : {}),
    startTime: i.startTime,
    ...(init.length ? { initContainerStatuses: init } : {}),
    containerStatuses: main,
    ...(ephemeral.length ? { ephemeralContainerStatuses: ephemeral } : {}),
    qosClass: podQos(i.pod),
  };
}
