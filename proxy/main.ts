// `tskube proxy`: wires the proxier to the apiserver, the kernel (iptables,
// conntrack, sysctls) and its health and metrics endpoints.
import fs from 'node:fs';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import type { Logger } from '../kube/log.js';
import type { ProxyConfig } from '../cli/proxy-config.js';
import { Proxier } from './proxier.js';
import { ProxyMetrics } from './metrics.js';
import { ProxyHealth } from './health.js';
import { ExecIptables } from './iptables/apply.js';
import { serveHealth, serveMetrics, type Listening } from './server.js';

const ROUTE_LOCALNET = '/proc/sys/net/ipv4/conf/all/route_localnet';
const TCP_BE_LIBERAL = '/proc/sys/net/netfilter/nf_conntrack_tcp_be_liberal';

export interface RunningProxy {
  proxier: Proxier;
  stop(): Promise<void>;
}

export async function startProxy(cfg: ProxyConfig, log: Logger): Promise<RunningProxy> {
  if (cfg.localhostNodePorts) {
    // NodePorts on 127.0.0.1 need route_localnet; the KUBE-FIREWALL rule closes the hole it opens (issue 90259).
    log.info('setting route_localnet=1 to allow node-ports on localhost; to change this set --iptables-localhost-nodeports=false');
    fs.writeFileSync(ROUTE_LOCALNET, '1');
  }
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
  const proxier = new Proxier(
    { nodeName: cfg.nodeName, clusterCIDR: cfg.clusterCIDR || undefined, masqueradeAll: cfg.masqueradeAll, masqueradeBit: cfg.masqueradeBit, syncPeriodMs: cfg.syncPeriodMs, minSyncPeriodMs: cfg.minSyncPeriodMs, localhostNodePorts: cfg.localhostNodePorts, conntrackTCPLiberal: liberal },
    { client, ipt: new ExecIptables(), log, metrics, health },
  );
  if (!cfg.clusterCIDR && !cfg.masqueradeAll) log.warn('--cluster-cidr is not set: traffic to cluster IPs from outside the cluster is not masqueraded');
  await proxier.start();
  return {
    proxier,
    stop: async () => {
      // Rules stay: traffic keeps flowing while kube-proxy restarts.
      await proxier.stop();
      await Promise.all(servers.map((s) => s.close()));
      client.close();
    },
  };
}
