// The pod's DNS settings sent to CRI (PodSandboxConfig.dns_config), as
// upstream's kubelet (pkg/kubelet/network/dns): dnsPolicy ClusterFirst (the
// default) uses clusterDNS with the cluster search path and ndots:5, unless the
// pod is on the host network; Default copies the node's resolv.conf; None starts
// empty; spec.dnsConfig is merged on top; limits trim what does not fit. Pure:
// the caller reads resolv.conf and records the events.
import type { Pod } from 'kubernetes-types/core/v1.js';

export interface DnsConfig {
  servers: string[];
  searches: string[];
  options: string[];
}

/** What the kubelet knows: clusterDNS, clusterDomain, the parsed --resolv-conf (undefined when the flag is ""), node IPs. */
export interface DnsSettings {
  clusterDNS: string[];
  clusterDomain: string;
  host: DnsConfig | undefined;
  nodeIPs: string[];
}

export interface DnsEvent {
  on: 'pod' | 'node';
  reason: 'MissingClusterDNS' | 'DNSConfigForming';
  message: string;
}

/** Upstream's validation limits (ExpandedDNSConfig, GA since 1.28). */
export const MAX_NAMESERVERS = 3;
export const MAX_SEARCH_PATHS = 32;
export const MAX_SEARCH_CHARS = 2048;
const MAX_SEARCH_PATH_LENGTH = 253;

/** resolv.conf: nameservers accumulate; the last `search` and the last `options` line win; trailing dots go. */
export function parseResolvConf(text: string): DnsConfig {
  const out: DnsConfig = { servers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t.startsWith('#')) continue;
    const f = t.split(/\s+/).filter(Boolean);
    if (!f.length) continue;
    if (f[0] === 'nameserver' && f[1]) out.servers.push(f[1]);
    if (f[0] === 'search')
      out.searches = f
        .slice(1)
        .filter((s) => s !== '.')
        .map((s) => s.replace(/\.$/, ''));
    if (f[0] === 'options') out.options = f.slice(1);
  }
  return out;
}

export const SYSTEMD_RESOLVED_CONF = '/run/systemd/resolve/resolv.conf';
const loopback = (ip: string): boolean => /^127\./.test(ip) || ip === '::1';

/**
 * The resolv.conf to give pods. A stub resolver on loopback (systemd-resolved's 127.0.0.53) cannot be reached from a
 * pod's network namespace; as kubeadm does, the default /etc/resolv.conf is then replaced by systemd-resolved's own
 * list of upstream servers when that has any. `read` returns a file's text, or undefined when it cannot be read.
 */
export function effectiveResolvConf(
  file: string,
  read: (f: string) => string | undefined,
): { file: string; warning?: string } {
  if (!file) return { file };
  const text = read(file);
  if (text === undefined) return { file };
  const servers = parseResolvConf(text).servers;
  if (servers.length === 0 || !servers.every(loopback)) return { file };
  const alt = file === '/etc/resolv.conf' ? read(SYSTEMD_RESOLVED_CONF) : undefined;
  const altServers = alt === undefined ? [] : parseResolvConf(alt).servers;
  if (altServers.length && !altServers.every(loopback)) {
    return {
      file: SYSTEMD_RESOLVED_CONF,
      warning: `resolvConf ${file} lists only the local stub resolver ${servers.join(', ')}, which pods cannot reach; using ${SYSTEMD_RESOLVED_CONF} instead, as kubeadm does (set resolvConf to choose another file)`,
    };
  }
  return {
    file,
    warning: `resolvConf ${file} lists only loopback nameservers (${servers.join(', ')}), which pods cannot reach: pods with dnsPolicy Default will not resolve names; point resolvConf at a file with reachable nameservers (with systemd-resolved: ${SYSTEMD_RESOLVED_CONF})`,
  };
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/** Options by name; the pod's override the base's, in first-seen order. */
function mergeOptions(base: string[], pod: { name?: string; value?: string }[]): string[] {
  const m = new Map<string, string>();
  for (const o of base) {
    const i = o.indexOf(':');
    m.set(i < 0 ? o : o.slice(0, i), i < 0 ? '' : o.slice(i + 1));
  }
  for (const o of pod) if (o.name) m.set(o.name, o.value ?? '');
  return [...m].map(([k, v]) => (v ? `${k}:${v}` : k));
}

/** upstream's format.Pod: name_namespace(uid). */
const podName = (pod: Pod): string =>
  `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}(${pod.metadata?.uid ?? ''})`;

export function podDnsConfig(pod: Pod, s: DnsSettings): { config: DnsConfig; events: DnsEvent[] } {
  const events: DnsEvent[] = [];
  const spec = pod.spec ?? { containers: [] };
  const policy = spec.dnsPolicy ?? 'ClusterFirst';
  const host: DnsConfig = s.host
    ? { servers: [...s.host.servers], searches: [...s.host.searches], options: [...s.host.options] }
    : { servers: [], searches: [], options: [] };
  let kind: 'cluster' | 'host' | 'none' =
    policy === 'None'
      ? 'none'
      : policy === 'Default' || (policy === 'ClusterFirst' && spec.hostNetwork)
        ? 'host'
        : 'cluster';
  let config: DnsConfig = host;
  if (kind === 'none') config = { servers: [], searches: [], options: [] };
  if (kind === 'cluster') {
    if (s.clusterDNS.length) {
      const clusterSearch = s.clusterDomain
        ? [`${pod.metadata?.namespace ?? 'default'}.svc.${s.clusterDomain}`, `svc.${s.clusterDomain}`, s.clusterDomain]
        : [];
      config = {
        servers: [...s.clusterDNS],
        searches: unique([...clusterSearch, ...host.searches]),
        options: ['ndots:5'],
      };
    } else {
      const msg =
        'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
      events.push(
        { on: 'node', reason: 'MissingClusterDNS', message: msg },
        { on: 'pod', reason: 'MissingClusterDNS', message: `pod: "${podName(pod)}". ${msg}` },
      );
      kind = 'host';
    }
  }
  if (kind === 'host' && !s.host) {
    // --resolv-conf="": the local machine's resolver, which effectively disables lookups in a pod.
    config.servers = s.nodeIPs.length ? s.nodeIPs.map((ip) => (ip.includes(':') ? '::1' : '127.0.0.1')) : ['127.0.0.1'];
    config.searches = ['.'];
  }
  const extra = spec.dnsConfig;
  if (extra) {
    config = {
      servers: unique([...config.servers, ...(extra.nameservers ?? [])]),
      searches: unique([...config.searches, ...(extra.searches ?? [])]),
      options: mergeOptions(config.options, extra.options ?? []),
    };
  }
  // Limits, as upstream: three nameservers; 32 search paths of at most 253 characters, 2048 characters in all.
  if (config.servers.length > MAX_NAMESERVERS) {
    config.servers = config.servers.slice(0, MAX_NAMESERVERS);
    events.push({
      on: 'pod',
      reason: 'DNSConfigForming',
      message: `Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: ${config.servers.join(' ')}`,
    });
  }
  let searches = config.searches;
  let trimmed = false;
  if (searches.length > MAX_SEARCH_PATHS) {
    searches = searches.slice(0, MAX_SEARCH_PATHS);
    trimmed = true;
  }
  const fit = searches.filter((x) => x.length <= MAX_SEARCH_PATH_LENGTH);
  trimmed ||= fit.length !== searches.length;
  searches = fit;
  while (searches.join(' ').length > MAX_SEARCH_CHARS) {
    searches = searches.slice(0, -1);
    trimmed = true;
  }
  if (trimmed)
    events.push({
      on: 'pod',
      reason: 'DNSConfigForming',
      message: `Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ${searches.join(' ')}`,
    });
  config.searches = searches;
  return { config, events };
}
