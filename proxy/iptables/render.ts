// The iptables ruleset for a snapshot of service ports and endpoints, as
// upstream kube-proxy's syncProxyRules writes it: the *filter and *nat text
// for one `iptables-restore --noflush`. Pure: same input, same text.
// A partial render (`changed` set) writes the top-level chains in full but
// the per-service chains only of the services that changed.
import { categorize, trafficPlan } from '../model/categorize.js';
import { type Endpoint, portKey } from '../model/endpoints.js';
import { cidrContains, type IPFamily, loopback } from '../model/family.js';
import type { ServicePort } from '../model/service-port.js';
import * as C from './chains.js';

export interface RenderInput {
  /** The family of every address here: ip6tables-restore input for IPv6. Default IPv4. */
  family?: IPFamily;
  services: ServicePort[];
  /** Endpoints by portKey(service, portName, protocol). */
  endpoints: Map<string, Endpoint[]>;
  /** "0x4000" for masquerade bit 14. */
  masqueradeMark: string;
  masqueradeAll: boolean;
  /** --cluster-cidr: traffic from outside it is masqueraded (the local traffic detector, when `localDetector` is not given). */
  clusterCIDR?: string;
  /** The local traffic detector's matches (--detect-local-mode). */
  localDetector?: { local: string[]; notLocal: string[] };
  /** The node's IP, for loadBalancerSourceRanges that include it. */
  nodeIP?: string;
  /** --nodeport-addresses resolved to this node's IPs; undefined: every local address. */
  nodePortIPs?: string[];
  localhostNodePorts: boolean;
  /** nf_conntrack_tcp_be_liberal is set: no DROP of INVALID packets. */
  conntrackTCPLiberal: boolean;
  randomFully: boolean;
  /** Partial sync: only these Services ("ns/name") get their SVC/SVL/EXT/FW/SEP chains written. */
  changed?: Set<string>;
  /** NAT chains present now; ours that are no longer used are flushed and deleted. */
  existingNatChains?: Iterable<string>;
  /** A partial render's memory of unchanged Services' chains (from the last render's `perService`): they are not built again. */
  perService?: ReadonlyMap<string, ServiceChains>;
}

/** What one Service's per-service chains came to: their names and NAT rule count. */
export interface ServiceChains {
  chains: string[];
  natRules: number;
}

export interface RenderOutput {
  text: string;
  filterRules: number;
  /** NAT rules written in this restore. */
  natRules: number;
  /** NAT rules in the whole ruleset, written or not (kubeproxy_sync_proxy_rules_iptables_total). */
  natRulesTotal: number;
  activeNatChains: Set<string>;
  deletedChains: number;
  noLocalEndpointsInternal: number;
  noLocalEndpointsExternal: number;
  totalEndpoints: number;
  /** Every Service's per-service chains, for the next partial render. */
  perService: Map<string, ServiceChains>;
}

/** Upstream switches to "large cluster mode" (no per-endpoint comments) above this many endpoints. */
export const LARGE_CLUSTER_ENDPOINTS = 1000;

const quote = (s: string): string => `"${s}"`;

class Lines {
  readonly lines: string[] = [];
  count = 0;
  write(...words: (string | string[])[]): void {
    let line = '';
    for (const w of words) {
      if (typeof w === 'string') line += line ? ` ${w}` : w;
      else for (const x of w) line += line ? ` ${x}` : x;
    }
    this.lines.push(line);
    this.count++;
  }
}

/** Where the rules of services a partial sync leaves alone go: only counted, for the metrics. */
class Skipped extends Lines {
  override write(): void {
    this.count++;
  }
}

/** 1/n with 10 decimals, as %0.10f. */
export const probability = (n: number): string => (1 / n).toFixed(10);

export function renderIptables(i: RenderInput): RenderOutput {
  const filterChains = new Lines();
  const filterRules = new Lines();
  const natChains = new Lines();
  const natRules = new Lines();
  const skippedChains = new Skipped();
  const skippedRules = new Skipped();
  const mark = `${i.masqueradeMark}/${i.masqueradeMark}`;
  const detector =
    i.localDetector ??
    (i.clusterCIDR ? { local: ['-s', i.clusterCIDR], notLocal: ['!', '-s', i.clusterCIDR] } : undefined);

  for (const c of [C.KUBE_SERVICES, C.KUBE_EXTERNAL_SERVICES, C.KUBE_FORWARD, C.KUBE_NODEPORTS, C.KUBE_PROXY_FIREWALL])
    filterChains.write(`:${c} - [0:0]`);
  for (const c of [C.KUBE_SERVICES, C.KUBE_NODEPORTS, C.KUBE_POSTROUTING, C.KUBE_MARK_MASQ])
    natChains.write(`:${c} - [0:0]`);
  natRules.write('-A', C.KUBE_POSTROUTING, '-m', 'mark', '!', '--mark', mark, '-j', 'RETURN');
  natRules.write('-A', C.KUBE_POSTROUTING, '-j', 'MARK', '--xor-mark', i.masqueradeMark);
  natRules.write(
    '-A',
    C.KUBE_POSTROUTING,
    '-m',
    'comment',
    '--comment',
    quote('kubernetes service traffic requiring SNAT'),
    '-j',
    'MASQUERADE',
    ...(i.randomFully ? ['--random-fully'] : []),
  );
  natRules.write('-A', C.KUBE_MARK_MASQ, '-j', 'MARK', '--or-mark', i.masqueradeMark);
  const family = i.family ?? 'IPv4';
  // NodePorts on localhost need route_localnet, which only IPv4 has (upstream: IPv4 only).
  const localhostNodePorts = i.localhostNodePorts && family === 'IPv4';
  if (localhostNodePorts) {
    // kubelet's anti-martian rule for route_localnet (kubernetes/kubernetes#90259); written identically by both.
    filterChains.write(`:${C.KUBE_FIREWALL} - [0:0]`);
    filterRules.write(
      '-A',
      C.KUBE_FIREWALL,
      '-m',
      'comment',
      '--comment',
      quote('block incoming localnet connections'),
      '-d',
      '127.0.0.0/8',
      '!',
      '-s',
      '127.0.0.0/8',
      '-m',
      'conntrack',
      '!',
      '--ctstate',
      'RELATED,ESTABLISHED,DNAT',
      '-j',
      'DROP',
    );
  }

  const active = new Set<string>();
  const services = [...i.services].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol < b.protocol ? -1 : a.protocol > b.protocol ? 1 : 0,
  );
  const eps = (sp: ServicePort): Endpoint[] => i.endpoints.get(portKey(sp.service, sp.portName, sp.protocol)) ?? [];
  const totalEndpoints = services.reduce((n, sp) => n + eps(sp).length, 0);
  const large = totalEndpoints > LARGE_CLUSTER_ENDPOINTS;
  const comment = (s: string): string[] => (large ? [] : ['-m', 'comment', '--comment', s]);
  let noLocalInternal = 0;
  let noLocalExternal = 0;
  const perService = new Map<string, ServiceChains>();
  const reused = new Set<string>();

  for (const sp of services) {
    const proto = sp.protocol.toLowerCase();
    const name = sp.name;
    const cat = categorize(eps(sp), sp);
    const { cluster, local, reachable, hasAny } = cat;
    const hash = C.portProtoHash(name, proto);
    const svcChain = `KUBE-SVC-${hash}`;
    const svlChain = `KUBE-SVL-${hash}`;
    const extChain = `KUBE-EXT-${hash}`;
    const fwChain = `KUBE-FW-${hash}`;
    const sepNames = new Map<Endpoint, string>();
    const sepOf = (e: Endpoint): string => {
      let c = sepNames.get(e);
      if (c === undefined) sepNames.set(e, (c = C.sepChain(name, proto, e.addr)));
      return c;
    };
    const { usesCluster, usesLocal, hasInternal, hasExternal, usesExternal: usesExt } = trafficPlan(sp, cat);
    const internalChain = sp.internalPolicyLocal ? svlChain : svcChain;
    const externalPolicyChain = sp.externalPolicyLocal ? svlChain : svcChain;
    const usesFW = hasAny && sp.loadBalancerIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
    const lbChain = usesFW ? fwChain : extChain;
    let intTarget = '';
    let intComment = '';
    let extTarget = '';
    let extComment = '';
    if (!hasAny) {
      intTarget = extTarget = 'REJECT';
      intComment = extComment = quote(`${name} has no endpoints`);
    } else {
      if (!hasInternal) {
        intTarget = 'DROP';
        intComment = quote(`${name} has no local endpoints`);
        noLocalInternal++;
      }
      if (!hasExternal) {
        extTarget = 'DROP';
        extComment = quote(`${name} has no local endpoints`);
        noLocalExternal++;
      }
    }
    const match = (ip: string): string[] => ['-m', proto, '-p', proto, '-d', ip, '--dport', String(sp.port)];

    // Capture the cluster IP.
    if (hasInternal)
      natRules.write(
        '-A',
        C.KUBE_SERVICES,
        '-m',
        'comment',
        '--comment',
        quote(`${name} cluster IP`),
        match(sp.clusterIP),
        '-j',
        internalChain,
      );
    else
      filterRules.write(
        '-A',
        C.KUBE_SERVICES,
        '-m',
        'comment',
        '--comment',
        intComment,
        match(sp.clusterIP),
        '-j',
        intTarget,
      );
    // External IPs.
    for (const ip of sp.externalIPs) {
      if (hasAny)
        natRules.write(
          '-A',
          C.KUBE_SERVICES,
          '-m',
          'comment',
          '--comment',
          quote(`${name} external IP`),
          match(ip),
          '-j',
          extChain,
        );
      if (!hasExternal)
        filterRules.write(
          '-A',
          C.KUBE_EXTERNAL_SERVICES,
          '-m',
          'comment',
          '--comment',
          extComment,
          match(ip),
          '-j',
          extTarget,
        );
    }
    // Load balancer IPs.
    for (const ip of sp.loadBalancerIPs) {
      if (hasAny)
        natRules.write(
          '-A',
          C.KUBE_SERVICES,
          '-m',
          'comment',
          '--comment',
          quote(`${name} loadbalancer IP`),
          match(ip),
          '-j',
          lbChain,
        );
      if (usesFW)
        filterRules.write(
          '-A',
          C.KUBE_PROXY_FIREWALL,
          '-m',
          'comment',
          '--comment',
          quote(`${name} traffic not accepted by ${fwChain}`),
          match(ip),
          '-j',
          'DROP',
        );
    }
    if (!hasExternal)
      for (const ip of sp.loadBalancerIPs)
        filterRules.write(
          '-A',
          C.KUBE_EXTERNAL_SERVICES,
          '-m',
          'comment',
          '--comment',
          extComment,
          match(ip),
          '-j',
          extTarget,
        );
    // NodePorts (not subject to loadBalancerSourceRanges).
    if (sp.nodePort) {
      if (hasAny)
        natRules.write(
          '-A',
          C.KUBE_NODEPORTS,
          '-m',
          'comment',
          '--comment',
          name,
          '-m',
          proto,
          '-p',
          proto,
          '--dport',
          String(sp.nodePort),
          '-j',
          extChain,
        );
      if (!hasExternal)
        filterRules.write(
          '-A',
          C.KUBE_EXTERNAL_SERVICES,
          '-m',
          'comment',
          '--comment',
          extComment,
          '-m',
          'addrtype',
          '--dst-type',
          'LOCAL',
          '-m',
          proto,
          '-p',
          proto,
          '--dport',
          String(sp.nodePort),
          '-j',
          extTarget,
        );
    }
    if (sp.healthCheckNodePort)
      filterRules.write(
        '-A',
        C.KUBE_NODEPORTS,
        '-m',
        'comment',
        '--comment',
        quote(`${name} health check node port`),
        '-m',
        'tcp',
        '-p',
        'tcp',
        '--dport',
        String(sp.healthCheckNodePort),
        '-j',
        'ACCEPT',
      );

    // Per-service chains: only for changed services in a partial sync (still counted and kept active).
    const skip = i.changed !== undefined && !i.changed.has(sp.service);
    const known = skip ? i.perService?.get(sp.service) : undefined;
    if (known) {
      // Remembered from an earlier render: counted and kept active without building them again.
      if (!reused.has(sp.service)) {
        reused.add(sp.service);
        perService.set(sp.service, known);
        for (const c of known.chains) active.add(c);
        skippedRules.count += known.natRules;
      }
      continue;
    }
    let mine = perService.get(sp.service);
    if (!mine) perService.set(sp.service, (mine = { chains: [], natRules: 0 }));
    const own = mine;
    const chains = skip ? skippedChains : natChains;
    const sink = skip ? skippedRules : natRules;
    const rules = {
      write: (...words: (string | string[])[]): void => {
        own.natRules++;
        sink.write(...words);
      },
    };
    const declare = (c: string): void => {
      chains.write(`:${c} - [0:0]`);
      active.add(c);
      own.chains.push(c);
    };

    if (hasInternal) {
      const args = ['-m', 'comment', '--comment', quote(`${name} cluster IP`), ...match(sp.clusterIP)];
      if (i.masqueradeAll) rules.write('-A', internalChain, args, '-j', C.KUBE_MARK_MASQ);
      else if (detector) rules.write('-A', internalChain, args, detector.notLocal, '-j', C.KUBE_MARK_MASQ);
    }
    if (usesExt) {
      declare(extChain);
      if (!sp.externalPolicyLocal) {
        rules.write(
          '-A',
          extChain,
          '-m',
          'comment',
          '--comment',
          quote(`masquerade traffic for ${name} external destinations`),
          '-j',
          C.KUBE_MARK_MASQ,
        );
      } else {
        if (detector)
          rules.write(
            '-A',
            extChain,
            '-m',
            'comment',
            '--comment',
            quote(`pod traffic for ${name} external destinations`),
            detector.local,
            '-j',
            svcChain,
          );
        rules.write(
          '-A',
          extChain,
          '-m',
          'comment',
          '--comment',
          quote(`masquerade LOCAL traffic for ${name} external destinations`),
          '-m',
          'addrtype',
          '--src-type',
          'LOCAL',
          '-j',
          C.KUBE_MARK_MASQ,
        );
        rules.write(
          '-A',
          extChain,
          '-m',
          'comment',
          '--comment',
          quote(`route LOCAL traffic for ${name} external destinations`),
          '-m',
          'addrtype',
          '--src-type',
          'LOCAL',
          '-j',
          svcChain,
        );
      }
      if (hasExternal) rules.write('-A', extChain, '-j', externalPolicyChain);
    }
    if (usesFW) {
      declare(fwChain);
      const fwArgs = ['-A', fwChain, '-m', 'comment', '--comment', quote(`${name} loadbalancer IP`)];
      let fromNode = false;
      for (const cidr of sp.loadBalancerSourceRanges) {
        rules.write(fwArgs, '-s', cidr, '-j', extChain);
        if (i.nodeIP && cidrContains(cidr, i.nodeIP)) fromNode = true;
      }
      if (fromNode) for (const ip of sp.loadBalancerIPs) rules.write(fwArgs, '-s', ip, '-j', extChain);
      rules.write(
        '-A',
        fwChain,
        '-m',
        'comment',
        '--comment',
        quote(`other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL`),
      );
    }
    const toEndpoints = (chain: string, list: Endpoint[]): void => {
      declare(chain);
      if (sp.stickySeconds) {
        for (const e of list) {
          const sep = sepOf(e);
          rules.write(
            '-A',
            chain,
            comment(quote(`${name} -> ${e.addr}`)),
            '-m',
            'recent',
            '--name',
            sep,
            '--rcheck',
            '--seconds',
            String(sp.stickySeconds),
            '--reap',
            '-j',
            sep,
          );
        }
      }
      list.forEach((e, n) => {
        const prob =
          n < list.length - 1
            ? ['-m', 'statistic', '--mode', 'random', '--probability', probability(list.length - n)]
            : [];
        rules.write('-A', chain, comment(quote(`${name} -> ${e.addr}`)), prob, '-j', sepOf(e));
      });
    };
    if (usesCluster) toEndpoints(svcChain, cluster);
    if (usesLocal) toEndpoints(svlChain, local);
    for (const e of reachable) {
      const sep = sepOf(e);
      declare(sep);
      rules.write('-A', sep, comment(name), '-s', e.ip, '-j', C.KUBE_MARK_MASQ);
      rules.write(
        '-A',
        sep,
        comment(name),
        sp.stickySeconds ? ['-m', 'recent', '--name', sep, '--set'] : [],
        '-m',
        proto,
        '-p',
        proto,
        '-j',
        'DNAT',
        '--to-destination',
        e.addr,
      );
    }
  }

  // Chains of ours that nothing uses any more: a chain line flushes, -X deletes.
  let deletedChains = 0;
  for (const c of [...new Set(i.existingNatChains ?? [])].sort()) {
    if (!C.isServiceChain(c) || active.has(c)) continue;
    natChains.write(`:${c} - [0:0]`);
    natRules.write('-X', c);
    deletedChains++;
  }

  // Last in KUBE-SERVICES: NodePorts on any local address (not loopback unless localhost NodePorts are on).
  const lastComment = [
    '-m',
    'comment',
    '--comment',
    quote('kubernetes service nodeports; NOTE: this must be the last rule in this chain'),
  ];
  if (i.nodePortIPs === undefined)
    natRules.write(
      '-A',
      C.KUBE_SERVICES,
      lastComment,
      '-m',
      'addrtype',
      '--dst-type',
      'LOCAL',
      localhostNodePorts ? [] : ['!', '-d', loopback(family)],
      '-j',
      C.KUBE_NODEPORTS,
    );
  // --nodeport-addresses: one rule per address of this node it selects (loopback ones never, as upstream).
  else
    for (const ip of i.nodePortIPs)
      if (!cidrContains(loopback(family), ip))
        natRules.write('-A', C.KUBE_SERVICES, lastComment, '-d', ip, '-j', C.KUBE_NODEPORTS);
  if (!i.conntrackTCPLiberal)
    filterRules.write('-A', C.KUBE_FORWARD, '-m', 'conntrack', '--ctstate', 'INVALID', '-j', 'DROP');
  filterRules.write(
    '-A',
    C.KUBE_FORWARD,
    '-m',
    'comment',
    '--comment',
    quote('kubernetes forwarding rules'),
    '-m',
    'mark',
    '--mark',
    mark,
    '-j',
    'ACCEPT',
  );
  filterRules.write(
    '-A',
    C.KUBE_FORWARD,
    '-m',
    'comment',
    '--comment',
    quote('kubernetes forwarding conntrack rule'),
    '-m',
    'conntrack',
    '--ctstate',
    'RELATED,ESTABLISHED',
    '-j',
    'ACCEPT',
  );

  const text = [
    '*filter',
    ...filterChains.lines,
    ...filterRules.lines,
    'COMMIT',
    '*nat',
    ...natChains.lines,
    ...natRules.lines,
    'COMMIT',
    '',
  ].join('\n');
  return {
    text,
    filterRules: filterRules.lines.length,
    natRules: natRules.lines.length - deletedChains,
    natRulesTotal: natRules.count + skippedRules.count - deletedChains,
    activeNatChains: active,
    deletedChains,
    noLocalEndpointsInternal: noLocalInternal,
    noLocalEndpointsExternal: noLocalExternal,
    totalEndpoints,
    perService,
  };
}
