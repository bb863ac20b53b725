// The conntrack sysctls kube-proxy sets from KubeProxyConfiguration.conntrack
// (upstream cmd/kube-proxy conntrack.go): the table size from maxPerCore and
// min, and the TCP and UDP timeouts; 0 leaves a setting alone. Only a larger
// nf_conntrack_max is written (it is global, and read-only outside the host's
// network namespace); the others are written when they differ.
import fs from 'node:fs';

import type { Logger } from '../kube/log.js';

export interface ConntrackConfig {
  maxPerCore: number;
  min: number;
  /** Seconds; 0 leaves it. */
  tcpEstablishedTimeout: number;
  tcpCloseWaitTimeout: number;
  tcpBeLiberal: boolean;
  udpTimeout: number;
  udpStreamTimeout: number;
}

/** Upstream's defaults (kubeproxy.config.k8s.io/v1alpha1). */
export const CONNTRACK_DEFAULTS: ConntrackConfig = {
  maxPerCore: 32768,
  min: 131072,
  tcpEstablishedTimeout: 86400,
  tcpCloseWaitTimeout: 3600,
  tcpBeLiberal: false,
  udpTimeout: 0,
  udpStreamTimeout: 0,
};

export interface Sysctl {
  name: string;
  value: number;
  /** Only raised, never lowered. */
  raiseOnly?: boolean;
}

export function conntrackSysctls(c: ConntrackConfig, cpus: number): Sysctl[] {
  const out: Sysctl[] = [];
  if (c.maxPerCore > 0)
    out.push({ name: 'nf_conntrack_max', value: Math.max(c.maxPerCore * cpus, c.min), raiseOnly: true });
  if (c.tcpEstablishedTimeout > 0)
    out.push({ name: 'nf_conntrack_tcp_timeout_established', value: c.tcpEstablishedTimeout });
  if (c.tcpCloseWaitTimeout > 0)
    out.push({ name: 'nf_conntrack_tcp_timeout_close_wait', value: c.tcpCloseWaitTimeout });
  if (c.tcpBeLiberal) out.push({ name: 'nf_conntrack_tcp_be_liberal', value: 1 });
  if (c.udpTimeout > 0) out.push({ name: 'nf_conntrack_udp_timeout', value: c.udpTimeout });
  if (c.udpStreamTimeout > 0) out.push({ name: 'nf_conntrack_udp_timeout_stream', value: c.udpStreamTimeout });
  return out;
}

/** Writes what needs writing under /proc/sys/net/netfilter; a setting that cannot be written is logged, not fatal. */
export function applyConntrackSysctls(wanted: Sysctl[], log: Logger, dir = '/proc/sys/net/netfilter'): void {
  for (const s of wanted) {
    const file = `${dir}/${s.name}`;
    let cur: number;
    try {
      cur = Number(fs.readFileSync(file, 'utf8').trim());
    } catch (e) {
      log.warn(`conntrack: cannot read ${file}: ${(e as Error).message}`);
      continue;
    }
    if (cur === s.value || (s.raiseOnly && cur >= s.value)) continue;
    try {
      fs.writeFileSync(file, String(s.value));
      log.info(`set sysctl net/netfilter/${s.name} to ${s.value}`);
    } catch (e) {
      log.warn(`conntrack: cannot set net/netfilter/${s.name} to ${s.value} (now ${cur}): ${(e as Error).message}`);
    }
  }
}
