// Which records answer a question: the Kubernetes DNS-Based Service Discovery
// specification (schema 1.1.0) as CoreDNS's kubernetes plugin serves it with
// `pods insecure` and reverse-zone fallthrough. Pure: the zone data in, the
// sections and rcode out, or "forward" for names this server is not the authority for.
import net from 'node:net';

import type { Answer, Question } from 'dns-packet';

import {
  dashedIp,
  type Endpoint,
  endpointLabel,
  expandIPv6,
  type ServiceInfo,
  type ServicePort,
  type ZoneData,
} from './zone.js';

export const DNS_SCHEMA_VERSION = '1.1.0';
/** CoreDNS's kubernetes plugin default TTL. */
export const DEFAULT_TTL = 5;

export interface ZoneConfig {
  zone: string; // e.g. cluster.local, no trailing dot
  ttl: number;
  /** The addresses of this DNS service, for ns.dns.<zone> (the NS target). */
  dnsIPs: string[];
}

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface Reply {
  rcode: Rcode;
  authoritative: boolean;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

export type Resolution = { forward: true } | ({ forward: false } & Reply);

const norm = (n: string): string => n.toLowerCase().replace(/\.$/, '');

function soa(cfg: ZoneConfig, serial: number): Answer {
  return {
    type: 'SOA',
    name: cfg.zone,
    ttl: cfg.ttl,
    class: 'IN',
    data: {
      mname: `ns.dns.${cfg.zone}`,
      rname: `hostmaster.${cfg.zone}`,
      serial,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: cfg.ttl,
    },
  };
}

function reply(rcode: Rcode, answers: Answer[] = [], additionals: Answer[] = []): Resolution {
  return { forward: false, rcode, authoritative: true, answers, authorities: [], additionals };
}

/** IPv4 a-b-c-d or IPv6 with dashes for colons (and -- for ::), as pod names are written. */
function undashIp(label: string): string | undefined {
  const v4 = label.replace(/-/g, '.');
  if (net.isIPv4(v4)) return v4;
  const v6 = label.replace(/-/g, ':');
  return net.isIPv6(v6) ? v6 : undefined;
}

function addressRecords(name: string, ips: string[], qtype: string, ttl: number): Answer[] {
  const want = qtype === 'A' ? 4 : qtype === 'AAAA' ? 6 : qtype === 'ANY' ? 0 : -1;
  if (want < 0) return [];
  return ips
    .filter((ip) => want === 0 || net.isIP(ip) === want)
    .map((ip) => ({ type: net.isIPv4(ip) ? 'A' : 'AAAA', name, ttl, class: 'IN', data: ip }) as Answer);
}

/** The IP a reverse name stands for, or undefined when it is not a complete in-addr.arpa / ip6.arpa name. */
export function reverseNameToIp(name: string): string | undefined {
  const n = norm(name);
  if (n.endsWith('.in-addr.arpa')) {
    const parts = n.slice(0, -'.in-addr.arpa'.length).split('.');
    if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) < 256)) return undefined;
    return parts.reverse().map(Number).join('.');
  }
  if (n.endsWith('.ip6.arpa')) {
    const nibbles = n.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || !nibbles.every((x) => /^[0-9a-f]$/.test(x))) return undefined;
    const hex = nibbles.reverse().join('');
    return expandIPv6(hex.match(/.{4}/g)!.join(':'));
  }
  return undefined;
}

const isReverse = (n: string): boolean =>
  n.endsWith('.in-addr.arpa') || n.endsWith('.ip6.arpa') || n === 'in-addr.arpa' || n === 'ip6.arpa';

/** Decides the answer to one question. */
export function resolve(data: ZoneData, q: Question, cfg: ZoneConfig): Resolution {
  const name = norm(q.name);
  const zone = cfg.zone;
  if (isReverse(name)) return resolveReverse(data, name, q.type, cfg);
  if (name !== zone && !name.endsWith(`.${zone}`)) return { forward: true };
  // Inside the zone this server is the authority: every miss is final.
  const r = resolveInZone(data, name === zone ? [] : name.slice(0, -(zone.length + 1)).split('.'), q.type, cfg);
  if (r.rcode === 'NXDOMAIN' || (r.rcode === 'NOERROR' && r.answers.length === 0))
    r.authorities = [soa(cfg, data.modified)];
  return { forward: false, ...r };
}

function resolveReverse(data: ZoneData, name: string, qtype: string, cfg: ZoneConfig): Resolution {
  const ip = reverseNameToIp(name);
  const hits = ip ? data.reverse(ip) : [];
  // CoreDNS's fallthrough for in-addr.arpa and ip6.arpa: addresses the cluster does not know go upstream.
  if (hits.length === 0) return { forward: true };
  if (qtype !== 'PTR' && qtype !== 'ANY')
    return { ...reply('NOERROR'), authorities: [soa(cfg, data.modified)] } as Resolution;
  const answers = hits.map(
    ({ svc, endpoint }) =>
      ({
        type: 'PTR',
        name,
        ttl: cfg.ttl,
        class: 'IN',
        data: endpoint ? `${endpointLabel(endpoint)}.${svcName(svc, cfg)}` : svcName(svc, cfg),
      }) as Answer,
  );
  return reply('NOERROR', answers);
}

const svcName = (s: ServiceInfo, cfg: ZoneConfig): string => `${s.name}.${s.ns}.svc.${cfg.zone}`;

function resolveInZone(data: ZoneData, labels: string[], qtype: string, cfg: ZoneConfig): Reply {
  const ttl = cfg.ttl;
  const fqdn = labels.length ? `${labels.join('.')}.${cfg.zone}` : cfg.zone;
  const nodata = (): Reply => ({
    rcode: 'NOERROR',
    authoritative: true,
    answers: [],
    authorities: [],
    additionals: [],
  });
  const nx = (): Reply => ({ rcode: 'NXDOMAIN', authoritative: true, answers: [], authorities: [], additionals: [] });
  const ok = (answers: Answer[], additionals: Answer[] = []): Reply => ({
    rcode: 'NOERROR',
    authoritative: true,
    answers,
    authorities: [],
    additionals,
  });
  const n = labels.length;

  if (n === 0) {
    if (qtype === 'SOA') return ok([soa(cfg, data.modified)]);
    if (qtype === 'NS')
      return ok(
        [{ type: 'NS', name: cfg.zone, ttl, class: 'IN', data: `ns.dns.${cfg.zone}` }],
        addressRecords(`ns.dns.${cfg.zone}`, cfg.dnsIPs, 'ANY', ttl),
      );
    return nodata();
  }
  const top = labels[n - 1]!;
  if (n === 1 && top === 'dns-version')
    return qtype === 'TXT' || qtype === 'ANY'
      ? ok([{ type: 'TXT', name: fqdn, ttl, class: 'IN', data: DNS_SCHEMA_VERSION }])
      : nodata();
  if (top === 'dns') {
    if (n === 1) return nodata();
    if (n === 2 && labels[0] === 'ns') return ok(addressRecords(fqdn, cfg.dnsIPs, qtype, ttl));
    return nx();
  }
  if (top === 'pod') {
    if (n === 1) return nodata();
    const ns = labels[n - 2]!;
    if (!data.namespaceExists(ns)) return nx();
    if (n === 2) return nodata();
    if (n !== 3) return nx();
    // `pods insecure`: the address is read from the name, unchecked.
    const ip = undashIp(labels[0]!);
    return ip ? ok(addressRecords(fqdn, [ip], qtype, ttl)) : nx();
  }
  if (top !== 'svc') return nx();
  if (n === 1) return nodata();
  const ns = labels[n - 2]!;
  if (n === 2) return data.namespaceExists(ns) ? nodata() : nx();
  const svc = data.service(ns, labels[n - 3]!);
  if (!svc) return nx();
  const base = svcName(svc, cfg);
  if (n === 3) return serviceRecords(data, svc, base, qtype, ttl);
  if (n === 4) {
    if (!svc.headless) return nx();
    const hits = data
      .endpoints(svc)
      .filter(({ endpoint }) => endpointLabel(endpoint) === labels[0] || dashedIp(endpoint.ip) === labels[0]);
    if (hits.length === 0) return nx();
    return ok(
      addressRecords(
        fqdn,
        hits.map((h) => h.endpoint.ip),
        qtype,
        ttl,
      ),
    );
  }
  if (n === 5 && labels[0]!.startsWith('_') && labels[1]!.startsWith('_')) {
    const portName = labels[0]!.slice(1);
    const proto = labels[1]!.slice(1);
    const srv = srvRecords(data, svc, base, fqdn, (p) => p.name === portName && p.protocol === proto, ttl);
    if (!srv) return nx();
    return qtype === 'SRV' || qtype === 'ANY' ? ok(srv.answers, srv.additionals) : nodata();
  }
  return nx();
}

function serviceRecords(data: ZoneData, svc: ServiceInfo, base: string, qtype: string, ttl: number): Reply {
  const ok = (answers: Answer[], additionals: Answer[] = []): Reply => ({
    rcode: 'NOERROR',
    authoritative: true,
    answers,
    authorities: [],
    additionals,
  });
  if (svc.externalName) return ok([{ type: 'CNAME', name: base, ttl, class: 'IN', data: svc.externalName }]);
  if (qtype === 'SRV') {
    const srv = srvRecords(data, svc, base, base, () => true, ttl);
    return srv ? ok(srv.answers, srv.additionals) : { ...ok([]), rcode: 'NXDOMAIN' };
  }
  if (!svc.headless) return ok(addressRecords(base, svc.clusterIPs, qtype, ttl));
  const eps = data.endpoints(svc);
  // CoreDNS: a headless Service without ready endpoints does not exist.
  if (eps.length === 0) return { ...ok([]), rcode: 'NXDOMAIN' };
  return ok(
    addressRecords(
      base,
      eps.map((e) => e.endpoint.ip),
      qtype,
      ttl,
    ),
  );
}

/** SRV records for the ports `match` selects: the Service's own name (ClusterIP) or one per ready endpoint (headless), with their addresses as additionals. */
function srvRecords(
  data: ZoneData,
  svc: ServiceInfo,
  base: string,
  owner: string,
  match: (p: ServicePort) => boolean,
  ttl: number,
): { answers: Answer[]; additionals: Answer[] } | undefined {
  const answers: Answer[] = [];
  const additionals: Answer[] = [];
  const srv = (port: number, target: string): Answer => ({
    type: 'SRV',
    name: owner,
    ttl,
    class: 'IN',
    data: { priority: 0, weight: 0, port, target },
  });
  if (!svc.headless) {
    for (const p of svc.ports.filter(match)) answers.push(srv(p.port, base));
    additionals.push(...addressRecords(base, svc.clusterIPs, 'ANY', ttl));
  } else {
    const eps: { endpoint: Endpoint; ports: ServicePort[] }[] = data.endpoints(svc);
    for (const { endpoint, ports } of eps) {
      const target = `${endpointLabel(endpoint)}.${base}`;
      const hit = ports.filter(match);
      for (const p of hit) answers.push(srv(p.port, target));
      if (hit.length) additionals.push(...addressRecords(target, [endpoint.ip], 'ANY', ttl));
    }
  }
  if (answers.length === 0) return undefined;
  // Equal priority; weights share 100 between the targets, as CoreDNS.
  const weight = Math.max(1, Math.floor(100 / answers.length));
  for (const a of answers) (a as { data: { weight: number } }).data.weight = weight;
  return { answers, additionals };
}
