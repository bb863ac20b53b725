// The kubelet API (HTTPS, :10250): every request is authenticated and
// authorized first (401 "Unauthorized", 403 "Forbidden (user=…)"), then
// routed: health, pods, metrics, stats, configz, and the debugging handlers
// (containerLogs, exec, attach, portForward, run) unless they are disabled.
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { closer } from '../../kube/server-close.js';
import { SERVER_TLS } from '../../kube/tls.js';
import { answerUpgrade } from '../../kube/upgrade-proxy.js';
import { CriError } from '../cri/client.js';
import { forbiddenMessage, type KubeletAuth, requestAttributes } from './auth.js';
import { serveContainerLogs } from './container-logs.js';
import { healthz } from './healthz.js';
import { findPod, HttpError, runningContainer, type ServerHost } from './host.js';
import { resourceMetrics } from './resource-metrics.js';
import type { ServingCert } from './serving-cert.js';
import type { StatsProvider } from './stats.js';
import { parseStreamPath, serveStream } from './streaming.js';

export interface KubeletServerOptions {
  host: ServerHost;
  auth: KubeletAuth;
  stats: StatsProvider;
  cert: ServingCert;
  /** --client-ca-file contents: client certificates it signed authenticate as their CN and O. */
  clientCA?: Buffer;
  address: string;
  port: number;
  enableDebuggingHandlers: boolean;
}

export interface RunningKubeletServer {
  port: number;
  /** Serves a new certificate from the next connection on (serverTLSBootstrap). */
  setCertificate(cert: ServingCert): void;
  close(): Promise<void>;
}

const DEBUG_ROOTS = new Set(['containerLogs', 'exec', 'attach', 'portForward', 'run']);
const LONG_RUNNING = new Set(['exec', 'attach', 'portForward']);

const text = (res: ServerResponse, code: number, body: string): void => {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(body.endsWith('\n') ? body : `${body}\n`);
};

const json = (res: ServerResponse, body: unknown): void => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

export async function startKubeletServer(o: KubeletServerOptions): Promise<RunningKubeletServer> {
  const { host } = o;
  const m = host.metrics;

  /** Authn and authz; on refusal the answer has been given and undefined comes back. */
  const admit = async (
    req: IncomingMessage,
    path: string,
    deny: (code: number, msg: string) => void,
  ): Promise<boolean> => {
    let user;
    try {
      user = await o.auth.authenticate(req);
    } catch (e) {
      host.log.warn(`kubelet API: authentication failed: ${(e as Error).message}`);
    }
    if (!user) {
      deny(401, 'Unauthorized');
      return false;
    }
    const attrs = requestAttributes(user, req.method ?? 'GET', path, host.nodeName);
    try {
      const d = await o.auth.authorize(attrs);
      if (d.allowed) return true;
      host.log.debug(`kubelet API: ${forbiddenMessage(attrs)}${d.reason ? `: ${d.reason}` : ''}`);
      deny(403, forbiddenMessage(attrs));
    } catch (e) {
      host.log.warn(`kubelet API: authorization failed: ${(e as Error).message}`);
      deny(
        500,
        `Authorization error (user=${attrs.user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})`,
      );
    }
    return false;
  };

  const route = async (req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams): Promise<void> => {
    const parts = path.split('/').slice(1).map(decodeURIComponent);
    const root = parts[0] ?? '';
    const method = req.method ?? 'GET';
    if (DEBUG_ROOTS.has(root) && !o.enableDebuggingHandlers) return text(res, 405, 'Debug endpoints are disabled.');
    const get = method === 'GET' || method === 'HEAD';
    switch (true) {
      case path.startsWith('/healthz') && get: {
        const h = healthz(host.healthChecks, path, q.has('verbose'));
        if (!h) return text(res, 404, '404 page not found');
        res.writeHead(h.code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
        return void res.end(h.body);
      }
      case path === '/pods' && get:
        return json(res, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: host.pods() });
      case (path === '/metrics' || path === '/metrics/probes') && get: {
        const reg = path === '/metrics' ? m.registry : m.probes;
        const body = await reg.metrics();
        res.writeHead(200, { 'Content-Type': reg.contentType });
        return void res.end(body);
      }
      case path === '/metrics/resource' && get: {
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        return void res.end(resourceMetrics(await o.stats.summary()));
      }
      case path === '/metrics/cadvisor' && get: {
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        return void res.end(await o.stats.cadvisor());
      }
      case path === '/stats/summary' && get:
        return json(res, await o.stats.summary());
      case path === '/configz' && get:
        return json(res, { kubeletconfig: host.configz() });
      case root === 'containerLogs' && parts.length === 4 && get:
        return serveContainerLogs(host, res, parts[1]!, parts[2]!, parts[3]!, q);
      case root === 'run' && (parts.length === 4 || parts.length === 5) && method === 'POST':
        return run(res, parts, q);
      case ['exec', 'attach', 'portForward'].includes(root):
        // Reaches here only without an upgrade.
        return text(res, 400, 'Upgrade request required');
      default:
        return text(res, 404, '404 page not found');
    }
  };

  /** POST /run/{ns}/{pod}[/{uid}]/{container}?cmd=…: ExecSync, output as the body. */
  const run = async (res: ServerResponse, parts: string[], q: URLSearchParams): Promise<void> => {
    const [, ns, podName] = parts;
    const uid = parts.length === 5 ? parts[3] : undefined;
    const container = parts[parts.length - 1]!;
    const pod = findPod(host, ns!, podName!, uid);
    if (!pod) throw new HttpError(404, 'pod does not exist');
    const cmd = (q.get('cmd') ?? '').split(' ').filter(Boolean);
    if (!cmd.length) throw new HttpError(400, 'cmd is required');
    const c = await runningContainer(host, pod, container);
    const r = await host.cri.execSync(c.id, cmd, 0, `${ns!}/${podName!}`);
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(Buffer.concat([Buffer.from(r.stdout), Buffer.from(r.stderr)]));
  };

  const observe = (method: string, path: string): (() => void) => {
    const l = {
      method,
      path: path.split('/')[1] ?? '',
      server_type: 'readwrite',
      long_running: String(LONG_RUNNING.has(path.split('/')[1] ?? '')),
    };
    m.httpRequests.inc(l);
    m.httpInflight.inc(l);
    const t0 = performance.now();
    return () => {
      m.httpInflight.dec(l);
      m.httpDuration.observe(l, (performance.now() - t0) / 1000);
    };
  };

  const server = https.createServer(
    {
      cert: o.cert.cert,
      key: o.cert.key,
      requestCert: true,
      rejectUnauthorized: false,
      ...SERVER_TLS,
      ...(o.clientCA ? { ca: o.clientCA } : {}),
    },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      const done = observe(req.method ?? 'GET', url.pathname);
      res.on('close', done);
      void (async () => {
        if (!(await admit(req, url.pathname, (code, msg) => text(res, code, msg)))) return;
        await route(req, res, url.pathname, url.searchParams);
      })().catch((e: Error) => {
        const code = e instanceof HttpError ? e.code : e instanceof CriError && e.notFound ? 404 : 500;
        if (code >= 500) host.log.warn(`kubelet API: ${req.method ?? ''} ${url.pathname}: ${e.message}`);
        if (!res.headersSent) text(res, code, e.message);
        else res.destroy();
      });
    },
  );
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    const done = observe(req.method ?? 'GET', url.pathname);
    socket.on('close', done);
    socket.on('error', () => socket.destroy());
    void (async () => {
      if (
        !(await admit(req, url.pathname, (code, msg) =>
          answerUpgrade(socket, code, 'text/plain; charset=utf-8', `${msg}\n`),
        ))
      )
        return;
      const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
      if (!o.enableDebuggingHandlers && DEBUG_ROOTS.has(parts[0] ?? ''))
        return answerUpgrade(socket, 405, 'text/plain; charset=utf-8', 'Debug endpoints are disabled.\n');
      const r = parseStreamPath(parts);
      if (!r || !['GET', 'POST'].includes(req.method ?? ''))
        return answerUpgrade(socket, 404, 'text/plain; charset=utf-8', '404 page not found\n');
      await serveStream(host, req, socket, head, r, url.searchParams);
    })().catch((e: Error) => answerUpgrade(socket, 500, 'text/plain; charset=utf-8', `${e.message}\n`));
  });
  const close = closer(server);
  const listen = (address: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
  // 0.0.0.0 is every address of both families, as Go's listener takes it (an apiserver may dial a dual-stack
  // node's IPv6 InternalIP); a kernel without IPv6 gets the IPv4 wildcard.
  if (o.address === '0.0.0.0') {
    await listen('::').catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EAFNOSUPPORT' && e.code !== 'EADDRNOTAVAIL') throw e;
      return listen('0.0.0.0');
    });
  } else await listen(o.address);
  return {
    port: (server.address() as AddressInfo).port,
    setCertificate: (c) =>
      server.setSecureContext({ cert: c.cert, key: c.key, ...SERVER_TLS, ...(o.clientCA ? { ca: o.clientCA } : {}) }),
    close,
  };
}
