// The proxier: informers on Services, EndpointSlices and this Node feed change
// tracking; syncs are debounced (minSyncPeriod, burst 2) and handed to the
// mode's backend (iptables or nftables). Full syncs run at start, after a
// failure, when the node's labels or address change, and once an hour as
// upstream; every other sync, periodic ones included, writes only what
// changed. Nothing is flushed on start or stop: old rules keep working.
import type { Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { KObj, KubeApi } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import type { Logger } from '../kube/log.js';
import { endpointsOfSlices, LABEL_SERVICE_NAME, portKey, type Endpoint } from './model/endpoints.js';
import { servicePorts, type ServicePort } from './model/service-port.js';
import { conntrackDelete, conntrackListUdp, type Iptables } from './iptables/apply.js';
import { parseUdpFlows, staleUdpFilters, type UdpServicePort } from './conntrack.js';
import type { ServiceHealthServer } from './service-health.js';
import { IptablesBackend } from './iptables/backend.js';
import type { ProxyBackend } from './backend.js';
import type { ProxyMetrics } from './metrics.js';
import type { ProxyHealth } from './health.js';
import { SyncRunner } from './sync-runner.js';
import type { DetectLocal } from './model/local-detector.js';

export interface ProxierConfig {
  nodeName: string;
  /** --cluster-cidr; without it, off-cluster traffic to cluster IPs is not masqueraded. */
  clusterCIDR?: string;
  /** --detect-local-mode and its settings; ClusterCIDR over clusterCIDR when absent. */
  detectLocal?: DetectLocal;
  masqueradeAll: boolean;
  masqueradeBit: number;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  localhostNodePorts: boolean;
  conntrackTCPLiberal: boolean;
}

export interface ProxierDeps {
  client: KubeApi;
  /** The mode's backend; an iptables one over `ipt` when absent. */
  backend?: ProxyBackend;
  ipt?: Iptables;
  log: Logger;
  metrics: ProxyMetrics;
  health: ProxyHealth;
  /** conntrack -D (swapped out in unit tests). */
  conntrack?: (args: string[]) => Promise<number>;
  /** conntrack -L -p udp (swapped out in unit tests). */
  conntrackList?: () => Promise<string>;
  /** Health check node ports of externalTrafficPolicy Local Services. */
  serviceHealth?: ServiceHealthServer;
}

/** Upstream's informer selectors: Services for another proxy, and headless ones, are not ours. */
const NOT_OURS = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';
const TRIGGER_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';
/** Upstream proxyutil.FullSyncPeriod: a full resync at least this often, whatever syncPeriod is. */
export const FULL_SYNC_PERIOD_MS = 60 * 60_000;

export class Proxier {
  private readonly services: Informer;
  private readonly slices: Informer;
  private readonly node: Informer;
  private readonly ports = new Map<string, ServicePort[]>();
  private readonly slicesBySvc = new Map<string, Map<string, EndpointSlice>>();
  private readonly endpointsBySvc = new Map<string, Map<string, Endpoint[]>>();
  private readonly endpoints = new Map<string, Endpoint[]>();
  private changed = new Set<string>();
  private triggers = new Map<string, number[]>();
  private pendingServices = 0;
  private pendingEndpoints = 0;
  private initialized = false;
  private needFullSync = true;
  private lastFullSync = 0;
  private nodeLabels = '';
  readonly backend: ProxyBackend;
  /** Services whose conntrack cleanup failed: tried again at the next sync. */
  private readonly conntrackRetry = new Set<string>();
  private nodeIP = '';
  private nodeCIDR = '';
  private readonly runner: SyncRunner;
  private periodic: NodeJS.Timeout | undefined;
  syncs = 0;
  fullSyncs = 0;
  /** Time of the last successful sync and the render/restore split of it, for benchmarks. */
  lastSync = { at: 0, renderMs: 0, applyMs: 0, full: false, bytes: 0, changed: 0 };

  constructor(
    private readonly cfg: ProxierConfig,
    private readonly d: ProxierDeps,
  ) {
    const mark = `0x${(1 << cfg.masqueradeBit).toString(16).padStart(4, '0')}`;
    if (d.backend) this.backend = d.backend;
    else if (d.ipt) this.backend = new IptablesBackend(d.ipt, { masqueradeMark: mark, masqueradeAll: cfg.masqueradeAll, detectLocal: cfg.detectLocal ?? { mode: 'ClusterCIDR', clusterCIDR: cfg.clusterCIDR }, localhostNodePorts: cfg.localhostNodePorts, conntrackTCPLiberal: cfg.conntrackTCPLiberal }, d.metrics);
    else throw new Error('proxier: no backend');
    this.runner = new SyncRunner(() => this.sync(), cfg.minSyncPeriodMs, 2);
    const onErr = (what: string) => (e: Error) => d.log.warn(`${what} watch: ${e.message}; retrying`);
    this.services = new Informer(d.client, {
      path: '/api/v1/services',
      labelSelector: NOT_OURS,
      onAdd: (o) => this.onService(o),
      onUpdate: (o) => this.onService(o),
      onDelete: (o) => this.onService(o, true),
      onError: onErr('service'),
    });
    this.slices = new Informer(d.client, {
      path: '/apis/discovery.k8s.io/v1/endpointslices',
      labelSelector: NOT_OURS,
      onAdd: (o) => this.onSlice(o),
      onUpdate: (o) => this.onSlice(o),
      onDelete: (o) => this.onSlice(o, true),
      onError: onErr('endpointslice'),
    });
    this.node = new Informer(d.client, {
      path: '/api/v1/nodes',
      fieldSelector: `metadata.name=${cfg.nodeName}`,
      onAdd: (o) => this.onNode(o),
      onUpdate: (o) => this.onNode(o),
      onError: onErr('node'),
    });
  }

  /** Waits for Services and EndpointSlices to be listed, then makes the first (full) sync. */
  async start(): Promise<void> {
    void this.node.start();
    await Promise.all([this.services.start(), this.slices.start()]);
    this.initialized = true;
    this.d.log.info(`services and endpoint slices synced (${this.ports.size} services); programming ${this.backend.mode}`);
    await this.sync();
    // Periodic syncs (upstream's BoundedFrequencyRunner maxInterval) are partial unless a full one is due.
    this.periodic = setInterval(() => this.request(), this.cfg.syncPeriodMs);
    this.periodic.unref();
  }

  /** Stops watching; the rules stay in the kernel. */
  async stop(): Promise<void> {
    if (this.periodic) clearInterval(this.periodic);
    this.runner.stop();
    await Promise.all([this.services.stop(), this.slices.stop(), this.node.stop()]);
  }

  /** Upstream's Sync(): only once the informers have synced does a change count as a queued update for /healthz. */
  private request(): void {
    if (!this.initialized) return;
    this.d.health.queued();
    this.d.metrics.lastQueued.setToCurrentTime();
    this.runner.run();
  }

  private markChanged(svc: string, kind: 'service' | 'endpoints'): void {
    this.changed.add(svc);
    if (kind === 'service') {
      this.pendingServices++;
      this.d.metrics.serviceChangesTotal.inc();
      this.d.metrics.serviceChangesPending.set(this.pendingServices);
    } else {
      this.pendingEndpoints++;
      this.d.metrics.endpointChangesTotal.inc();
      this.d.metrics.endpointChangesPending.set(this.pendingEndpoints);
    }
    this.request();
  }

  private onService(o: KObj, deleted = false): void {
    const key = `${o.metadata.namespace}/${o.metadata.name}`;
    const next = deleted ? [] : servicePorts(o as Service);
    const prev = this.ports.get(key) ?? [];
    if (JSON.stringify(prev) === JSON.stringify(next)) return;
    if (next.length) this.ports.set(key, next);
    else this.ports.delete(key);
    this.markChanged(key, 'service');
  }

  private onSlice(o: KObj, deleted = false): void {
    const svcName = o.metadata.labels?.[LABEL_SERVICE_NAME];
    if (!svcName) return;
    const svc = `${o.metadata.namespace}/${svcName}`;
    let m = this.slicesBySvc.get(svc);
    if (!m) this.slicesBySvc.set(svc, (m = new Map()));
    if (deleted) m.delete(o.metadata.name);
    else m.set(o.metadata.name, o as EndpointSlice);
    if (m.size === 0) this.slicesBySvc.delete(svc);
    const next = endpointsOfSlices([...m.values()], this.cfg.nodeName);
    const prev = this.endpointsBySvc.get(svc) ?? new Map<string, Endpoint[]>();
    if (JSON.stringify([...prev]) === JSON.stringify([...next])) return;
    for (const k of prev.keys()) this.endpoints.delete(k);
    for (const [k, v] of next) this.endpoints.set(k, v);
    if (next.size) this.endpointsBySvc.set(svc, next);
    else this.endpointsBySvc.delete(svc);
    const trigger = Date.parse(o.metadata.annotations?.[TRIGGER_ANNOTATION] ?? '');
    if (Number.isFinite(trigger)) (this.triggers.get(svc) ?? this.triggers.set(svc, []).get(svc)!).push(trigger);
    this.markChanged(svc, 'endpoints');
  }

  private onNode(o: KObj): void {
    const ip = ((o.status?.addresses ?? []) as KObj[]).find((a) => a.type === 'InternalIP')?.address ?? '';
    this.d.health.nodeEligible = !o.metadata.deletionTimestamp && !((o.spec?.taints ?? []) as KObj[]).some((t) => t.key === 'ToBeDeletedByClusterAutoscaler');
    const labels = JSON.stringify(Object.entries(o.metadata.labels ?? {}).sort());
    const podCIDR = String(o.spec?.podCIDR ?? '');
    if (ip !== this.nodeIP || labels !== this.nodeLabels || podCIDR !== this.nodeCIDR) {
      // Upstream resyncs fully when the node's labels change (topology); its address and pod CIDR are in the rules too.
      this.nodeIP = ip;
      this.nodeCIDR = podCIDR;
      this.nodeLabels = labels;
      this.needFullSync = true;
      this.request();
    }
  }

  /** One syncProxyRules. */
  async sync(): Promise<void> {
    if (!this.initialized) return;
    const t0 = performance.now();
    const full = this.needFullSync || Date.now() - this.lastFullSync > FULL_SYNC_PERIOD_MS;
    const changed = this.changed;
    const triggers = this.triggers;
    this.changed = new Set();
    this.triggers = new Map();
    this.pendingServices = this.pendingEndpoints = 0;
    this.d.metrics.serviceChangesPending.set(0);
    this.d.metrics.endpointChangesPending.set(0);
    try {
      const out = await this.backend.sync({ full, changed, ports: this.ports, endpoints: this.endpoints, nodeIP: this.nodeIP, nodeCIDR: this.nodeCIDR });
      this.needFullSync = false;
      this.syncs++;
      if (full) {
        this.fullSyncs++;
        this.lastFullSync = Date.now();
      }
      this.lastSync = { at: Date.now(), renderMs: out.renderMs, applyMs: out.applyMs, full, bytes: out.bytes, changed: changed.size };
      const m = this.d.metrics;
      m.noLocalEndpoints.set({ traffic_policy: 'internal' }, out.noLocalInternal);
      m.noLocalEndpoints.set({ traffic_policy: 'external' }, out.noLocalExternal);
      m.lastSync.setToCurrentTime();
      for (const ts of triggers.values()) for (const t of ts) m.networkProgramming.observe(Math.max(0, Date.now() - t) / 1000);
      this.d.health.updated();
      this.d.log.debug(`synced ${this.backend.mode} (${full ? 'full' : `partial, ${changed.size} service(s)`}): ${out.summary}, render ${out.renderMs.toFixed(1)} ms, apply ${out.applyMs.toFixed(1)} ms`);
      await this.syncServiceHealth(full ? undefined : changed);
      await this.cleanConntrack(full ? undefined : changed);
    } catch (e) {
      this.d.log.error(this.backend.describe(e as Error));
      this.d.metrics.restoreFailures.inc();
      if (!full) this.d.metrics.partialRestoreFailures.inc();
      // The changes are consumed: only a full sync can catch up.
      this.needFullSync = true;
      this.runner.retryAfter(this.cfg.syncPeriodMs);
    } finally {
      const sec = (performance.now() - t0) / 1000;
      this.d.metrics.syncDuration.observe(sec);
      (full ? this.d.metrics.syncFullDuration : this.d.metrics.syncPartialDuration).observe(sec);
    }
  }

  /** The health check node ports of the changed Services (all on a full sync), with their local ready endpoints. */
  private async syncServiceHealth(changed: Set<string> | undefined): Promise<void> {
    const hs = this.d.serviceHealth;
    if (!hs) return;
    const keys = new Set(changed ?? this.ports.keys());
    if (!changed) for (const k of hs.ports().keys()) keys.add(k);
    for (const svc of keys) {
      const sps = this.ports.get(svc) ?? [];
      const port = sps.find((sp) => sp.healthCheckNodePort)?.healthCheckNodePort ?? 0;
      const ready = new Set<string>();
      for (const sp of sps) for (const e of this.endpoints.get(portKey(sp.service, sp.portName, sp.protocol)) ?? []) if (e.local && e.ready) ready.add(e.ip);
      await hs.set(svc, port, ready.size);
    }
  }

  /**
   * Stale UDP conntrack entries (upstream's rule, see conntrack.ts) of the changed Services, all of them on a full
   * sync (so a restart catches up), and of those whose cleanup failed before.
   */
  private async cleanConntrack(changed: Set<string> | undefined): Promise<void> {
    const keys = new Set(changed ?? this.ports.keys());
    for (const k of this.conntrackRetry) keys.add(k);
    const ports: UdpServicePort[] = [];
    for (const svc of keys) {
      for (const sp of this.ports.get(svc) ?? []) {
        if (sp.protocol !== 'UDP') continue;
        const eps = this.endpoints.get(portKey(sp.service, sp.portName, sp.protocol)) ?? [];
        ports.push({ ips: [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs], port: sp.port, nodePort: sp.nodePort, serving: new Set(eps.filter((e) => e.serving).map((e) => e.ip)) });
      }
    }
    this.conntrackRetry.clear();
    if (!ports.some((p) => p.serving.size)) return;
    const failed = (e: Error): void => {
      this.d.log.warn(`conntrack cleanup failed, retrying at the next sync: ${e.message}`);
      for (const k of keys) this.conntrackRetry.add(k);
    };
    let flows;
    try {
      flows = parseUdpFlows(await (this.d.conntrackList ?? conntrackListUdp)());
    } catch (e) {
      return failed(e as Error);
    }
    for (const args of staleUdpFilters(flows, ports)) {
      try {
        const n = await (this.d.conntrack ?? conntrackDelete)(args);
        if (n) this.d.log.info(`deleted ${n} stale UDP conntrack entr${n === 1 ? 'y' : 'ies'} (${args.join(' ')})`);
      } catch (e) {
        failed(e as Error);
      }
    }
  }
}
