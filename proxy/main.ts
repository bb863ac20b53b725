// `tskube proxy`: wires the proxier to the apiserver, the kernel (iptables or
// nftables, conntrack, sysctls) and its health and metrics endpoints.
import fs from 'node:fs';
import os from 'node:os';

import { KubeClient } from '../kube/client.js';
import { ExecIptables, IPTABLES_BINARIES } from '../kube/iptables.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import type { Logger } from '../kube/log.js';
import type { ProxyBackend } from './backend.js';
import { cleanupIptables } from './cleanup.js';
import type { ProxyConfig } from './config.js';
import { applyConntrackSysctls, conntrackSysctls } from './conntrack-sysctls.js';
import { ProxyHealth } from './health.js';
import { IptablesBackend } from './iptables/backend.js';
import { ProxyMetrics } from './metrics.js';
import {
  cidrContains,
  IP_FAMILIES,
  type IPFamily,
  isUnspecified,
  nodeInternalIPs,
  primaryFamily,
} from './model/family.js';
import { localDetector } from './model/local-detector.js';
import { checkNftSupport, deleteNftTables, ExecNft } from './nftables/apply.js';
import { NftablesBackend } from './nftables/backend.js';
import { NetlinkNft } from './nftables/netlink-nft.js';
import type { RenderContext } from './nftables/render.js';
import { Proxier } from './proxier.js';
import { type Listening, serveHealth, serveMetrics } from './server.js';
import { ServiceHealthServer } from './service-health.js';

const ROUTE_LOCALNET = '/proc/sys/net/ipv4/conf/all/route_localnet';
const TCP_BE_LIBERAL = '/proc/sys/net/netfilter/nf_conntrack_tcp_be_liberal';

export interface RunningProxy {
  proxier: Proxier;
  stop(): Promise<void>;
}

/** `--cleanup`: both modes' rules of both families go; true if anything failed (upstream's exit status). */
export async function cleanupProxyRules(log: Logger): Promise<boolean> {
  let failed = false;
  for (const family of IP_FAMILIES) {
    const bin = IPTABLES_BINARIES[family];
    // A host without IPv6 (or without ip6tables) has no IPv6 rules to remove.
    if (family === 'IPv6' && !(await ipv6Usable('iptables'))) continue;
    try {
      for (const t of await cleanupIptables(new ExecIptables(bin)))
        log.info(`removed the iptables mode's rules from the ${bin.iptables} ${t} table`);
    } catch (e) {
      failed = true;
      log.error(`cleaning up ${bin.iptables} rules: ${(e as Error).message}`);
    }
  }
  for (const t of await deleteNftTables()) log.info(`removed nftables table ${t}`);
  return failed;
}

/** The addresses NodePorts accept in nftables mode: the node's IP ("primary"), or this host's addresses in the CIDRs. */
export function nodePortIPs(addresses: string[], nodeIP: string, local: string[]): string[] {
  if (addresses.includes('primary')) return nodeIP ? [nodeIP] : [];
  return local.filter((ip) => addresses.some((c) => cidrContains(c, ip)));
}

function localIPs(family: IPFamily): string[] {
  return Object.values(os.networkInterfaces()).flatMap((l) =>
    (l ?? []).filter((a) => a.family === family && !a.internal).map((a) => a.address),
  );
}

/**
 * Whether this host can carry the IPv6 side of a dual-stack proxy (upstream's platform check): the kernel has IPv6,
 * and the mode's tool can read the ip6 tables.
 */
export async function ipv6Usable(mode: 'iptables' | 'nftables'): Promise<boolean> {
  if (!fs.existsSync('/proc/net/if_inet6')) return false;
  if (mode === 'nftables') return true;
  return new ExecIptables(IPTABLES_BINARIES.IPv6).save('nat').then(
    () => true,
    () => false,
  );
}

/**
 * The mode's backend for each family this host can carry (IPv4 first: the primary), after removing the other mode's
 * rules (they would still catch traffic first). `ipt` picks the IPv4 iptables binaries (benchmarks compare the legacy
 * backend).
 */
export async function proxyBackends(
  cfg: ProxyConfig,
  o: { metrics: ProxyMetrics; log: Logger; conntrackTCPLiberal: boolean; ipt?: ExecIptables; primary?: IPFamily },
): Promise<ProxyBackend[]> {
  const { metrics, log } = o;
  const primary = o.primary ?? 'IPv4';
  const v6 = await ipv6Usable(cfg.mode);
  if (primary === 'IPv6' && !v6) throw new Error('no support for primary IP family "IPv6"');
  // IPv4 is always there on Linux; the primary family comes first.
  const families: IPFamily[] = v6 ? (primary === 'IPv6' ? ['IPv6', 'IPv4'] : ['IPv4', 'IPv6']) : ['IPv4'];
  if (families.length > 1) log.info(`kube-proxy running in dual-stack mode (primary ipFamily ${primary})`);
  else log.info(`kube-proxy running in single-stack mode (ipFamily ${primary})`);
  const ipt = (f: IPFamily): ExecIptables => (f === 'IPv4' && o.ipt ? o.ipt : new ExecIptables(IPTABLES_BINARIES[f]));
  const bit = 1 << cfg.masqueradeBit;
  const nodePorts = (f: IPFamily, nodeIP: string): string[] | undefined =>
    cfg.nodePortAddresses.length ? nodePortIPs(cfg.nodePortAddresses, nodeIP, localIPs(f)) : undefined;
  if (cfg.mode === 'nftables') {
    for (const f of families) {
      for (const t of await cleanupIptables(ipt(f)).catch(
        (e: Error) => (log.warn(`could not remove the iptables mode's rules: ${e.message}`), []),
      ))
        log.info(`removed the iptables mode's rules from the ${IPTABLES_BINARIES[f].iptables} ${t} table`);
    }
    const backends: ProxyBackend[] = [];
    for (const f of families) {
      const nftFamily = f === 'IPv4' ? 'ip' : 'ip6';
      const context = (nodeIP: string, nodeCIDR: string): RenderContext => {
        const detector = localDetector(cfg.detectLocal, nodeCIDR, f)?.nftables;
        return {
          family: nftFamily,
          masqueradeMark: `0x${bit.toString(16).padStart(6, '0')}`, // upstream's %#08x
          masqueradeAll: cfg.masqueradeAll,
          localMatch: detector?.local,
          notLocalMatch: detector?.notLocal,
          nodeIP: nodeIP || undefined,
          nodePortIPs: nodePorts(f, nodeIP),
          conntrackTCPLiberal: o.conntrackTCPLiberal,
        };
      };
      // Partial syncs go straight to the kernel over netlink (nft 1.0.x reads the whole ruleset on every run); full
      // syncs, and anything the encoder does not know, through nft.
      let nft: ExecNft | NetlinkNft = new ExecNft(nftFamily);
      if (process.env.TSKUBE_NFT_NETLINK !== '0') {
        const opened = await NetlinkNft.open(nft, nftFamily);
        if (opened.unavailable && f === 'IPv4')
          log.warn(`nftables: netlink socket unavailable (${opened.unavailable}); every sync runs nft`);
        nft = opened.nft;
      }
      backends.push(new NftablesBackend(nft, context, metrics, log));
    }
    return backends;
  }
  for (const t of await deleteNftTables()) log.info(`removed the nftables mode's table ${t}`);
  return families.map(
    (f) =>
      new IptablesBackend(
        ipt(f),
        {
          family: f,
          masqueradeMark: `0x${bit.toString(16).padStart(4, '0')}`,
          masqueradeAll: cfg.masqueradeAll,
          detectLocal: cfg.detectLocal,
          localhostNodePorts: cfg.localhostNodePorts,
          conntrackTCPLiberal: o.conntrackTCPLiberal,
          nodePortIPs: (nodeIP) => nodePorts(f, nodeIP),
        },
        metrics,
      ),
  );
}

/**
 * The Node's InternalIPs (upstream's node IPs), from one read of it; none when --bind-address already decides, or
 * when the Node is not registered yet (the primary family is then IPv4, as upstream without node IPs).
 */
async function nodeIPs(client: KubeClient, cfg: ProxyConfig, log: Logger): Promise<string[]> {
  if (!isUnspecified(cfg.bindAddress)) return [];
  try {
    const node = await client.request('GET', `/api/v1/nodes/${encodeURIComponent(cfg.nodeName)}`, { timeoutMs: 5000 });
    const ips = nodeInternalIPs(node);
    if (ips.length) log.info(`successfully retrieved node IP(s): ${ips.join(', ')}`);
    return ips;
  } catch (e) {
    log.info(
      `could not read node ${cfg.nodeName} for its IPs (${(e as Error).message}); its primary IP family is taken as IPv4`,
    );
    return [];
  }
}

export async function startProxy(cfg: ProxyConfig, log: Logger): Promise<RunningProxy> {
  if (cfg.mode === 'nftables') await checkNftSupport();
  if (cfg.localhostNodePorts && cfg.mode === 'iptables') {
    // NodePorts on 127.0.0.1 need route_localnet; the KUBE-FIREWALL rule closes the hole it opens (kubernetes/kubernetes#90259).
    log.info(
      'setting route_localnet=1 to allow node-ports on localhost; to change this set --iptables-localhost-nodeports=false',
    );
    fs.writeFileSync(ROUTE_LOCALNET, '1');
  }
  applyConntrackSysctls(conntrackSysctls(cfg.conntrack, os.cpus().length), log);
  let liberal = false;
  try {
    liberal = fs.readFileSync(TCP_BE_LIBERAL, 'utf8').trim() !== '0';
  } catch {
    /* no conntrack module loaded yet: not liberal */
  }
  const client = new KubeClient(loadKubeconfig(cfg.kubeconfig));
  const metrics = new ProxyMetrics();
  const health = new ProxyHealth(2 * cfg.syncPeriodMs);
  const servers: Listening[] = [];
  servers.push(await serveHealth(health, metrics, cfg.healthzBindAddress));
  servers.push(await serveMetrics(metrics, cfg.metricsBindAddress, cfg.mode));
  const backends = await proxyBackends(cfg, {
    metrics,
    log,
    conntrackTCPLiberal: liberal,
    primary: primaryFamily(await nodeIPs(client, cfg, log), cfg.bindAddress),
  });
  const families = backends.map((b) => b.family);
  // Health check node ports listen where NodePorts are open: the configured addresses, else everywhere (in each
  // family the proxy programs).
  const serviceHealth = new ServiceHealthServer(
    () =>
      cfg.nodePortAddresses.length && !cfg.nodePortAddresses.includes('primary')
        ? families.flatMap((f) => nodePortIPs(cfg.nodePortAddresses, '', localIPs(f)))
        : families.map((f) => (f === 'IPv4' ? '0.0.0.0' : '::')),
    () => health.state().healthy,
    log,
  );
  const proxier = new Proxier(
    {
      nodeName: cfg.nodeName,
      bindAddress: cfg.bindAddress,
      clusterCIDR: cfg.clusterCIDR || undefined,
      detectLocal: cfg.detectLocal,
      masqueradeAll: cfg.masqueradeAll,
      masqueradeBit: cfg.masqueradeBit,
      syncPeriodMs: cfg.syncPeriodMs,
      minSyncPeriodMs: cfg.minSyncPeriodMs,
      localhostNodePorts: cfg.localhostNodePorts,
      conntrackTCPLiberal: liberal,
    },
    { client, backends, log, metrics, health, serviceHealth },
  );
  if (cfg.detectLocal.mode === 'ClusterCIDR' && !cfg.clusterCIDR && !cfg.masqueradeAll)
    log.warn('--cluster-cidr is not set: traffic to cluster IPs from outside the cluster is not masqueraded');
  await proxier.start();
  return {
    proxier,
    stop: async () => {
      // Rules stay: traffic keeps flowing while kube-proxy restarts.
      await proxier.stop();
      await serviceHealth.close();
      await Promise.all(servers.map((s) => s.close()));
      client.close();
    },
  };
}
