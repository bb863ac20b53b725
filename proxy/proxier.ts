// The proxier: informers on Services, EndpointSlices and this Node feed change
// tracking; syncs are debounced (minSyncPeriod, burst 2) and handed to the
// mode's backend (iptables or nftables). Full syncs run at start, after a
// failure, when the node's labels or address change, and once an hour as
// upstream; every other sync, periodic ones included, writes only what
// changed. Nothing is flushed on start or stop: old rules keep working.
// Dual stack as upstream's meta-proxier: one backend per IP family, each fed
// the Service addresses and EndpointSlices of its family; a family whose
// Services did not change is left alone by a partial sync.
import type { Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import type { KObj, KubeApi } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import type { Iptables } from '../kube/iptables.js';
import type { Logger } from '../kube/log.js';
import type { ProxyBackend } from './backend.js';
import { parseUdpFlows, staleUdpFilters, type UdpServicePort } from './conntrack.js';
import type { ProxyHealth } from './health.js';
import { IptablesBackend } from './iptables/backend.js';
import { conntrackDelete, conntrackFamily, conntrackListUdp } from './iptables/conntrack.js';
import type { ProxyMetrics } from './metrics.js';
import { type Endpoint, endpointsOfSlices, LABEL_SERVICE_NAME, portKey } from './model/endpoints.js';
import { type IPFamily, nodeInternalIPs, nodeIPOf, ofFamily } from './model/family.js';
import type { DetectLocal } from './model/local-detector.js';
import { type ServicePort, servicePorts } from './model/service-port.js';
import { slimEndpointSlice, slimService, TRIGGER_ANNOTATION } from './model/slim.js';
import type { ServiceHealthServer } from './service-health.js';
import { SyncRunner } from './sync-runner.js';

export interface ProxierConfig {
  nodeName: string;
  /** --bind-address: overrides the Node's IP of its family (0.0.0.0 or :: override nothing). */
  bindAddress?: string;
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
  /** Dual stack: one backend per family, the primary first (instead of `backend`). */
  backends?: ProxyBackend[];
  ipt?: Iptables;
  log: Logger;
  metrics: ProxyMetrics;
  health: ProxyHealth;
  /** conntrack -D (swapped out in unit tests). */
  conntrack?: (args: string[]) => Promise<number>;
  /** conntrack -L -p udp [-f ipv6] (swapped out in unit tests). */
  conntrackList?: (family: IPFamily) => Promise<string>;
  /** Health check node ports of externalTrafficPolicy Local Services. */
  serviceHealth?: ServiceHealthServer;
}

/** Upstream's informer selectors: Services for another proxy, and headless ones, are not ours. */
export const NOT_OURS = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';
/** Upstream proxyutil.FullSyncPeriod: a full resync at least this often, whatever syncPeriod is. */
export const FULL_SYNC_PERIOD_MS = 60 * 60_000;

/** What the proxier knows of one IP family, and the backend that programs it. */
class FamilyState {
  readonly ports = new Map<string, ServicePort[]>();
  readonly endpointsBySvc = new Map<string, Map<string, Endpoint[]>>();
  readonly endpoints = new Map<string, Endpoint[]>();
  changed = new Set<string>();
  nodeIP = '';
  nodeCIDR = '';
  /** At start, after this family's failure, on node changes: its next sync is full. */
  needFull = true;
  lastFull = 0;
  constructor(readonly backend: ProxyBackend) {}
  get family(): IPFamily {
    return this.backend.family;
  }
}

export class Proxier {
  private readonly services: Informer;
  private readonly slices: Informer;
  private readonly node: Informer;
  private readonly families: FamilyState[];
  private readonly slicesBySvc = new Map<string, Map<string, EndpointSlice>>();
  private triggers = new Map<string, number[]>();
  private pendingServices = 0;
  private pendingEndpoints = 0;
  private initialized = false;
  private nodeLabels = '';
  private nodeAddrs = '';
  /** The primary family's backend. */
  readonly backend: ProxyBackend;
  /** Services whose conntrack cleanup failed, by family: tried again at the next sync. */
  private readonly conntrackRetry = new Map<IPFamily, Set<string>>();
  private readonly runner: SyncRunner;
  private periodic: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  syncs = 0;
  fullSyncs = 0;
  /** Time of the last successful sync and the render/restore split of it, for benchmarks. */
  lastSync = { at: 0, renderMs: 0, applyMs: 0, full: false, bytes: 0, changed: 0 };

  constructor(
    private readonly cfg: ProxierConfig,
    private readonly d: ProxierDeps,
  ) {
    const mark = `0x${(1 << cfg.masqueradeBit).toString(16).padStart(4, '0')}`;
    const backends =
      d.backends ??
      (d.backend
        ? [d.backend]
        : d.ipt
          ? [
              new IptablesBackend(
                d.ipt,
                {
                  masqueradeMark: mark,
                  masqueradeAll: cfg.masqueradeAll,
                  detectLocal: cfg.detectLocal ?? { mode: 'ClusterCIDR', clusterCIDR: cfg.clusterCIDR },
                  localhostNodePorts: cfg.localhostNodePorts,
                  conntrackTCPLiberal: cfg.conntrackTCPLiberal,
                },
                d.metrics,
              ),
            ]
          : []);
    if (!backends.length) throw new Error('proxier: no backend');
    this.families = backends.map((b) => new FamilyState(b));
    this.backend = backends[0]!;
    this.runner = new SyncRunner(() => this.sync(), cfg.minSyncPeriodMs, 2);
    const onErr = (what: string) => (e: Error) => d.log.warn(`${what} watch: ${e.message}; retrying`);
    this.services = new Informer(d.client, {
      path: '/api/v1/services',
      labelSelector: NOT_OURS,
      transform: slimService,
      onAdd: (o) => this.onService(o),
      onUpdate: (o) => this.onService(o),
      onDelete: (o) => this.onService(o, true),
      onError: onErr('service'),
    });
    this.slices = new Informer(d.client, {
      path: '/apis/discovery.k8s.io/v1/endpointslices',
      labelSelector: NOT_OURS,
      transform: slimEndpointSlice,
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
    const families = this.families.map((f) => f.family).join(' and ');
    this.d.log.info(
      `services and endpoint slices synced (${this.families[0]!.ports.size} services); programming ${this.backend.mode} (${families})`,
    );
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

  private markChanged(kind: 'service' | 'endpoints'): void {
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
    let changed = false;
    for (const f of this.families) {
      const next = deleted ? [] : servicePorts(o as Service, f.family);
      const prev = f.ports.get(key) ?? [];
      if (JSON.stringify(prev) === JSON.stringify(next)) continue;
      if (next.length) f.ports.set(key, next);
      else f.ports.delete(key);
      f.changed.add(key);
      changed = true;
    }
    if (changed) this.markChanged('service');
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
    let changed = false;
    for (const f of this.families) {
      if (o.addressType !== f.family) continue;
      const next = endpointsOfSlices([...m.values()], this.cfg.nodeName, f.family);
      const prev = f.endpointsBySvc.get(svc) ?? new Map<string, Endpoint[]>();
      if (JSON.stringify([...prev]) === JSON.stringify([...next])) continue;
      for (const k of prev.keys()) f.endpoints.delete(k);
      for (const [k, v] of next) f.endpoints.set(k, v);
      if (next.size) f.endpointsBySvc.set(svc, next);
      else f.endpointsBySvc.delete(svc);
      f.changed.add(svc);
      changed = true;
    }
    if (!changed) return;
    const trigger = Date.parse(o.metadata.annotations?.[TRIGGER_ANNOTATION] ?? '');
    if (Number.isFinite(trigger)) (this.triggers.get(svc) ?? this.triggers.set(svc, []).get(svc)!).push(trigger);
    this.markChanged('endpoints');
  }

  private onNode(o: KObj): void {
    const internal = nodeInternalIPs(o);
    this.d.health.nodeEligible =
      !o.metadata.deletionTimestamp &&
      !((o.spec?.taints ?? []) as KObj[]).some((t) => t.key === 'ToBeDeletedByClusterAutoscaler');
    const labels = JSON.stringify(Object.entries(o.metadata.labels ?? {}).sort());
    const podCIDRs = (
      (o.spec?.podCIDRs as string[] | undefined)?.length
        ? (o.spec!.podCIDRs as string[])
        : [String(o.spec?.podCIDR ?? '')]
    ).filter(Boolean);
    const addrs = JSON.stringify([internal, podCIDRs]);
    if (addrs !== this.nodeAddrs || labels !== this.nodeLabels) {
      // Upstream resyncs fully when the node's labels change (topology); its address and pod CIDR are in the rules too.
      for (const f of this.families) {
        f.nodeIP = nodeIPOf(f.family, internal, this.cfg.bindAddress ?? '0.0.0.0');
        f.nodeCIDR = ofFamily(podCIDRs, f.family)[0] ?? '';
      }
      this.nodeAddrs = addrs;
      this.nodeLabels = labels;
      for (const f of this.families) f.needFull = true;
      this.request();
    }
  }

  /** One syncProxyRules, after any running one: the first sync at start and the runner's never overlap. */
  sync(): Promise<void> {
    const next = this.syncing.then(() => this.syncOnce());
    this.syncing = next.catch(() => undefined);
    return next;
  }

  /** Each family's backend in turn, each full or partial on its own (upstream's meta-proxier). */
  private async syncOnce(): Promise<void> {
    if (!this.initialized) return;
    const t0 = performance.now();
    const now = Date.now();
    const fullOf = (f: FamilyState): boolean => f.needFull || now - f.lastFull > FULL_SYNC_PERIOD_MS;
    const full = this.families.some(fullOf);
    const triggers = this.triggers;
    this.triggers = new Map();
    this.pendingServices = this.pendingEndpoints = 0;
    this.d.metrics.serviceChangesPending.set(0);
    this.d.metrics.endpointChangesPending.set(0);
    const dual = this.families.length > 1;
    const changedAll = new Set<string>();
    const total = { renderMs: 0, applyMs: 0, bytes: 0, noLocalInternal: 0, noLocalExternal: 0 };
    let failed = false;
    let synced = false;
    for (const f of this.families) {
      const changed = f.changed;
      f.changed = new Set();
      for (const k of changed) changedAll.add(k);
      const fFull = fullOf(f);
      // A family without Services and without changes has nothing to write (an idle IPv6 side costs nothing).
      if (!fFull && !changed.size && !f.ports.size) continue;
      const what = `${f.backend.mode}${dual ? ` ${f.family}` : ''}`;
      // Cleared before the sync, not after: a node change arriving meanwhile asks for another full sync, with the
      // addresses this one did not have.
      if (fFull) f.needFull = false;
      try {
        const out = await f.backend.sync({
          full: fFull,
          changed,
          ports: f.ports,
          endpoints: f.endpoints,
          nodeIP: f.nodeIP,
          nodeCIDR: f.nodeCIDR,
        });
        if (fFull) f.lastFull = Date.now();
        for (const k of ['renderMs', 'applyMs', 'bytes', 'noLocalInternal', 'noLocalExternal'] as const)
          total[k] += out[k];
        this.d.log.debug(
          `synced ${what} (${fFull ? 'full' : `partial, ${changed.size} service(s)`}): ${out.summary}, render ${out.renderMs.toFixed(1)} ms, apply ${out.applyMs.toFixed(1)} ms`,
        );
        synced = true;
        await this.cleanConntrack(f, fFull ? undefined : changed);
      } catch (e) {
        // This family's changes are consumed: only a full sync of it can catch up; the other family goes on.
        failed = true;
        f.needFull = true;
        this.d.log.error(`${dual ? `${f.family}: ` : ''}${f.backend.describe(e as Error)}`);
      }
    }
    // Health check node ports count local endpoints of every family: once per sync, not once per family.
    if (synced) {
      try {
        await this.syncServiceHealth(full ? undefined : changedAll);
      } catch (e) {
        failed = true;
        this.d.log.error(`health check node ports: ${(e as Error).message}`);
      }
    }
    try {
      if (failed) {
        this.d.metrics.restoreFailures.inc();
        if (!full) this.d.metrics.partialRestoreFailures.inc();
        this.runner.retryAfter(this.cfg.syncPeriodMs);
        return;
      }
      this.syncs++;
      if (full) this.fullSyncs++;
      this.lastSync = {
        at: Date.now(),
        renderMs: total.renderMs,
        applyMs: total.applyMs,
        full,
        bytes: total.bytes,
        changed: changedAll.size,
      };
      const m = this.d.metrics;
      m.noLocalEndpoints.set({ traffic_policy: 'internal' }, total.noLocalInternal);
      m.noLocalEndpoints.set({ traffic_policy: 'external' }, total.noLocalExternal);
      m.lastSync.setToCurrentTime();
      for (const ts of triggers.values())
        for (const t of ts) m.networkProgramming.observe(Math.max(0, Date.now() - t) / 1000);
      this.d.health.updated();
    } finally {
      const sec = (performance.now() - t0) / 1000;
      this.d.metrics.syncDuration.observe(sec);
      (full ? this.d.metrics.syncFullDuration : this.d.metrics.syncPartialDuration).observe(sec);
    }
  }

  /** The health check node ports of the changed Services (all on a full sync), with their local ready endpoints of any family. */
  private async syncServiceHealth(changed: Set<string> | undefined): Promise<void> {
    const hs = this.d.serviceHealth;
    if (!hs) return;
    const keys = new Set(changed ?? this.families.flatMap((f) => [...f.ports.keys()]));
    if (!changed) for (const k of hs.ports().keys()) keys.add(k);
    for (const svc of keys) {
      let port = 0;
      const ready = new Set<string>();
      for (const f of this.families) {
        const sps = f.ports.get(svc) ?? [];
        port ||= sps.find((sp) => sp.healthCheckNodePort)?.healthCheckNodePort ?? 0;
        for (const sp of sps)
          for (const e of f.endpoints.get(portKey(sp.service, sp.portName, sp.protocol)) ?? [])
            if (e.local && e.ready) ready.add(e.ip);
      }
      await hs.set(svc, port, ready.size);
    }
  }

  /**
   * Stale UDP conntrack entries (upstream's rule, see conntrack.ts) of one family's changed Services, all of them on
   * a full sync (so a restart catches up), and of those whose cleanup failed before.
   */
  private async cleanConntrack(f: FamilyState, changed: Set<string> | undefined): Promise<void> {
    const keys = new Set(changed ?? f.ports.keys());
    const retry = this.conntrackRetry.get(f.family) ?? new Set<string>();
    for (const k of retry) keys.add(k);
    const ports: UdpServicePort[] = [];
    for (const svc of keys) {
      for (const sp of f.ports.get(svc) ?? []) {
        if (sp.protocol !== 'UDP') continue;
        const eps = f.endpoints.get(portKey(sp.service, sp.portName, sp.protocol)) ?? [];
        ports.push({
          ips: [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs],
          port: sp.port,
          nodePort: sp.nodePort,
          serving: new Set(eps.filter((e) => e.serving).map((e) => e.ip)),
        });
      }
    }
    retry.clear();
    if (!ports.some((p) => p.serving.size)) return;
    const failed = (e: Error): void => {
      this.d.log.warn(`conntrack cleanup failed, retrying at the next sync: ${e.message}`);
      for (const k of keys) retry.add(k);
      this.conntrackRetry.set(f.family, retry);
    };
    let flows;
    try {
      flows = parseUdpFlows(await (this.d.conntrackList ?? conntrackListUdp)(f.family));
    } catch (e) {
      return failed(e as Error);
    }
    for (const filter of staleUdpFilters(flows, ports)) {
      const args = [...filter, ...conntrackFamily(f.family)];
      try {
        const n = await (this.d.conntrack ?? conntrackDelete)(args);
        if (n) this.d.log.info(`deleted ${n} stale UDP conntrack entr${n === 1 ? 'y' : 'ies'} (${args.join(' ')})`);
      } catch (e) {
        failed(e as Error);
      }
    }
  }
}
