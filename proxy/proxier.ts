// The iptables proxier: informers on Services and EndpointSlices feed change
// tracking; syncs are debounced (minSyncPeriod, burst 2) and render the
// ruleset from a snapshot, applied with one iptables-restore. Full syncs (jump
// rules, stale chain cleanup, every chain) run at start, after a failure and
// every syncPeriod; in between only changed services' chains are rewritten.
// Nothing is flushed on start or stop: old rules keep working meanwhile.
import type { Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { KObj, KubeApi } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import type { Logger } from '../kube/log.js';
import { endpointsOfSlices, LABEL_SERVICE_NAME, portKey, type Endpoint } from './model/endpoints.js';
import { servicePorts, type ServicePort } from './model/service-port.js';
import { categorize } from './model/categorize.js';
import { renderIptables } from './iptables/render.js';
import { JUMP_RULES, jumpArgs } from './iptables/chains.js';
import { chainsInSave, conntrackDelete, RestoreError, type Iptables } from './iptables/apply.js';
import type { ProxyMetrics } from './metrics.js';
import type { ProxyHealth } from './health.js';
import { SyncRunner } from './sync-runner.js';

export interface ProxierConfig {
  nodeName: string;
  /** --cluster-cidr; without it, off-cluster traffic to cluster IPs is not masqueraded. */
  clusterCIDR?: string;
  masqueradeAll: boolean;
  masqueradeBit: number;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  localhostNodePorts: boolean;
  conntrackTCPLiberal: boolean;
}

export interface ProxierDeps {
  client: KubeApi;
  ipt: Iptables;
  log: Logger;
  metrics: ProxyMetrics;
  health: ProxyHealth;
  /** conntrack -D (swapped out in unit tests). */
  conntrack?: (args: string[]) => Promise<number>;
}

/** Upstream's informer selectors: Services for another proxy, and headless ones, are not ours. */
const NOT_OURS = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';
const TRIGGER_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

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
  private activeChains = new Set<string>();
  /** UDP service ports' serving endpoint IPs at the last sync, for conntrack cleanup. */
  private lastUdp = new Map<string, { sp: ServicePort; ips: Set<string> }>();
  private nodeIP = '';
  private readonly runner: SyncRunner;
  private fullTimer: NodeJS.Timeout | undefined;
  private readonly mark: string;
  syncs = 0;
  fullSyncs = 0;
  /** Time of the last successful sync and the render/restore split of it, for benchmarks. */
  lastSync = { at: 0, renderMs: 0, applyMs: 0, full: false, bytes: 0 };

  constructor(
    private readonly cfg: ProxierConfig,
    private readonly d: ProxierDeps,
  ) {
    this.mark = `0x${(1 << cfg.masqueradeBit).toString(16).padStart(4, '0')}`;
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
    this.d.log.info(`services and endpoint slices synced (${this.ports.size} services); programming iptables`);
    await this.sync();
    this.fullTimer = setInterval(() => {
      this.needFullSync = true;
      this.request();
    }, this.cfg.syncPeriodMs);
    this.fullTimer.unref();
  }

  /** Stops watching; the rules stay in the kernel. */
  async stop(): Promise<void> {
    if (this.fullTimer) clearInterval(this.fullTimer);
    this.runner.stop();
    await Promise.all([this.services.stop(), this.slices.stop(), this.node.stop()]);
  }

  private request(): void {
    this.d.health.queued();
    this.d.metrics.lastQueued.setToCurrentTime();
    if (this.initialized) this.runner.run();
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
    if (ip !== this.nodeIP) {
      this.nodeIP = ip;
      this.needFullSync = true;
      this.request();
    }
  }

  private async ensureJumps(): Promise<void> {
    for (const j of JUMP_RULES) {
      await this.d.ipt.ensureChain(j.table, j.dst);
      await this.d.ipt.ensureRule(j.table, j.src, jumpArgs(j));
    }
  }

  /** One syncProxyRules. */
  async sync(): Promise<void> {
    if (!this.initialized) return;
    const t0 = performance.now();
    const full = this.needFullSync;
    const changed = this.changed;
    const triggers = this.triggers;
    this.changed = new Set();
    this.triggers = new Map();
    this.pendingServices = this.pendingEndpoints = 0;
    this.d.metrics.serviceChangesPending.set(0);
    this.d.metrics.endpointChangesPending.set(0);
    const services = [...this.ports.values()].flat();
    let renderMs = 0;
    try {
      let existing: Iterable<string> = this.activeChains;
      if (full) {
        await this.ensureJumps();
        existing = chainsInSave(await this.d.ipt.save('nat'));
      }
      const r0 = performance.now();
      const out = renderIptables({
        services,
        endpoints: this.endpoints,
        masqueradeMark: this.mark,
        masqueradeAll: this.cfg.masqueradeAll,
        clusterCIDR: this.cfg.clusterCIDR,
        nodeIP: this.nodeIP,
        localhostNodePorts: this.cfg.localhostNodePorts,
        conntrackTCPLiberal: this.cfg.conntrackTCPLiberal,
        randomFully: true,
        changed: full ? undefined : changed,
        existingNatChains: existing,
      });
      const a0 = performance.now();
      renderMs = a0 - r0;
      await this.d.ipt.restore(out.text);
      const applyMs = performance.now() - a0;
      this.activeChains = out.activeNatChains;
      this.needFullSync = false;
      this.syncs++;
      if (full) {
        this.fullSyncs++;
      }
      this.lastSync = { at: Date.now(), renderMs, applyMs, full, bytes: out.text.length };
      const m = this.d.metrics;
      m.rulesTotal.set({ table: 'filter' }, out.filterRules);
      m.rulesLast.set({ table: 'filter' }, out.filterRules);
      m.rulesTotal.set({ table: 'nat' }, out.natRulesTotal);
      m.rulesLast.set({ table: 'nat' }, out.natRules);
      m.noLocalEndpoints.set({ traffic_policy: 'internal' }, out.noLocalEndpointsInternal);
      m.noLocalEndpoints.set({ traffic_policy: 'external' }, out.noLocalEndpointsExternal);
      m.lastSync.setToCurrentTime();
      for (const ts of triggers.values()) for (const t of ts) m.networkProgramming.observe(Math.max(0, Date.now() - t) / 1000);
      this.d.health.updated();
      this.d.log.debug(`synced iptables (${full ? 'full' : `partial, ${changed.size} service(s)`}): ${services.length} service ports, ${out.totalEndpoints} endpoints, render ${renderMs.toFixed(1)} ms, restore ${applyMs.toFixed(1)} ms`);
      await this.cleanConntrack(services);
    } catch (e) {
      const err = e as Error;
      if (err instanceof RestoreError) this.d.log.error(`failed to execute iptables-restore, keeping the previous rules: ${err.message}${err.context ? `\n${err.context}` : ''}`);
      else this.d.log.error(`sync of proxy rules failed: ${err.message}`);
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

  /**
   * UDP has no connection to end: an entry for an endpoint that went away keeps sending replies nowhere.
   * Delete entries towards removed endpoints, and entries to services that just got endpoints
   * (packets to them were rejected before).
   */
  private async cleanConntrack(services: ServicePort[]): Promise<void> {
    const del = this.d.conntrack ?? conntrackDelete;
    const now = new Map<string, { sp: ServicePort; ips: Set<string> }>();
    for (const sp of services) {
      if (sp.protocol !== 'UDP') continue;
      const key = portKey(sp.service, sp.portName, sp.protocol);
      const c = categorize(this.endpoints.get(key) ?? [], sp);
      now.set(key, { sp, ips: new Set(c.reachable.map((e) => e.ip)) });
    }
    const jobs: string[][] = [];
    for (const [key, prev] of this.lastUdp) {
      const cur = now.get(key);
      const dsts = [prev.sp.clusterIP, ...prev.sp.externalIPs, ...prev.sp.loadBalancerIPs];
      for (const ip of prev.ips) {
        if (cur?.ips.has(ip)) continue;
        for (const dst of dsts) jobs.push(['-p', 'udp', '--orig-dst', dst, '--dst-nat', ip]);
        if (prev.sp.nodePort) jobs.push(['-p', 'udp', '--orig-port-dst', String(prev.sp.nodePort), '--dst-nat', ip]);
      }
    }
    for (const [key, cur] of now) {
      if (cur.ips.size && !this.lastUdp.get(key)?.ips.size) for (const dst of [cur.sp.clusterIP, ...cur.sp.externalIPs, ...cur.sp.loadBalancerIPs]) jobs.push(['-p', 'udp', '--orig-dst', dst]);
    }
    this.lastUdp = now;
    for (const args of jobs) {
      try {
        const n = await del(args);
        if (n) this.d.log.info(`deleted ${n} stale UDP conntrack entr${n === 1 ? 'y' : 'ies'} (${args.join(' ')})`);
      } catch (e) {
        this.d.log.warn(`conntrack cleanup failed: ${(e as Error).message}`);
      }
    }
  }
}
