// pods/proxy, nodes/proxy and services/proxy: a request under
// /…/{name}/proxy/{path} is carried to the pod's IP, the node's kubelet or one
// of the Service's endpoints, as kube-apiserver does. The name may carry a
// scheme and a port (`https:web:8443`); without a port a pod gets its first
// container port, a node its kubelet's (with the apiserver's kubelet client
// certificate), a Service its only port.
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';

import type { Node, Pod, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import type { Api } from '../api/api.js';
import { ApiError, errors } from '../api/errors.js';

export interface ProxyTarget {
  scheme: 'http' | 'https';
  host: string;
  port?: number;
  /** The apiserver's kubelet client certificate goes with the request (a node's kubelet port). */
  kubeletCert?: boolean;
}

/** "name", "name:port" or "scheme:name:port" (Go's SplitSchemeNamePort); undefined when invalid. */
export function splitSchemeNamePort(
  id: string,
): { scheme: '' | 'http' | 'https'; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = parts as [string, string];
  else if (parts.length === 3) [scheme, name, port] = parts as [string, string, string];
  else return undefined;
  if (!name || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme: scheme as '' | 'http' | 'https', name, port };
}

/** A path segment escaped as Go's URL.EscapedPath does: sub-delimiters, ':' and '@' stay as they are. */
export const escapeSegment = (s: string): string =>
  encodeURIComponent(s).replace(/%(24|26|2B|2C|3B|3D|3A|40)/g, (m) => decodeURIComponent(m));

const bracket = (ip: string): string => (ip.includes(':') ? `[${ip}]` : ip);

/** Where pods/{id}/proxy goes: the pod's IP, at the port given or its first container port. */
export function podTarget(pod: Pod, scheme: string, port: string): ProxyTarget {
  let p = port;
  if (!p)
    for (const c of pod.spec?.containers ?? [])
      if (c.ports?.[0]) {
        p = String(c.ports[0].containerPort);
        break;
      }
  const ip = String(pod.status?.podIP ?? '');
  if (!isIP(ip) || ip.startsWith('127.') || ip === '::1' || ip.startsWith('169.254.'))
    throw errors.badRequest('address not allowed');
  return { scheme: scheme === 'https' ? 'https' : 'http', host: ip, port: p ? Number(p) : undefined };
}

/** Where nodes/{id}/proxy goes: the kubelet (https, its client certificate) unless another port is named. */
export function nodeTarget(node: Node, scheme: string, port: string): ProxyTarget {
  const addrs = node.status?.addresses ?? [];
  const host = (addrs.find((a) => a.type === 'InternalIP') ?? addrs.find((a) => a.type === 'Hostname'))?.address;
  if (!host) throw errors.badRequest(`no preferred addresses found; known addresses: []`);
  const kubelet = Number(node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 10250);
  if (!port || Number(port) === kubelet) return { scheme: 'https', host, port: kubelet, kubeletCert: true };
  return { scheme: scheme === 'https' ? 'https' : 'http', host, port: Number(port) };
}

/**
 * Where services/{id}/proxy goes: a ready endpoint of the named (or numbered) Service port, among the
 * Service's EndpointSlices; `pick` chooses among them (upstream picks at random).
 */
export function serviceTarget(
  svc: Service,
  slices: EndpointSlice[],
  scheme: string,
  port: string,
  pick: (n: number) => number = (n) => Math.floor(Math.random() * n),
): ProxyTarget {
  const name = svc.metadata?.name ?? '';
  let portName = port;
  if (/^\d+$/.test(port)) {
    const sp = (svc.spec?.ports ?? []).find((p) => p.port === Number(port));
    if (!sp) throw errors.serviceUnavailable(`no service port ${port} found for service "${name}"`);
    portName = sp.name ?? '';
  }
  const candidates: { ip: string; port: number }[] = [];
  for (const s of slices) {
    const p = (s.ports ?? []).find((x) => (x.name ?? '') === portName);
    if (!p?.port) continue;
    for (const e of s.endpoints)
      if (e.conditions?.ready !== false && e.targetRef?.kind === 'Pod')
        for (const a of e.addresses) candidates.push({ ip: a, port: p.port });
  }
  if (!candidates.length) throw errors.serviceUnavailable(`no endpoints available for service "${name}"`);
  const c = candidates[pick(candidates.length)]!;
  return { scheme: scheme === 'https' ? 'https' : 'http', host: c.ip, port: c.port };
}

/** Headers that belong to one hop (RFC 9110), and the credentials that stay with this one. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'authorization',
]);

const oneHop = (h: http.IncomingHttpHeaders): OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(h).filter(([k]) => !HOP.has(k.toLowerCase())));

export class ResourceProxy {
  constructor(
    private readonly api: Api,
    private readonly kubeletClient: { cert: Buffer; key: Buffer },
  ) {}

  /** The target of `/{resource}/{id}/proxy`; throws the Status upstream answers with. */
  target(resource: string, ns: string, id: string): ProxyTarget {
    const s = splitSchemeNamePort(id);
    if (!s) throw errors.badRequest(`invalid ${resource.replace(/s$/, '')} request "${id}"`);
    if (resource === 'pods')
      return podTarget(this.api.get(this.api.res('', 'pods'), ns, s.name) as Pod, s.scheme, s.port);
    if (resource === 'nodes')
      return nodeTarget(this.api.get(this.api.res('', 'nodes'), '', s.name) as Node, s.scheme, s.port);
    const svc = this.api.get(this.api.res('', 'services'), ns, s.name) as Service;
    const slices = this.api.list(this.api.res('discovery.k8s.io', 'endpointslices'), ns, {
      labelSelector: `kubernetes.io/service-name=${s.name}`,
    }).items as EndpointSlice[];
    return serviceTarget(svc, slices, s.scheme, s.port);
  }

  /** Carries the request to the target; `path` is what follows `proxy`, `search` the query. */
  serve(req: IncomingMessage, res: ServerResponse, t: ProxyTarget, path: string, search: string): void {
    const lib = t.scheme === 'https' ? https : http;
    const up = lib.request(
      {
        host: t.host,
        port: t.port,
        method: req.method,
        agent: false,
        path: `${path || '/'}${search}`,
        headers: { ...oneHop(req.headers), host: `${bracket(t.host)}${t.port ? `:${t.port}` : ''}` },
        ...(t.scheme === 'https' ? { rejectUnauthorized: false } : {}),
        ...(t.kubeletCert ? { cert: this.kubeletClient.cert, key: this.kubeletClient.key } : {}),
      },
      (ures) => {
        res.writeHead(ures.statusCode ?? 502, oneHop(ures.headers));
        ures.pipe(res);
        res.on('close', () => ures.destroy());
      },
    );
    up.on('error', (e) => {
      if (res.headersSent) return void res.destroy();
      const err = new ApiError(503, 'ServiceUnavailable', `error trying to reach service: ${e.message}`);
      res.writeHead(err.code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(err.toStatus()));
    });
    req.pipe(up);
  }
}
