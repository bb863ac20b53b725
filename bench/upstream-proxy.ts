// The upstream kube-proxy (the fixture npm run upstream -- build makes) as the
// proxy-sync benchmark runs it beside tskube's: the same apiserver, mode and
// sync periods, measured from the outside: its own sync timestamps and
// counters from its metrics endpoint, its RSS and CPU from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { type Sample, sample, scrape } from './prometheus.js';
import { childCpuSeconds, cpuSeconds, rssKiB } from './stats.js';

const METRICS = '127.0.0.1:10249';
const V4 = { ip_family: 'IPv4' };

/** A KubeProxyConfiguration with the settings tskube's proxy runs with in the benchmark. */
export function upstreamProxyConfig(kubeconfig: string, mode: 'nftables' | 'iptables'): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${kubeconfig}
mode: ${mode}
hostnameOverride: bench
clusterCIDR: 11.0.0.0/8
metricsBindAddress: ${METRICS}
healthzBindAddress: 127.0.0.1:10256
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  syncPeriod: 10m
  minSyncPeriod: 1s
nftables:
  syncPeriod: 10m
  minSyncPeriod: 1s
`;
}

/** The figures read from its metrics once a sync of the IPv4 proxier is done. */
export interface UpstreamSync {
  /** When it ended (wall-clock ms, its own timestamp). */
  at: number;
  /** Full syncs so far, and the seconds they took in all. */
  fullSyncs: number;
  fullSyncSec: number;
}

export class UpstreamProxy {
  readonly startedAt = Date.now();
  private readonly child: ChildProcess;

  /** Starts it with `dir` for its config and log; with `iptablesDir` first on PATH (iptables-legacy links). */
  constructor(binary: string, kubeconfig: string, mode: 'nftables' | 'iptables', dir: string, iptablesDir?: string) {
    const config = path.join(dir, 'kube-proxy.yaml');
    fs.writeFileSync(config, upstreamProxyConfig(kubeconfig, mode));
    const log = fs.openSync(path.join(dir, 'kube-proxy.log'), 'a');
    this.child = spawn(binary, [`--config=${config}`], {
      stdio: ['ignore', log, log],
      detached: true,
      env: { ...process.env, ...(iptablesDir ? { PATH: `${iptablesDir}:${process.env.PATH ?? ''}` } : {}) },
    });
    fs.closeSync(log);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private async metrics(): Promise<Map<string, Sample[]> | undefined> {
    if (this.exited)
      throw new Error(`the upstream kube-proxy exited (${this.child.exitCode ?? this.child.signalCode})`);
    return scrape(`http://${METRICS}/metrics`);
  }

  /**
   * Waits (polling its metrics every `everyMs`) for an IPv4 sync that ended after `after` (wall-clock ms) with no
   * endpoint or service change pending and, when given, more endpoint changes seen than `changesAbove`.
   */
  async syncAfter(after: number, timeoutMs: number, o: { changesAbove?: number; everyMs?: number } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = await this.metrics();
      const at = (m && sample(m, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', V4)?.value) ?? 0;
      // The change counters are the process's, without an IP family.
      const pending = (name: string): number => (m && sample(m, name)?.value) ?? 0;
      const changes = (m && sample(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_total')?.value) ?? 0;
      if (
        m &&
        at * 1000 > after &&
        pending('kubeproxy_sync_proxy_rules_endpoint_changes_pending') === 0 &&
        pending('kubeproxy_sync_proxy_rules_service_changes_pending') === 0 &&
        (o.changesAbove === undefined || changes > o.changesAbove)
      ) {
        const full = sample(m, 'kubeproxy_sync_full_proxy_rules_duration_seconds', V4);
        return { at: at * 1000, fullSyncs: full?.count ?? 0, fullSyncSec: full?.sum ?? 0, changes };
      }
      if (Date.now() > deadline) throw new Error(`the upstream kube-proxy did not sync within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, o.everyMs ?? 20));
    }
  }

  /** Endpoint changes it has seen so far. */
  async endpointChanges(): Promise<number> {
    const m = await this.metrics();
    return (m && sample(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_total')?.value) ?? 0;
  }

  usage(): { rssMiB: number; cpuMs: number; childCpuMs: number } {
    return {
      rssMiB: rssKiB(this.pid) / 1024,
      cpuMs: cpuSeconds(this.pid) * 1000,
      childCpuMs: childCpuSeconds(this.pid) * 1000,
    };
  }

  private get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const done = new Promise((r) => this.child.once('exit', r));
    process.kill(-this.pid, 'SIGKILL');
    await done;
  }
}

/** A directory whose iptables, iptables-save and iptables-restore (and ip6tables') are the legacy backend's (made once). */
export function legacyIptablesDir(dir: string): string {
  const bin = path.join(dir, 'iptables-legacy-bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const v of ['iptables', 'ip6tables'])
    for (const suffix of ['', '-save', '-restore'])
      if (!fs.existsSync(path.join(bin, `${v}${suffix}`)))
        fs.symlinkSync(`/usr/sbin/${v}-legacy${suffix}`, path.join(bin, `${v}${suffix}`));
  return bin;
}
