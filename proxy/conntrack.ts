// Stale UDP conntrack entries, upstream's current rule (pkg/proxy/conntrack/
// cleanup.go): for a UDP service port that has serving endpoints, an entry
// whose original destination is one of its IPs and ports (cluster, external,
// LB IP, or the NodePort on any address) and whose reply comes from anything
// but a serving endpoint is stale: UDP has no connection to end, so the flow
// would keep going to a gone endpoint, or keep being rejected. Services
// without endpoints are left alone. Pure; the proxier runs the commands.
export interface UdpFlow {
  origDst: string;
  origDport: number;
  replySrc: string;
}

export interface UdpServicePort {
  /** Cluster IP, external IPs, load balancer IPs. */
  ips: string[];
  port: number;
  nodePort: number;
  /** Serving endpoint IPs. */
  serving: Set<string>;
}

/** `conntrack -L -p udp` lines: the original tuple first, then the reply tuple. */
export function parseUdpFlows(text: string): UdpFlow[] {
  const out: UdpFlow[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('udp')) continue;
    const src = [...line.matchAll(/\bsrc=(\S+)/g)].map((m) => m[1]!);
    const dst = /\bdst=(\S+)/.exec(line)?.[1];
    const dport = /\bdport=(\d+)/.exec(line)?.[1];
    if (src.length < 2 || !dst || !dport) continue;
    out.push({ origDst: dst, origDport: Number(dport), replySrc: src[1]! });
  }
  return out;
}

/** The `conntrack -D` filters that remove the stale flows, one per distinct destination and reply source. */
export function staleUdpFilters(flows: UdpFlow[], ports: UdpServicePort[]): string[][] {
  const byDst = new Map<string, UdpServicePort>();
  const byNodePort = new Map<number, UdpServicePort>();
  for (const p of ports) {
    if (!p.serving.size) continue;
    for (const ip of p.ips) byDst.set(`${ip}:${p.port}`, p);
    if (p.nodePort) byNodePort.set(p.nodePort, p);
  }
  const out = new Map<string, string[]>();
  for (const f of flows) {
    const svc = byDst.get(`${f.origDst}:${f.origDport}`);
    if (svc && !svc.serving.has(f.replySrc)) {
      const args = [
        '-p',
        'udp',
        '--orig-dst',
        f.origDst,
        '--orig-port-dst',
        String(f.origDport),
        '--reply-src',
        f.replySrc,
      ];
      out.set(args.join(' '), args);
      continue;
    }
    const np = byNodePort.get(f.origDport);
    if (np && !np.serving.has(f.replySrc) && !svc) {
      const args = ['-p', 'udp', '--orig-port-dst', String(f.origDport), '--reply-src', f.replySrc];
      out.set(args.join(' '), args);
    }
  }
  return [...out.values()];
}
