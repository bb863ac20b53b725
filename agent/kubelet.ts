// The kubelet core: sources -> desired pods by UID -> pod workers -> CRI,
// with PLEG waking workers and GC cleaning up after them.
import fs from 'node:fs';
import os from 'node:os';

import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { type KObj, type KubeApi, KubeApiError } from '../kube/client.js';
import type { EventRecorder } from '../kube/events.js';
import { hostPortConflict, NODE_PORTS_REJECTION } from '../kube/host-ports.js';
import { Informer } from '../kube/informer.js';
import type { Logger } from '../kube/log.js';
import { milliValue, parseQuantity } from '../kube/quantity.js';
import type { ContainerManager } from './cm/container-manager.js';
import { FatalConfigError } from './cm/errors.js';
import type { CriClient } from './cri/client.js';
import { admitUnderPressure, isCriticalPod } from './eviction/admission.js';
import type { NodeCondition } from './eviction/decide.js';
import { type KubeletCounts, type KubeletMetrics, operationType } from './metrics.js';
import { selectGarbage } from './pleg/gc.js';
import { Pleg, type RuntimeSnapshot } from './pleg/relist.js';
import { Backoff } from './pods/backoff.js';
import type { NodeContext } from './pods/cri-config.js';
import { type DnsConfig, parseResolvConf, podDnsConfig } from './pods/dns.js';
import { A_POD_TERMINATION_GRACE, L_POD_NAME, L_POD_NAMESPACE, L_POD_UID } from './pods/labels.js';
import { removeContainerLogLinks } from './pods/log-links.js';
import { cleanupOrphans } from './pods/orphans.js';
import { admitPodOs } from './pods/os-admission.js';
import { podRequests, resizeFit, type ResizePending } from './pods/resize.js';
import { RuntimeClasses } from './pods/runtime-class.js';
import { latestContainer, type PodRuntimeState } from './pods/runtime-state.js';
import { admitSysctls } from './pods/sysctls.js';
import { PodWorker } from './pods/worker.js';
import { ProberManager } from './probes/manager.js';
import type { ContainerView } from './probes/worker.js';
import { SHUTDOWN_MESSAGE, SHUTDOWN_NOT_ADMITTED, SHUTDOWN_REASON } from './shutdown/node-shutdown.js';
import { ApiSource } from './sources/api.js';
import { podNames, type SourceChanges, sourceChanges } from './sources/changes.js';
import { FileSource } from './sources/file.js';
import { HttpSource } from './sources/http.js';
import { ANN_CONFIG_SOURCE } from './sources/manifest.js';
import { MirrorPods } from './status/mirror-pods.js';
import { StatusManager } from './status/status-manager.js';
import { ApiObjects } from './volumes/api-objects.js';
import { PodCertificates } from './volumes/pod-certificates.js';
import { VolumeManager } from './volumes/volume-manager.js';

export interface KubeletOptions {
  cri: CriClient;
  node: NodeContext;
  log: Logger;
  events: EventRecorder;
  manifestPath?: string;
  fileCheckFrequencyMs?: number;
  /** staticPodURL, its headers and httpCheckFrequency. */
  manifestURL?: string;
  manifestURLHeaders?: Record<string, string[]>;
  httpCheckFrequencyMs?: number;
  relistPeriodMs?: number;
  gcPeriodMs?: number;
  /** Join an apiserver: pods bound to this node come from it, and finished deletions go back to it. */
  client?: KubeApi;
  /** The registered Node's UID, for mirror pod owner references ('' until registered). */
  nodeUid?: () => string;
  metrics?: KubeletMetrics;
  /** Every probe run (worker key, time): for benchmarks. */
  onProbeRun?: (key: string, at: number) => void;
  /** How often ConfigMap, Secret, downwardAPI and projected volumes are refreshed. */
  volumeResyncMs?: number;
  /** clusterDNS, clusterDomain and resolvConf ("" for none): the pods' DNS settings. Unset: the runtime's default. */
  dns?: { clusterDNS: string[]; clusterDomain: string; resolvConf: string };
  /** Sysctls beyond the safe set that pods may set (names, or prefixes ending in *). */
  allowedUnsafeSysctls?: string[];
  /** The QoS and pod cgroups (absent in tests with a fake runtime: the runtime's default cgroups). */
  cgroups?: ContainerManager;
  /** Node allocatable (resourceFieldRef defaults, resize admission); absent: the machine's CPUs and memory. */
  allocatable?: Record<string, string>;
  /** The eviction manager's pressure conditions, for pod admission. */
  pressure?: () => Set<NodeCondition>;
  /** The node is shutting down (graceful node shutdown): new pods are refused. */
  shuttingDown?: () => boolean;
}

export class Kubelet {
  readonly workers = new Map<string, PodWorker>();
  private readonly bySource = new Map<string, Pod[]>();
  private desired = new Map<string, Pod>();
  private readonly crashBackoff = new Backoff(10_000, 300_000);
  private readonly imageBackoff = new Backoff(10_000, 300_000);
  private readonly sources: { stop(): unknown }[] = [];
  /** UIDs of API pods whose deletion we finished; they get no new worker while the DELETE propagates. */
  private readonly deleted = new Set<string>();
  /** Sources configured; orphans are cleaned up only once each has reported a SET. */
  private readonly expectedSources = new Set<string>();
  private gcTimer: NodeJS.Timeout | undefined;
  readonly pleg: Pleg;
  readonly prober: ProberManager;
  readonly status: StatusManager | undefined;
  readonly mirror: MirrorPods | undefined;
  private mirrors: KObj[] = [];
  private mirrorTimer: NodeJS.Timeout | undefined;
  readonly volumes: VolumeManager;
  /** Services, for the pods' environment variables (joined kubelets only). */
  private readonly services: Informer | undefined;
  private readonly runtimeClasses: RuntimeClasses | undefined;
  private readonly allocatable: Record<string, string>;

  constructor(private readonly o: KubeletOptions) {
    this.allocatable = o.allocatable ?? { cpu: String(os.cpus().length), memory: String(os.totalmem()) };
    this.prober = new ProberManager({
      cri: o.cri,
      events: o.events,
      log: o.log,
      metrics: o.metrics,
      startedAt: Date.now(),
      onRun: o.onProbeRun,
      onStatusChange: (uid) => {
        const w = this.workers.get(uid);
        if (w) this.reportStatus(w);
      },
      onUnhealthy: (uid) => this.workers.get(uid)?.requestSync(),
      onStarted: (uid) => this.workers.get(uid)?.requestSync(),
    });
    this.status = o.client ? new StatusManager(o.client, o.log, o.node.hostIP, this.prober, o.node.hostIPs) : undefined;
    this.mirror = o.client && o.nodeUid ? new MirrorPods(o.client, o.node.nodeName, o.nodeUid, o.log) : undefined;
    this.pleg = new Pleg(o.cri, o.log, (uids, snap) => this.onRelist(uids, snap), o.relistPeriodMs ?? 1000);
    const objects = new ApiObjects(o.client);
    this.volumes = new VolumeManager({
      rootDir: o.node.rootDir,
      log: o.log,
      objects,
      resyncMs: o.volumeResyncMs,
      ...(o.client ? { podCertificates: new PodCertificates(objects, o.node.nodeName) } : {}),
    });
    this.services = o.client
      ? new Informer(o.client, { path: '/api/v1/services', onError: (e) => o.log.warn(`service watch: ${e.message}`) })
      : undefined;
    this.runtimeClasses = o.client ? new RuntimeClasses(o.client, o.log) : undefined;
    const m = o.metrics;
    if (m) {
      o.cri.observer = (method, sec, ok) => {
        const op = { operation_type: operationType(method) };
        m.runtimeOps.inc(op);
        m.runtimeOpDuration.observe(op, sec);
        if (!ok) m.runtimeOpErrors.inc(op);
      };
      this.pleg.onRelisted = (sec) => m.plegRelist.observe(sec);
      m.observeKubelet(o.node.nodeName, () => this.counts());
    }
  }

  /** Syncs every pod now (the pod network just came up: sandboxes that failed can be made). */
  resyncAll(): void {
    for (const w of this.workers.values()) w.requestSync();
  }

  /** Figures for the kubelet's gauges. */
  counts(): KubeletCounts {
    const snap = this.pleg.snapshot;
    const byState: Record<string, number> = {};
    for (const c of snap?.containers ?? []) {
      const st = c.state.replace(/^CONTAINER_/, '').toLowerCase();
      byState[st] = (byState[st] ?? 0) + 1;
    }
    const isStatic = (p: Pod): boolean => p.metadata?.annotations?.[ANN_CONFIG_SOURCE] !== 'api';
    const desired = [...this.desired.values()];
    const working: Record<string, number> = {};
    for (const w of this.workers.values()) {
      const k = `${w.phase === 'syncing' ? 'sync' : 'terminating'}/${String(isStatic(w.pod))}`;
      working[k] = (working[k] ?? 0) + 1;
    }
    return {
      runningPods: (snap?.sandboxes ?? []).filter((s) => s.state === 'SANDBOX_READY').length,
      containersByState: byState,
      desiredStatic: desired.filter(isStatic).length,
      desiredApi: desired.filter((p) => !isStatic(p)).length,
      working,
    };
  }

  /** The pods this kubelet runs beside `pod` (admitted, not stopping), for admission checks against them. */
  private admittedPods(pod: Pod): Pod[] {
    return [...this.workers.values()]
      .filter((w) => w.uid !== pod.metadata?.uid && w.isAdmitted && w.phase === 'syncing' && !w.evicted)
      .map((w) => w.pod);
  }

  private isStaticPod(p: Pod): boolean {
    return p.metadata?.annotations?.[ANN_CONFIG_SOURCE] !== 'api';
  }

  /** The pods the eviction manager may choose from: running here, not already on their way out. */
  evictionCandidates(): {
    pod: Pod;
    critical: boolean;
    evict(message: string, graceSec: number): void;
    cleanedUp(): boolean;
  }[] {
    return [...this.workers.values()]
      .filter((w) => w.phase === 'syncing' && !w.evicted && this.desired.has(w.uid))
      .map((w) => ({
        pod: w.pod,
        critical: isCriticalPod(w.pod, this.isStaticPod(w.pod)),
        evict: (m: string, g: number) => w.evict(m, g),
        cleanedUp: () => w.evictionDone || w.phase !== 'syncing',
      }));
  }

  /** Graceful node shutdown's view: running pods, each ended Failed/Terminated within a grace period. */
  shutdownCandidates(): { pod: Pod; critical: boolean; terminate(graceSec: number): Promise<void> }[] {
    return [...this.workers.values()]
      .filter((w) => w.phase === 'syncing' && !w.evicted)
      .map((w) => ({
        pod: w.pod,
        critical: isCriticalPod(w.pod, this.isStaticPod(w.pod)),
        terminate: async (g: number) => {
          w.evict(SHUTDOWN_MESSAGE, g, SHUTDOWN_REASON);
          while (!w.evictionDone && w.phase === 'syncing') await new Promise((r) => setTimeout(r, 200));
        },
      }));
  }

  /** Why a container has not started, as its status would say (for the kubelet API). */
  waitingReason(uid: string, container: string): string | undefined {
    return this.workers.get(uid)?.waiting.get(container)?.reason;
  }

  private orphanDirsChecked = false;

  /** Upstream sourcesReady: a source that never answered (apiserver down) may still own running pods. */
  private get sourcesReady(): boolean {
    return [...this.expectedSources].every((s) => this.bySource.has(s));
  }

  async start(): Promise<void> {
    // Three independent round trips to the runtime, sent together rather than one after another.
    const [v, runtimeDriver, sandboxes] = await Promise.all([
      this.o.cri.version(),
      this.o.cgroups ? this.o.cri.cgroupDriver().catch(() => undefined) : undefined,
      this.o.manifestPath ? this.o.cri.listPodSandbox().catch(() => []) : [],
    ]);
    this.o.log.info(
      `connected to container runtime ${v.runtime_name} ${v.runtime_version} (CRI ${v.runtime_api_version})`,
    );
    if (this.o.cgroups) {
      if (runtimeDriver && runtimeDriver !== this.o.cgroups.o.cgroupDriver)
        throw new FatalConfigError(
          `cgroupDriver: "${this.o.cgroups.o.cgroupDriver}" does not match the container runtime's cgroup driver "${runtimeDriver}" (containerd's SystemdCgroup = ${String(runtimeDriver === 'systemd')}); set cgroupDriver: ${runtimeDriver}`,
        );
      await this.o.cgroups.start();
    }
    if (this.o.manifestPath) this.expectedSources.add('file');
    if (this.o.manifestURL) this.expectedSources.add('http');
    if (this.o.client) this.expectedSources.add('api');
    if (this.o.manifestPath) {
      // What runs already (the PLEG has not relisted yet), so that of two files defining one pod the running one keeps it.
      const running = new Set(
        sandboxes.filter((s) => s.state === 'SANDBOX_READY').map((s) => s.labels[L_POD_UID] ?? ''),
      );
      const fs = new FileSource({
        path: this.o.manifestPath,
        nodeName: this.o.node.nodeName,
        checkFrequencyMs: this.o.fileCheckFrequencyMs,
        log: this.o.log,
        running: (uid) => this.workers.has(uid) || running.has(uid),
        onSet: (pods) => this.setSource('file', pods),
      });
      this.sources.push(fs);
      await fs.start();
    }
    if (this.o.manifestURL) {
      const hs = new HttpSource({
        url: this.o.manifestURL,
        headers: this.o.manifestURLHeaders,
        nodeName: this.o.node.nodeName,
        checkFrequencyMs: this.o.httpCheckFrequencyMs,
        log: this.o.log,
        onSet: (pods) => this.setSource('http', pods),
      });
      this.sources.push(hs);
      await hs.start();
    }
    if (this.o.client) {
      const api = new ApiSource(
        this.o.client,
        this.o.node.nodeName,
        this.o.log,
        (pods) => this.setSource('api', pods),
        (m) => {
          const before = new Set(this.mirrors.map((x) => x.metadata.uid));
          this.mirrors = m;
          this.syncMirrors();
          // A new mirror pod gets its status from the next sync of its static pod.
          const fresh = new Set(
            m.filter((x) => !before.has(x.metadata.uid)).map((x) => `${x.metadata.namespace}/${x.metadata.name}`),
          );
          for (const w of this.workers.values()) if (fresh.has(w.fullName)) w.requestSync();
        },
      );
      // The Node may register after us; retry mirror pods until it has.
      this.mirrorTimer = setInterval(() => this.syncMirrors(), 2000);
      this.mirrorTimer.unref();
      this.sources.push(api);
      // The first list may fail while the apiserver is away; pods from files must not wait for it.
      await Promise.race([api.start(), new Promise((r) => setTimeout(r, 5000))]);
    }
    // Pods must not wait for the Service list: an unreachable apiserver would hold them all.
    if (this.services) void this.services.start().catch((e: Error) => this.o.log.warn(`service list: ${e.message}`));
    this.volumes.start();
    this.pleg.start();
    this.gcTimer = setInterval(() => void this.gc(), this.o.gcPeriodMs ?? 60_000);
    this.gcTimer.unref();
  }

  /** Stops watching and syncing; containers keep running (a kubelet restart must not touch them). */
  async stop(): Promise<void> {
    const step = async (what: string, fn: () => unknown): Promise<void> => {
      const t0 = performance.now();
      await fn();
      this.o.log.info(`stop: ${what} (${Math.round(performance.now() - t0)}ms)`);
    };
    for (const s of this.sources) await step(`pod source ${s.constructor.name}`, () => s.stop());
    if (this.mirrorTimer) clearInterval(this.mirrorTimer);
    this.pleg.stop();
    this.prober.stop();
    this.volumes.stop();
    await step('service informer', () => this.services?.stop());
    await step('runtime class informer', () => this.runtimeClasses?.stop());
    if (this.gcTimer) clearInterval(this.gcTimer);
    await step('pod workers', () => Promise.all([...this.workers.values()].map((w) => w.halt())));
  }

  desiredPods(): Pod[] {
    return [...this.desired.values()];
  }

  setSource(name: string, pods: Pod[]): void {
    const wasReady = this.sourcesReady;
    const before = this.bySource.get(name);
    this.bySource.set(name, pods);
    const next = new Map<string, Pod>();
    for (const list of this.bySource.values()) for (const p of list) next.set(p.metadata!.uid!, p);
    this.desired = next;
    if (!before) this.o.log.info(`pod source ${name} reports ${pods.length} pod(s)`, { pods: podNames(pods) });
    else this.logChanges(name, sourceChanges(before, pods));
    this.reconcile();
    this.syncMirrors();
    // The last source answered late: pods no source wants can be cleaned up now.
    const snap = this.pleg.snapshot;
    if (!wasReady && this.sourcesReady && snap)
      this.onRelist([...new Set(snap.sandboxes.map((sb) => sb.labels[L_POD_UID] ?? ''))].filter(Boolean), snap);
  }

  /** Only what changed, as upstream's SyncLoop lines: a source reports all its pods on every change (O(pods) a line). */
  private logChanges(source: string, ch: SourceChanges): void {
    for (const [op, pods] of [
      ['ADD', ch.add],
      ['DELETE', ch.delete],
      ['REMOVE', ch.remove],
    ] as const)
      if (pods.length) this.o.log.info(`SyncLoop ${op}`, { source, pods: podNames(pods) });
    if (ch.update.length) this.o.log.debug('SyncLoop UPDATE', { source, pods: podNames(ch.update) });
  }

  private deps() {
    const onSynced = (w: PodWorker): void => {
      this.prober.poke(w.uid);
      this.reportStatus(w);
    };
    return {
      cri: this.o.cri,
      node: this.o.node,
      log: this.o.log,
      events: this.o.events,
      crashBackoff: this.crashBackoff,
      imageBackoff: this.imageBackoff,
      onSynced,
      onStopped: (w: PodWorker, state: PodRuntimeState) => this.reportFinalStatus(w, state),
      probes: this.prober,
      volumes: this.volumes,
      services: () => this.services?.list() ?? [],
      allocatable: this.allocatable,
      dns: this.o.dns ? (pod: Pod) => this.podDns(pod) : undefined,
      clusterDomain: this.o.dns?.clusterDomain,
      resizeFit: (pod: Pod) => this.resizeFit(pod),
      runtimeHandler: this.runtimeClasses ? (pod: Pod) => this.runtimeClasses!.handlerFor(pod) : undefined,
      admit: (pod: Pod) =>
        (this.o.shuttingDown?.() ? SHUTDOWN_NOT_ADMITTED : undefined) ??
        admitPodOs(pod) ??
        (hostPortConflict(pod, this.admittedPods(pod)) ? NODE_PORTS_REJECTION : undefined) ??
        admitSysctls(pod, this.o.allowedUnsafeSysctls ?? []) ??
        admitUnderPressure(pod, this.o.pressure?.() ?? new Set(), isCriticalPod(pod, this.isStaticPod(pod))),
      cgroups: this.o.cgroups,
    };
  }

  /** A resize fits when the pod's new requests fit the node's allocatable beside every other pod's allocated requests. */
  private resizeFit(pod: Pod): ResizePending | undefined {
    const others = { cpu: 0, memory: 0 };
    for (const w of this.workers.values()) {
      if (w.uid === pod.metadata?.uid || w.phase === 'terminated') continue;
      const r = podRequests(w.runningPod);
      others.cpu += r.cpu;
      others.memory += r.memory;
    }
    return resizeFit(podRequests(pod), others, {
      cpu: milliValue(this.allocatable.cpu!),
      memory: parseQuantity(this.allocatable.memory!),
    });
  }

  /** The pod's DNS settings; the node's resolv.conf is read each time, as upstream (it may change). */
  private podDns(pod: Pod): ReturnType<typeof podDnsConfig> {
    const d = this.o.dns!;
    let host: DnsConfig | undefined;
    if (d.resolvConf) {
      try {
        host = parseResolvConf(fs.readFileSync(d.resolvConf, 'utf8'));
      } catch (e) {
        throw new Error(`resolvConf ${d.resolvConf}: ${(e as Error).message}`, { cause: e });
      }
    }
    return podDnsConfig(pod, {
      clusterDNS: d.clusterDNS,
      clusterDomain: d.clusterDomain,
      host,
      nodeIPs: this.o.node.hostIPs ?? [this.o.node.hostIP],
    });
  }

  /** What the prober sees of a container: the newest instance in the worker's last runtime read. */
  private containerView(w: PodWorker, c: Container): Omit<ContainerView, 'started'> | undefined {
    const st = w.lastState;
    const ci = st && latestContainer(st, c.name);
    if (!ci) return undefined;
    const podIP = w.pod.spec?.hostNetwork ? this.o.node.hostIP : (st.sandboxes[0]?.ip ?? '');
    return {
      pod: w.pod,
      container: c,
      id: ci.id,
      running: ci.state === 'running',
      startedAt: ci.startedAt || ci.createdAt,
      podIP,
    };
  }

  private watchProbes(w: PodWorker): void {
    this.prober.update(w.uid, w.pod, (c) => this.containerView(w, c));
  }

  private staticPods(): Pod[] {
    return [...this.desired.values()].filter((p) => p.metadata?.annotations?.[ANN_CONFIG_SOURCE] !== 'api');
  }

  private syncMirrors(): void {
    this.mirror?.reconcile(this.staticPods(), this.mirrors);
  }

  /** API pods get their status written back; static pods through their mirror pod. */
  /**
   * An API pod being deleted: its containers' terminated states and its terminal phase are written before it is
   * deleted (upstream's terminal phase for deleted pods), so a pod a finalizer keeps shows how it ended.
   */
  private async reportFinalStatus(w: PodWorker, state: PodRuntimeState): Promise<void> {
    const md = w.pod.metadata;
    if (!this.status || md?.annotations?.[ANN_CONFIG_SOURCE] !== 'api' || !md.deletionTimestamp) return;
    await this.status.updateAndWait(w.pod, state, new Map(), { ...w.statusExtras(), terminal: true });
  }

  private reportStatus(w: PodWorker): void {
    if (!this.status || !w.lastState) return;
    const source = w.pod.metadata?.annotations?.[ANN_CONFIG_SOURCE];
    if (source === 'api') return this.status.update(w.pod, w.lastState, w.waiting, w.statusExtras());
    if (source !== 'file' && source !== 'http') return;
    const m = this.mirrors.find(
      (x) =>
        x.metadata.namespace === w.pod.metadata!.namespace &&
        x.metadata.name === w.pod.metadata!.name &&
        !x.metadata.deletionTimestamp,
    );
    if (m)
      this.status.update(
        { ...w.pod, metadata: { ...w.pod.metadata, uid: m.metadata.uid }, status: m.status },
        w.lastState,
        w.waiting,
        w.statusExtras(),
      );
  }

  private spawnWorker(uid: string, pod: Pod): PodWorker {
    const w = new PodWorker(uid, pod, this.deps(), (done) => {
      if (this.workers.get(done.uid) === done) this.workers.delete(done.uid);
      this.prober.remove(done.uid);
      this.status?.forget(done.uid);
      void this.finishDeletion(done.pod);
    });
    this.workers.set(uid, w);
    this.watchProbes(w);
    return w;
  }

  /** After an API pod marked for deletion is stopped: DELETE it with grace 0 and a uid precondition. */
  private async finishDeletion(pod: Pod): Promise<void> {
    const md = pod.metadata!;
    if (!this.o.client || !md.deletionTimestamp || md.annotations?.[ANN_CONFIG_SOURCE] !== 'api') return;
    this.deleted.add(md.uid!);
    try {
      await this.o.client.delete(`/api/v1/namespaces/${md.namespace!}/pods/${md.name!}`, {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        gracePeriodSeconds: 0,
        preconditions: { uid: md.uid },
      });
      this.o.log.info(`pod ${md.namespace!}/${md.name!} terminated and deleted from the API`, { podUID: md.uid });
    } catch (e) {
      if (e instanceof KubeApiError && (e.code === 404 || e.code === 409)) return; // already gone, or a new pod of that name
      this.deleted.delete(md.uid!);
      this.o.log.warn(
        `deleting pod ${md.namespace!}/${md.name!} from the API failed, will retry: ${(e as Error).message}`,
      );
      setTimeout(() => this.reconcile(), 2000).unref();
    }
  }

  /** Graceful termination; liveness and startup probes stop first so they cannot restart what is shutting down. */
  private terminate(w: PodWorker, graceSec?: number): void {
    this.prober.stopLivenessAndStartup(w.uid);
    w.terminate(graceSec);
  }

  private reconcile(): void {
    void this.o.cgroups
      ?.updateQos([...this.desired.values()])
      .catch((e: Error) => this.o.log.warn(`QoS cgroups: ${e.message}`));
    for (const uid of this.deleted) if (!this.desired.has(uid)) this.deleted.delete(uid);
    for (const w of this.workers.values()) {
      const want = this.desired.get(w.uid);
      if (!want && w.phase === 'syncing') {
        this.o.log.info(`pod ${w.fullName} removed from its source; terminating`, { podUID: w.uid });
        this.terminate(w);
      } else if (want?.metadata?.deletionTimestamp) {
        w.pod = want;
        this.terminate(w, want.metadata.deletionGracePeriodSeconds ?? undefined);
      }
    }
    for (const [uid, pod] of this.desired) {
      const w = this.workers.get(uid);
      if (w) {
        if (!pod.metadata?.deletionTimestamp && w.phase === 'syncing') {
          w.update(pod);
          this.watchProbes(w);
          // A readiness gate's condition is written by someone else: Ready follows it without waiting for a sync.
          if (pod.spec?.readinessGates?.length) this.reportStatus(w);
        }
        continue;
      }
      if (this.deleted.has(uid)) continue;
      if (pod.metadata?.deletionTimestamp) {
        // Marked for deletion while we were not running it: make sure nothing is left, then delete.
        this.terminate(this.spawnWorker(uid, pod), pod.metadata.deletionGracePeriodSeconds ?? undefined);
        continue;
      }
      const full = `${pod.metadata!.namespace!}/${pod.metadata!.name!}`;
      // A static pod whose file changed gets a new UID; it may start only after the old one is gone.
      const blocker = [...this.workers.values()].find((x) => x.fullName === full && x.phase === 'terminating');
      if (blocker) {
        this.o.log.info(`pod ${full} waits for its previous instance to terminate`, {
          podUID: uid,
          previousUID: blocker.uid,
        });
        void blocker.whenTerminated().then(() => this.reconcile());
        continue;
      }
      this.spawnWorker(uid, pod).requestSync();
    }
  }

  private onRelist(uids: string[], snap: RuntimeSnapshot): void {
    // At start, on the first relist after every source has spoken: what pods left behind while the kubelet was down goes.
    if (!this.orphanDirsChecked && this.sourcesReady) {
      this.orphanDirsChecked = true;
      void this.cleanupOrphanDirs(snap);
    }
    for (const uid of uids) {
      const w = this.workers.get(uid);
      if (w) {
        w.relisted(snap.fingerprints.get(uid) ?? '', snap.at);
        continue;
      }
      if (!this.sourcesReady || this.desired.has(uid)) continue;
      const sb = snap.sandboxes.find((s) => s.labels[L_POD_UID] === uid);
      const live =
        snap.containers.some((c) => c.labels[L_POD_UID] === uid && c.state !== 'CONTAINER_EXITED') ||
        snap.sandboxes.some((s) => s.labels[L_POD_UID] === uid && s.state === 'SANDBOX_READY');
      if (!sb || !live) continue;
      const grace = Number(
        sb.annotations[A_POD_TERMINATION_GRACE] ??
          snap.containers.find((c) => c.labels[L_POD_UID] === uid)?.annotations[A_POD_TERMINATION_GRACE] ??
          30,
      );
      const standIn: Pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: sb.labels[L_POD_NAME] ?? sb.metadata?.name,
          namespace: sb.labels[L_POD_NAMESPACE] ?? sb.metadata?.namespace,
          uid,
        },
        spec: { containers: [], terminationGracePeriodSeconds: grace },
      };
      this.o.log.info(
        `found running pod ${standIn.metadata!.namespace!}/${standIn.metadata!.name!} that no source wants; terminating`,
        { podUID: uid },
      );
      this.terminate(this.spawnWorker(uid, standIn), grace);
    }
  }

  async gc(): Promise<{ containers: number; sandboxes: number }> {
    const snap = await this.pleg.relist();
    if (!snap || !this.sourcesReady) return { containers: 0, sandboxes: 0 };
    const active = new Set(this.workers.keys());
    const g = selectGarbage(snap, active);
    for (const id of g.containers)
      await this.o.cri
        .removeContainer(id)
        .catch((e: Error) => this.o.log.warn(`GC: remove container ${id}: ${e.message}`));
    if (this.o.node.containerLogsDir)
      await removeContainerLogLinks(this.o.node.containerLogsDir, new Set(g.containers)).catch((e: Error) =>
        this.o.log.warn(`GC: container log links: ${e.message}`),
      );
    for (const id of g.sandboxes)
      await this.o.cri
        .removePodSandbox(id)
        .catch((e: Error) => this.o.log.warn(`GC: remove sandbox ${id}: ${e.message}`));
    if (g.containers.length || g.sandboxes.length)
      this.o.log.info(`GC removed ${g.containers.length} container(s) and ${g.sandboxes.length} sandbox(es)`);
    await this.cleanupOrphanDirs(snap);
    return { containers: g.containers.length, sandboxes: g.sandboxes.length };
  }

  /** Pod and log directories of pods nobody wants and the runtime no longer holds. */
  private async cleanupOrphanDirs(snap: RuntimeSnapshot): Promise<void> {
    const inRuntime = new Set<string>();
    for (const o of [...snap.sandboxes, ...snap.containers])
      if (o.labels[L_POD_UID]) inRuntime.add(o.labels[L_POD_UID]);
    const isLive = (uid: string): boolean => inRuntime.has(uid) || this.workers.has(uid) || this.desired.has(uid);
    await cleanupOrphans(this.o.node.rootDir, this.o.node.podLogsDir, isLive, this.o.log).catch((e: Error) =>
      this.o.log.warn(`orphaned pod directories: ${e.message}`),
    );
    await this.o.cgroups
      ?.removeOrphans(isLive)
      .catch((e: Error) => this.o.log.warn(`orphaned pod cgroups: ${e.message}`));
    await this.o.cgroups
      ?.updateQos([...this.desired.values()])
      .catch((e: Error) => this.o.log.warn(`QoS cgroups: ${e.message}`));
  }
}
