// One pod worker: a serialized sync loop for one pod UID. It reads the
// runtime state, asks computePodActions what to do, and does it through CRI.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import type { KObj } from '../../kube/client.js';
import type { EventRecorder, ObjectRef } from '../../kube/events.js';
import { canonicalJson } from '../../kube/hash.js';
import type { Logger } from '../../kube/log.js';
import { clampDelay } from '../../kube/timers.js';
import type { ContainerManager } from '../cm/container-manager.js';
import type { CriClient } from '../cri/client.js';
import type { PodSandboxConfigIn } from '../cri/types.js';
import { SubPathError } from '../volumes/subpath.js';
import {
  containerMounts,
  MountError,
  podDir,
  type SetUpVolume,
  type VolumeManager,
} from '../volumes/volume-manager.js';
import { computePodActions, isIdle, type PodActions, podFinished, type ProbeResults } from './actions.js';
import { Backoff } from './backoff.js';
import { containerHash } from './container-hash.js';
import type { ContainerKind, PodResources } from './cri-config.js';
import {
  buildContainerConfig,
  buildSandboxConfig,
  linuxResources,
  memoryRequestBytes,
  type NodeContext,
  podLogDir,
  podResourcesOf,
} from './cri-config.js';
import type { DnsConfig, DnsEvent } from './dns.js';
import { type DownwardContext, DownwardError } from './downward-api.js';
import { containerEnv, EnvError } from './env.js';
import { etcHostsContent, mountsEtcHosts } from './etc-hosts.js';
import { formatPod } from './format.js';
import { runHook } from './hooks.js';
import { linkContainerLog, removeContainerLogLinks } from './log-links.js';
import { needsImageUser, NonRootError, verifyRunAsNonRoot } from './non-root.js';
import { credentialsFor } from './pull-secrets.js';
import {
  isPodMemoryDecrease,
  podMemoryDecreaseError,
  type Requirements,
  resizableResources,
  type ResizePending,
  sameResources,
  withAllocation,
} from './resize.js';
import { restartAllTrigger } from './restart-all.js';
import {
  type ContainerInfo,
  latestContainer,
  type PodRuntimeState,
  readPodState,
  type SandboxNetwork,
  sandboxNetwork,
} from './runtime-state.js';
import { containerFieldPath, sidecarsOf } from './sidecars.js';
import { terminationMessageMount } from './termination-message.js';

export const MIN_GRACE_SEC = 2;

export interface WorkerDeps {
  /** Pod admission (sysctls): a reason and message to reject the pod with, as upstream's admit handlers. */
  admit?: (pod: Pod) => { reason: string; message: string } | undefined;
  cri: CriClient;
  node: NodeContext;
  log: Logger;
  events: EventRecorder;
  crashBackoff: Backoff;
  imageBackoff: Backoff;
  /** Called after every successful sync, e.g. to report status. */
  onSynced?: (w: PodWorker) => void;
  /** After termination stopped the containers, before they are removed: their final state, to report it. */
  onStopped?: (w: PodWorker, state: PodRuntimeState) => Promise<void>;
  /** Liveness and startup results, which can make a running container due for a restart. */
  probes?: ProbeResults;
  volumes: VolumeManager;
  /** Services for the pod's environment variables (empty for a standalone kubelet). */
  services: () => KObj[];
  /** Node allocatable, the default of resourceFieldRef limits. */
  allocatable?: Record<string, string>;
  /** The cluster domain, for the FQDN line of a pod with a subdomain in its /etc/hosts. */
  clusterDomain?: string;
  /** The pod's DNS settings for its sandbox, with the events they call for (undefined: the runtime's default). */
  dns?: (pod: Pod) => { config: DnsConfig; events: DnsEvent[] } | undefined;
  /** In-place resize admission: why the pod's new resources cannot be allocated now (undefined: they fit). */
  resizeFit?: (pod: Pod) => ResizePending | undefined;
  /** The CRI runtime handler of the pod's RuntimeClass ('' for none; absent for a standalone kubelet, which ignores runtimeClassName as upstream). */
  runtimeHandler?: (pod: Pod) => Promise<string>;
  /** QoS and pod cgroups: the sandbox's cgroup_parent, pod limits, containers' oom_score_adj (absent: the runtime's defaults). */
  cgroups?: ContainerManager;
}

export interface Waiting {
  reason: string;
  message: string;
}

export type WorkerPhase = 'syncing' | 'terminating' | 'terminated';

export class PodWorker {
  phase: WorkerPhase = 'syncing';
  /** Waiting reasons per container (ErrImagePull, CrashLoopBackOff...), for status. */
  readonly waiting = new Map<string, Waiting>();
  lastState: PodRuntimeState | undefined;
  /** The sandbox's IPs after its first (dual stack: the other family's), for /etc/hosts and the downward API. */
  private extraPodIPs: string[] = [];
  syncCount = 0;
  /** Set when the kubelet ended the pod itself (activeDeadlineSeconds): it is killed and never started again. */
  evicted: { reason: string; message: string; disruption?: boolean; graceSec?: number; at?: string } | undefined;
  private admitted = false;

  /** Admitted (and so holding what admission gave it, such as host ports). */
  get isAdmitted(): boolean {
    return this.admitted;
  }
  /** When the pod became active on this node (status.startTime, else when this worker began). */
  private readonly activeSince: number;
  private dirty = false;
  /** Set by halt(): timers, relists and requests no longer start syncs. */
  private halted = false;
  private running: Promise<void> | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private terminateGraceSec = 30;
  private terminateStarted = 0;
  private readonly terminatedWaiters: (() => void)[] = [];
  /** Retries of a failed volume set-up: 0.5 s doubling to 2 min, as upstream's mount backoff. */
  private readonly mountRetry = new RetryDelay(500, 120_000);
  /** The resources admitted for the pod's containers (upstream's allocated resources): a resize lands here once it fits. */
  private allocation: Map<string, Requirements> | undefined;
  /** A resize that does not fit (PodResizePending), and the last failure to actuate one (PodResizeInProgress, Error). */
  resizePending: ResizePending | undefined;
  resizeError: string | undefined;

  constructor(
    readonly uid: string,
    /** Desired spec; for an orphan found only in the runtime this is a stand-in built from labels. */
    public pod: Pod,
    private readonly d: WorkerDeps,
    private readonly onTerminated: (w: PodWorker) => void = () => {},
  ) {
    const st = Date.parse(String(pod.status?.startTime ?? ''));
    this.activeSince = Number.isFinite(st) ? st : Date.now();
  }

  get fullName(): string {
    return `${this.pod.metadata!.namespace!}/${this.pod.metadata!.name!}`;
  }

  private get ref(): ObjectRef {
    const md = this.pod.metadata!;
    return { kind: 'Pod', namespace: md.namespace!, name: md.name!, uid: md.uid! };
  }

  /**
   * The kubelet's /etc/hosts for this container (upstream's k8s-managed-etc-hosts), rewritten at each container
   * start: the managed file, or the node's own for host-network pods; none if the container mounts its own.
   */
  private async etcHostsMount(
    dir: string,
    c: Container,
    podIP: string,
  ): Promise<{ container_path: string; host_path: string; readonly: boolean } | undefined> {
    const hostNetwork = this.pod.spec?.hostNetwork === true;
    const podIPs = hostNetwork ? (this.d.node.hostIPs ?? [this.d.node.hostIP]).filter(Boolean) : this.podIPs(podIP);
    if (!mountsEtcHosts(c, podIPs)) return undefined;
    let nodeHosts: string | undefined;
    if (hostNetwork) {
      try {
        nodeHosts = fs.readFileSync('/etc/hosts', 'utf8');
      } catch {
        nodeHosts = '';
      }
    }
    const file = path.join(dir, 'etc-hosts');
    // Synchronous, as the pod's other small local files: fs/promises costs several times the CPU of the system call.
    fs.writeFileSync(
      file,
      etcHostsContent(this.pod, { podIPs, clusterDomain: this.d.clusterDomain ?? '', nodeHosts }),
      { mode: 0o644 },
    );
    return { container_path: '/etc/hosts', host_path: file, readonly: false };
  }

  /** A new copy of the pod from its source; only a change other than status (or resourceVersion) needs a sync, as upstream's config mux. */
  update(pod: Pod): void {
    if (this.phase !== 'syncing' || pod === this.pod) return;
    const changed = desiredKey(this.pod) !== desiredKey(pod);
    this.pod = pod;
    if (changed) this.requestSync();
  }

  /** Begin graceful termination; later calls may only shorten the grace period. */
  terminate(graceSec?: number): void {
    const g = graceSec ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
    if (this.phase === 'syncing') {
      this.phase = 'terminating';
      this.terminateStarted = Date.now();
      this.terminateGraceSec = g;
    } else if (this.phase === 'terminating') {
      this.terminateGraceSec = Math.min(this.terminateGraceSec, g);
    }
    this.requestSync();
  }

  whenTerminated(): Promise<void> {
    if (this.phase === 'terminated') return Promise.resolve();
    return new Promise((r) => this.terminatedWaiters.push(r));
  }

  /**
   * The runtime state a sync acted on, or read right after its starts and found nothing left to do with: its PLEG
   * fingerprint and when its read began. A relist showing the same, or answered before that read, is no news: as
   * upstream's pod workers sync from the PLEG's cache instead of reading again.
   */
  private handled: { fingerprint: string; at: number } | undefined;
  /** This pod's ready sandboxes' networks, by sandbox ID: asked of the runtime once per sandbox, not at every read. */
  private readonly networks = new Map<string, SandboxNetwork>();
  /** The newest relist that reported this pod since its last sync. */
  private pendingRelist: { fingerprint: string; at: number } | undefined;
  /** A sync was asked for something other than a relist (the pod, a timer, the kubelet). */
  private wanted = false;

  /** The PLEG saw this pod change: its fingerprint then, and when the relist's lists were answered (monotonic ms). */
  relisted(fingerprint: string, at: number): void {
    if (!this.pendingRelist || at >= this.pendingRelist.at) this.pendingRelist = { fingerprint, at };
    this.wake();
  }

  /** Whether a relist may show what no sync has seen (a relist at the same millisecond as the read counts as news). */
  private isNews(r: { fingerprint: string; at: number }): boolean {
    const h = this.handled;
    return this.phase !== 'syncing' || !h || (r.fingerprint !== h.fingerprint && r.at >= h.at);
  }

  requestSync(): void {
    this.wanted = true;
    this.wake();
  }

  private wake(): void {
    if (this.phase === 'terminated' || this.halted) return;
    this.dirty = true;
    if (!this.running) this.running = this.loop().finally(() => (this.running = undefined));
  }

  /** Resolves when the current sync (if any) is done. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** The kubelet is stopping: no sync starts after the current one, which the returned promise waits for. */
  async halt(): Promise<void> {
    this.halted = true;
    this.dirty = false;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    await this.idle();
  }

  private wakeIn(ms: number): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => this.requestSync(), clampDelay(Math.max(ms, 50)));
    this.wakeTimer.unref();
  }

  private async loop(): Promise<void> {
    while (this.dirty && this.phase !== 'terminated' && !this.halted) {
      this.dirty = false;
      const relist = this.pendingRelist;
      this.pendingRelist = undefined;
      if (!this.wanted && relist && !this.isNews(relist)) continue;
      this.wanted = false;
      try {
        if (this.phase === 'terminating') {
          await this.killAndRemove();
          this.finish();
          return;
        }
        await this.sync();
        this.syncCount++;
        this.d.onSynced?.(this);
      } catch (e) {
        // Not acted on: the next relist syncs it again, whatever it shows.
        this.handled = undefined;
        this.d.log.error(`sync of pod ${this.fullName} failed, will retry: ${(e as Error).message}`, {
          podUID: this.uid,
        });
        this.wakeIn(this.phase === 'terminating' ? 1000 : 5000);
      }
    }
  }

  private finish(): void {
    this.phase = 'terminated';
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.d.crashBackoff.forgetPrefix(`${this.uid}/`);
    this.d.imageBackoff.forgetPrefix(`${this.uid}_`);
    for (const w of this.terminatedWaiters.splice(0)) w();
    this.onTerminated(this);
  }

  private async sync(): Promise<void> {
    const label = this.fullName;
    const readAt = performance.now();
    const state = await this.readState(label);
    this.observe(state);
    this.handled = state.fingerprint === undefined ? undefined : { fingerprint: state.fingerprint, at: readAt };
    if (!this.evicted && !this.admitted) {
      const rejected = this.d.admit?.(this.pod);
      if (rejected) {
        // Upstream rejectPod: the pod fails for good, nothing of it runs.
        this.evicted = { reason: rejected.reason, message: `Pod was rejected: ${rejected.message}` };
        this.d.events.event(this.ref, 'Warning', rejected.reason, rejected.message);
      } else this.admitted = true;
    }
    if (await this.enforceActiveDeadline(state)) return;
    this.admitResize();
    const actions = this.actionsFor(state);
    const grace = this.pod.spec?.terminationGracePeriodSeconds ?? 30;

    if (actions.killPod) {
      if (actions.createSandbox && state.sandboxes.length > 0) {
        this.d.events.event(
          this.ref,
          'Normal',
          'SandboxChanged',
          'Pod sandbox changed, it will be killed and re-created.',
        );
      }
      await this.stopAll(state, grace, true);
      if (!actions.createSandbox) return;
    }
    for (const k of actions.containersToKill) {
      this.d.events.event(
        { ...this.ref, fieldPath: containerFieldPath(this.pod, k.container.name) },
        'Normal',
        k.reason,
        k.message,
      );
      await this.stopContainer(k.container, k.graceSec ?? grace);
    }

    const sandboxConfig = buildSandboxConfig(this.pod, actions.attempt, this.d.node);
    if (this.d.cgroups) sandboxConfig.linux!.cgroup_parent = this.d.cgroups.parentName(this.pod);
    let sandboxId = actions.sandboxId;
    let podIP = state.sandboxes[0]?.ip ?? '';
    this.extraPodIPs = state.sandboxes[0]?.additionalIps ?? [];
    // Volumes come first, as upstream's WaitForAttachAndMount: a missing ConfigMap keeps the pod in ContainerCreating.
    let volumes: Map<string, SetUpVolume>;
    try {
      volumes = await this.d.volumes.setUp(this.pod, this.downwardContext(podIP));
    } catch (e) {
      if (!(e instanceof MountError)) throw e;
      this.d.events.event(this.ref, 'Warning', 'FailedMount', e.message);
      for (const c of [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])])
        if (!latestContainer(state, c.name)) this.waiting.set(c.name, { reason: 'ContainerCreating', message: '' });
      this.wakeIn(this.mountRetry.next());
      return;
    }
    this.mountRetry.reset();
    if (actions.createSandbox) {
      const dns = this.d.dns?.(this.pod);
      if (dns) {
        sandboxConfig.dns_config = dns.config;
        for (const e of dns.events)
          this.d.events.event(
            e.on === 'pod' ? this.ref : { kind: 'Node', name: this.d.node.nodeName, uid: this.d.node.nodeName },
            'Warning',
            e.reason,
            e.message,
          );
      }
      fs.mkdirSync(sandboxConfig.log_directory!, { recursive: true, mode: 0o755 });
      try {
        if (this.d.cgroups) sandboxConfig.linux!.cgroup_parent = await this.d.cgroups.podParent(this.pod);
        const handler = this.d.runtimeHandler ? await this.d.runtimeHandler(this.pod) : '';
        sandboxId = await this.d.cri.runPodSandbox(sandboxConfig, label, handler);
        await this.d.cgroups?.afterSandbox(this.pod);
      } catch (e) {
        this.d.events.event(
          this.ref,
          'Warning',
          'FailedCreatePodSandBox',
          `Failed to create pod sandbox: ${(e as Error).message}`,
        );
        throw e;
      }
      const net = sandboxNetwork(await this.d.cri.podSandboxStatus(sandboxId, label));
      this.networks.set(sandboxId, net);
      podIP = net.ip;
      this.extraPodIPs = net.additionalIps;
      this.d.volumes.update(this.pod, this.downwardContext(podIP));
    }
    const start = async (c: Container, kind: ContainerKind): Promise<void> => {
      await this.startContainer(c, kind, state, sandboxId, sandboxConfig, podIP, volumes);
    };
    // Resizes first: a container (or sidecar) restarted for one starts in a pod cgroup that already holds it.
    await this.resize(actions.containersToResize, label, actions.resizeRestart ?? false);
    for (const c of actions.ephemeralToStart) await start(c, 'ephemeral');
    for (const c of actions.initToStart) await start(c, 'init');
    for (const c of actions.containersToStart) await start(c, 'container');
    // Report what was just started or resized now rather than after the next relist (up to a period later).
    if (
      actions.createSandbox ||
      actions.ephemeralToStart.length > 0 ||
      actions.initToStart.length > 0 ||
      actions.containersToStart.length > 0 ||
      actions.containersToResize.length > 0
    ) {
      const readAt = performance.now();
      const after = await this.readState(label);
      this.observe(after);
      // Nothing left to do with it: the relists of what this sync made are no news (no second sync to read them).
      if (after.fingerprint !== undefined && isIdle(this.actionsFor(after)))
        this.handled = { fingerprint: after.fingerprint, at: readAt };
    }
  }

  /** Memory requests resized in place, by container ID: newer than the ones the containers were created with. */
  private readonly resizedMemoryRequests = new Map<string, number>();

  /** The pod's runtime state, with the memory requests this kubelet has since resized its containers to. */
  private async readState(label: string): Promise<PodRuntimeState> {
    const state = await readPodState(this.d.cri, this.uid, label, this.networks);
    for (const c of state.containers) {
      const resized = this.resizedMemoryRequests.get(c.id);
      if (resized !== undefined && c.resources) c.resources.memoryRequest = resized;
    }
    return state;
  }

  /** What the pod needs done given a runtime state; a pod finished here is terminal even before the apiserver's copy says so. */
  private actionsFor(state: PodRuntimeState): PodActions {
    const pod =
      this.finished && !['Succeeded', 'Failed'].includes(this.runningPod.status?.phase ?? '')
        ? { ...this.runningPod, status: { ...(this.runningPod.status ?? {}), phase: 'Succeeded' } }
        : this.runningPod;
    return computePodActions(pod, state, this.d.probes);
  }

  /**
   * The runtime state status is reported from. A pod is finished as soon as any such state shows it: a container
   * may exit between its start and the read after it, and the status then says Succeeded before the next sync runs.
   */
  private observe(state: PodRuntimeState): void {
    this.lastState = state;
    if (!this.finished && podFinished(this.runningPod, state)) this.finished = true;
  }

  /** What pod status reports beside the runtime state: the kubelet's own end of the pod, and in-place resize. */
  statusExtras(): {
    evicted?: { reason: string; message: string };
    resize: { allocated: Pod; pending?: ResizePending; error?: string; actuatedPodResources?: PodResources };
  } {
    return {
      evicted: this.evicted,
      resize: {
        allocated: this.runningPod,
        pending: this.resizePending,
        error: this.resizeError,
        ...(this.actuated ? { actuatedPodResources: this.actuated.resources } : {}),
      },
    };
  }

  /** The pod as it runs: containers carry their allocated resources. */
  get runningPod(): Pod {
    return this.allocation ? withAllocation(this.pod, this.allocation) : this.pod;
  }

  /** Admits a resize (new container resources in the spec) when it fits the node, as upstream's allocation manager; the first sync allocates what the pod asks. */
  private admitResize(): void {
    const desired = resizableResources(this.pod);
    if (!this.allocation || sameResources(desired, this.allocation)) {
      this.allocation = desired;
      this.resizePending = undefined;
      return;
    }
    const pending = this.d.resizeFit?.(this.pod);
    if (pending) {
      if (pending.message !== this.resizePending?.message)
        this.d.log.info(`pod ${this.fullName}: resize ${pending.reason}: ${pending.message}`);
      this.resizePending = pending;
      // A Deferred resize is tried again as other pods go (upstream retries pending resizes on every sync).
      if (pending.reason === 'Deferred') this.wakeIn(10_000);
      return;
    }
    this.allocation = desired;
    this.resizePending = undefined;
  }

  /** The pod-level resources the pod cgroup was last given; unset before the first sync. */
  private actuated: { resources: PodResources } | undefined;

  /** upstream's check before a pod memory limit goes down: not below the pod's current usage. */
  private async memoryDecreaseError(want: PodResources): Promise<string | undefined> {
    if (!isPodMemoryDecrease(want, this.actuated?.resources)) return undefined;
    const usage = await this.d.cgroups?.podMemoryUsage(this.runningPod).catch(() => undefined);
    return podMemoryDecreaseError(want, usage);
  }

  /** UpdateContainerResources for each container to resize; a failure is reported and retried on the next sync. */
  private async resize(
    list: { container: Container; id: string }[],
    label: string,
    restarting: boolean,
  ): Promise<void> {
    const podResources = podResourcesOf(this.runningPod);
    // Pod-level resources set the pod cgroup: a change of them alone resizes it (the first sync finds it as made).
    const podLevelChanged =
      this.actuated !== undefined &&
      canonicalJson(this.actuated.resources ?? null) !== canonicalJson(podResources ?? null);
    if (!list.length && !podLevelChanged && !restarting) {
      this.actuated ??= { resources: podResources };
      this.resizeError = undefined;
      return;
    }
    // A pod memory limit lowered below what the pod uses is refused before anything changes, as upstream.
    const usageError = await this.memoryDecreaseError(podResources);
    if (usageError) {
      this.resizeError = usageError;
      this.d.log.warn(`pod ${this.fullName}: ${usageError}`);
      this.wakeIn(5_000);
      return;
    }
    const errors: string[] = [];
    // The pod cgroup grows before its containers (a decrease it cannot take yet is retried after them).
    await this.d.cgroups?.updatePod(this.runningPod).catch(() => undefined);
    for (const r of list) {
      try {
        await this.d.cri.updateContainerResources(r.id, linuxResources(r.container, podResources), label);
        this.resizedMemoryRequests.set(r.id, memoryRequestBytes(r.container));
      } catch (e) {
        errors.push(`container ${r.container.name}: ${(e as Error).message}`);
      }
    }
    await this.d.cgroups?.updatePod(this.runningPod).catch((e: Error) => errors.push(`pod cgroup: ${e.message}`));
    if (!errors.length) this.actuated = { resources: podResources };
    this.resizeError = errors.length ? `failed to resize: ${errors.join('; ')}` : undefined;
    if (errors.length) {
      this.d.log.warn(`pod ${this.fullName}: ${this.resizeError}`);
      this.wakeIn(5_000);
    }
  }

  /** Every container of the pod has finished for good (see podFinished): nothing of it starts again. */
  private finished = false;

  /** An evicted pod's containers are stopped and its volumes gone (the eviction manager waits for it). */
  evictionDone = false;

  /** Node-pressure eviction (reason Evicted) or node shutdown (Terminated): the pod is killed within `graceSec` and ends Failed. */
  evict(message: string, graceSec: number, reason = 'Evicted'): void {
    if (this.evicted || this.phase !== 'syncing') return;
    this.evicted = {
      reason,
      message,
      disruption: true,
      graceSec,
      at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    if (reason === 'Evicted') this.d.events.event(this.ref, 'Warning', 'Evicted', message);
    this.requestSync();
  }

  /** activeDeadlineSeconds (upstream's active deadline handler): past it the pod is killed, Failed/DeadlineExceeded. */
  private async enforceActiveDeadline(state: PodRuntimeState): Promise<boolean> {
    const deadline = this.pod.spec?.activeDeadlineSeconds;
    if (!this.evicted && (deadline === undefined || deadline === null)) return false;
    if (!this.evicted) {
      const left = this.activeSince + deadline! * 1000 - Date.now();
      if (left > 0) {
        this.wakeIn(left);
        return false;
      }
      this.evicted = {
        reason: 'DeadlineExceeded',
        message: 'Pod was active on the node longer than the specified deadline',
      };
      this.d.events.event(this.ref, 'Normal', 'DeadlineExceeded', this.evicted.message);
    }
    if (
      state.containers.some((c) => c.state === 'running' || c.state === 'created') ||
      state.sandboxes.some((s) => s.ready)
    ) {
      await this.stopAll(state, this.evicted.graceSec ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30, true);
      this.lastState = await readPodState(this.d.cri, this.uid, this.fullName, this.networks);
      // An evicted pod gives back what it held: its emptyDir volumes go, as upstream tears down a terminated pod's volumes.
      if (this.evicted.disruption)
        await this.d.volumes
          .tearDown(this.uid)
          .catch((e: Error) => this.d.log.warn(`pod ${this.fullName}: tearing down volumes: ${e.message}`));
    }
    if (this.evicted.disruption) this.evictionDone = true;
    return true;
  }

  private backoffKey(c: Container): string {
    return `${this.uid}/${c.name}/${containerHash(c)}`;
  }

  /** The pod's addresses: its primary IP first, then the sandbox's additional ones (dual stack); none before it has one. */
  private podIPs(podIP: string): string[] {
    return podIP ? [podIP, ...this.extraPodIPs] : [];
  }

  private downwardContext(sandboxIP: string): DownwardContext {
    // A host-network pod's IPs are the node's (status.podIP says so too), for status.podIP(s) in env and volumes.
    const hostNetwork = !!this.pod.spec?.hostNetwork && !!this.d.node.hostIP;
    const podIP = hostNetwork ? this.d.node.hostIP : sandboxIP;
    return {
      podIP,
      podIPs: hostNetwork ? (this.d.node.hostIPs ?? [podIP]) : podIP ? this.podIPs(podIP) : undefined,
      hostIP: this.d.node.hostIP,
      hostIPs: this.d.node.hostIPs,
      allocatable: this.d.allocatable,
    };
  }

  private async startContainer(
    c: Container,
    kind: ContainerKind,
    state: PodRuntimeState,
    sandboxId: string,
    sandboxConfig: PodSandboxConfigIn,
    podIP: string,
    volumes: Map<string, SetUpVolume>,
  ): Promise<void> {
    const label = this.fullName;
    const ref = { ...this.ref, fieldPath: containerFieldPath(this.pod, c.name) };
    const prev = latestContainer(state, c.name);
    if (prev && prev.state === 'exited') {
      const key = this.backoffKey(c);
      if (this.d.crashBackoff.inBackoffSince(key, prev.finishedAt)) {
        const delay = this.d.crashBackoff.get(key);
        const message = `back-off ${formatDuration(delay)} restarting failed container=${c.name} pod=${formatPod(this.pod)}`;
        if (this.waiting.get(c.name)?.reason !== 'CrashLoopBackOff') {
          this.d.events.event(
            ref,
            'Warning',
            'BackOff',
            `Back-off restarting failed container ${c.name} in pod ${formatPod(this.pod)}`,
          );
        }
        this.waiting.set(c.name, { reason: 'CrashLoopBackOff', message });
        this.wakeIn(this.d.crashBackoff.remaining(key, prev.finishedAt));
        return;
      }
      this.d.crashBackoff.next(key);
    }
    const imageRef = await this.ensureImage(c, ref, sandboxConfig);
    if (!imageRef) return;
    const restartCount = prev ? prev.restartCount + 1 : 0;
    let env: Map<string, string>;
    let mounts: Awaited<ReturnType<typeof containerMounts>>;
    try {
      // The image's user is only looked up when runAsNonRoot needs it.
      const img = needsImageUser(this.pod, c) ? await this.d.cri.imageStatus(imageRef, label) : null;
      const why = verifyRunAsNonRoot(this.pod, c, { uid: img?.uid?.value, username: img?.username });
      if (why) throw new NonRootError(why);
      env = await containerEnv(this.pod, c, this.d.volumes.objects, this.downwardContext(podIP), this.d.services());
      const dir = podDir(this.d.volumes.rootDir, this.uid);
      mounts = await containerMounts(dir, c, volumes, env);
      const term = await terminationMessageMount(dir, c.name, c.terminationMessagePath);
      if (term) mounts.push(term);
      const hosts = await this.etcHostsMount(dir, c, podIP);
      if (hosts) mounts.push(hosts);
    } catch (e) {
      if (!(
        e instanceof EnvError ||
        e instanceof DownwardError ||
        e instanceof SubPathError ||
        e instanceof NonRootError
      ))
        throw e;
      // upstream: CreateContainerConfigError, retried on the next sync.
      this.waiting.set(c.name, { reason: 'CreateContainerConfigError', message: e.message });
      this.d.events.event(ref, 'Warning', 'Failed', `Error: ${e.message}`);
      this.wakeIn(10_000);
      return;
    }
    // kubectl debug --target: the debug container joins that container's PID namespace.
    const targetName = kind === 'ephemeral' ? (c as { targetContainerName?: string }).targetContainerName : undefined;
    const targetId = targetName
      ? state.containers.find((x) => x.name === targetName && x.state === 'running')?.id
      : undefined;
    const config = buildContainerConfig(
      this.pod,
      c,
      kind,
      restartCount,
      imageRef,
      env,
      mounts,
      this.d.node.rootDir,
      targetId,
      restartAllTrigger(this.pod, state)?.id,
    );
    if (this.d.cgroups && config.linux?.resources)
      config.linux.resources.oom_score_adj = String(this.d.cgroups.oomScoreAdj(this.pod, c));
    fs.mkdirSync(path.join(sandboxConfig.log_directory!, c.name), { recursive: true, mode: 0o755 });
    let id: string;
    try {
      id = await this.d.cri.createContainer(sandboxId, config, sandboxConfig, label);
    } catch (e) {
      this.waiting.set(c.name, { reason: 'CreateContainerError', message: (e as Error).message });
      this.d.events.event(ref, 'Warning', 'Failed', `Error: ${(e as Error).message}`);
      this.wakeIn(10_000);
      return;
    }
    this.d.events.event(ref, 'Normal', 'Created', `Created container: ${c.name}`);
    try {
      await this.d.cri.startContainer(id, label);
    } catch (e) {
      this.waiting.set(c.name, { reason: 'RunContainerError', message: (e as Error).message });
      this.d.events.event(ref, 'Warning', 'Failed', `Error: ${(e as Error).message}`);
      return;
    }
    this.waiting.delete(c.name);
    this.d.events.event(ref, 'Normal', 'Started', `Started container ${c.name}`);
    if (this.d.node.containerLogsDir) {
      const md = this.pod.metadata!;
      await linkContainerLog(
        this.d.node.containerLogsDir,
        md.name!,
        md.namespace!,
        c.name,
        id,
        path.join(sandboxConfig.log_directory!, config.log_path!),
      ).catch((e: Error) => this.d.log.warn(`pod ${label}: log link for ${c.name}: ${e.message}`));
    }
    const postStart = c.lifecycle?.postStart;
    if (postStart) {
      // As upstream: the hook runs before the sync goes on; if it fails the container is killed and restarts per policy.
      const grace = this.pod.spec?.terminationGracePeriodSeconds ?? 30;
      const err = await runHook(postStart, { pod: this.pod, container: c, containerId: id, podIP }, this.d.cri, grace);
      if (err) {
        this.d.events.event(ref, 'Warning', 'FailedPostStartHook', err);
        this.d.events.event(ref, 'Normal', 'Killing', `FailedPostStartHook`);
        await this.d.cri.stopContainer(id, Math.max(grace, MIN_GRACE_SEC), label);
      }
    }
  }

  /**
   * Stops one container: its preStop hook first (within the grace period), then StopContainer with what is left
   * of it. A failed hook is an event; the container is stopped all the same.
   */
  private async stopContainer(c: ContainerInfo, graceSec: number): Promise<void> {
    const spec = [...(this.pod.spec?.initContainers ?? []), ...(this.pod.spec?.containers ?? [])].find(
      (x) => x.name === c.name,
    );
    const preStop = spec?.lifecycle?.preStop;
    let left = graceSec;
    if (preStop && c.state === 'running') {
      const t0 = Date.now();
      const podIP = this.lastState?.sandboxes[0]?.ip ?? '';
      const err = await runHook(
        preStop,
        { pod: this.pod, container: spec!, containerId: c.id, podIP },
        this.d.cri,
        graceSec,
      );
      if (err)
        this.d.events.event(
          { ...this.ref, fieldPath: containerFieldPath(this.pod, c.name) },
          'Warning',
          'FailedPreStopHook',
          err,
        );
      left = graceSec - Math.floor((Date.now() - t0) / 1000);
    }
    await this.d.cri.stopContainer(c.id, Math.max(left, MIN_GRACE_SEC), this.fullName);
  }

  /** EnsureImageExists: ImageStatus first, PullImage only as the policy says. */
  private async ensureImage(
    c: Container,
    ref: ObjectRef,
    sandboxConfig: PodSandboxConfigIn,
  ): Promise<string | undefined> {
    const image = c.image!;
    const label = this.fullName;
    const policy = c.imagePullPolicy ?? 'IfNotPresent';
    const present = await this.d.cri.imageStatus(image, label);
    if (present && policy !== 'Always') {
      if (this.waiting.get(c.name)?.reason !== 'ContainerCreating')
        this.d.events.event(ref, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      this.waiting.set(c.name, { reason: 'ContainerCreating', message: '' });
      return present.id;
    }
    if (!present && policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      this.waiting.set(c.name, { reason: 'ErrImageNeverPull', message });
      this.d.events.event(ref, 'Warning', 'ErrImageNeverPull', message);
      return undefined;
    }
    const key = `${this.uid}_${image}`;
    if (this.d.imageBackoff.inBackoffSinceUpdate(key)) {
      const prevErr = this.waiting.get(c.name);
      const message = `Back-off pulling image "${image}"${prevErr?.message ? `: ${prevErr.message.replace(/^Back-off pulling image "[^"]*": /, '')}` : ''}`;
      this.waiting.set(c.name, { reason: 'ImagePullBackOff', message });
      this.d.events.event(ref, 'Normal', 'BackOff', message);
      this.wakeIn(this.d.imageBackoff.get(key));
      return undefined;
    }
    this.d.events.event(ref, 'Normal', 'Pulling', `Pulling image "${image}"`);
    const t0 = Date.now();
    try {
      const imageRef = await this.pullWithSecrets(image, sandboxConfig);
      const took = formatDuration(Date.now() - t0);
      const st = await this.d.cri.imageStatus(imageRef, label).catch(() => null);
      this.d.events.event(
        ref,
        'Normal',
        'Pulled',
        `Successfully pulled image "${image}" in ${took} (${took} including waiting). Image size: ${st?.size ?? 0} bytes.`,
      );
      this.d.imageBackoff.reset(key);
      return imageRef;
    } catch (e) {
      this.d.imageBackoff.next(key);
      const msg = (e as Error).message;
      this.waiting.set(c.name, { reason: 'ErrImagePull', message: msg });
      this.d.events.event(ref, 'Warning', 'Failed', `Failed to pull image "${image}": ${msg}`);
      this.d.events.event(ref, 'Warning', 'Failed', 'Error: ErrImagePull');
      this.wakeIn(this.d.imageBackoff.get(key));
      return undefined;
    }
  }

  /**
   * PullImage with the pod's imagePullSecrets, as upstream: each matching credential in turn (best match first) until
   * one works, anonymously when none matches. Secrets that cannot be read are reported and left out.
   */
  private async pullWithSecrets(image: string, sandboxConfig: PodSandboxConfigIn): Promise<string> {
    const names = (this.pod.spec?.imagePullSecrets ?? []).map((s) => s.name).filter((n): n is string => !!n);
    const secrets: KObj[] = [];
    const missing: string[] = [];
    for (const n of names) {
      const s = await this.d.volumes.objects.secret(this.pod.metadata!.namespace!, n).catch(() => undefined);
      if (s) secrets.push(s);
      else missing.push(`"${n}"`);
    }
    if (missing.length)
      this.d.events.event(
        this.ref,
        'Warning',
        'FailedToRetrieveImagePullSecret',
        `Unable to retrieve some image pull secrets (${missing.join(', ')}); attempting to pull the image may not succeed.`,
      );
    const creds = credentialsFor(image, secrets);
    if (!creds.length) return this.d.cri.pullImage(image, sandboxConfig, this.fullName);
    let last: unknown;
    for (const auth of creds) {
      try {
        return await this.d.cri.pullImage(image, sandboxConfig, this.fullName, auth);
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  /**
   * Stop running containers in parallel, then the sidecars one by one in reverse order with what is left of the
   * grace period (upstream: sidecars outlive the containers they serve), then the sandboxes.
   */
  private async stopAll(state: PodRuntimeState, graceSec: number, announce: boolean): Promise<void> {
    const label = this.fullName;
    const t0 = Date.now();
    const sidecars = sidecarsOf(this.pod).map((c) => c.name);
    const live = state.containers.filter(
      (c) => c.state === 'running' || c.state === 'created' || c.state === 'unknown',
    );
    const stop = async (c: ContainerInfo, grace: number): Promise<void> => {
      if (announce && c.state === 'running')
        this.d.events.event(
          { ...this.ref, fieldPath: containerFieldPath(this.pod, c.name) },
          'Normal',
          'Killing',
          `Stopping container ${c.name}`,
        );
      await this.stopContainer(c, grace);
    };
    await Promise.all(live.filter((c) => !sidecars.includes(c.name)).map((c) => stop(c, graceSec)));
    for (const name of [...sidecars].reverse()) {
      for (const c of live.filter((x) => x.name === name))
        await stop(c, Math.max(graceSec - Math.floor((Date.now() - t0) / 1000), 0));
    }
    for (const s of state.sandboxes) if (s.ready) await this.d.cri.stopPodSandbox(s.id, label);
  }

  /** Termination: graceful stop within what is left of the grace period, then removal. */
  private async killAndRemove(): Promise<void> {
    const label = this.fullName;
    const state = await readPodState(this.d.cri, this.uid, label, this.networks);
    this.lastState = state;
    const elapsed = Math.floor((Date.now() - this.terminateStarted) / 1000);
    await this.stopAll(state, Math.max(this.terminateGraceSec - elapsed, 0), true);
    if (this.d.onStopped) {
      const stopped = await readPodState(this.d.cri, this.uid, label, this.networks);
      this.lastState = stopped;
      await this.d
        .onStopped(this, stopped)
        .catch((e: Error) =>
          this.d.log.warn(`pod ${label}: reporting its final status: ${e.message}`, { podUID: this.uid }),
        );
    }
    for (const c of state.containers) await this.d.cri.removeContainer(c.id, label);
    if (this.d.node.containerLogsDir)
      await removeContainerLogLinks(this.d.node.containerLogsDir, new Set(state.containers.map((c) => c.id))).catch(
        () => 0,
      );
    for (const s of state.sandboxes) await this.d.cri.removePodSandbox(s.id, label);
    await this.d.cgroups
      ?.removePod(this.uid)
      .catch((e: Error) =>
        this.d.log.warn(`pod ${label}: removing its cgroup: ${e.message}; the kubelet's housekeeping retries`),
      );
    await this.d.volumes.tearDown(this.uid);
    await fsp.rm(podLogDir(this.d.node.podLogsDir, this.pod), { recursive: true, force: true });
  }
}

function desiredKey(p: Pod): string {
  const md = p.metadata ?? {};
  return JSON.stringify([p.spec, md.labels, md.annotations, md.deletionTimestamp, md.deletionGracePeriodSeconds]);
}

/** Go time.Duration-like formatting: 10s, 1m20s, 1.234s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(3))}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m}m${s}s`;
}

/** Exponential delays for one kind of retry. */
class RetryDelay {
  private cur = 0;
  constructor(
    private readonly first: number,
    private readonly max: number,
  ) {}
  next(): number {
    this.cur = this.cur ? Math.min(this.cur * 2, this.max) : this.first;
    return this.cur;
  }
  reset(): void {
    this.cur = 0;
  }
}
