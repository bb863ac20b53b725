// kube-proxy's HTTP endpoints: /healthz and /livez (healthzBindAddress,
// :10256) and /metrics (metricsBindAddress, :10249), with upstream bodies and codes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { goTime, type ProxyHealth } from './health.js';
import type { ProxyMetrics } from './metrics.js';

export interface Listening {
  port: number;
  close(): Promise<void>;
}

function hostPort(bind: string, flag: string): { host: string; port: number } {
  const i = bind.lastIndexOf(':');
  const port = Number(bind.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--${flag}: want host:port, got "${bind}"`);
  return { host: bind.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0', port };
}

async function listen(srv: http.Server, bind: string, flag: string): Promise<Listening> {
  const { host, port } = hostPort(bind, flag);
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, resolve);
  });
  return { port: (srv.address() as AddressInfo).port, close: () => new Promise((r) => srv.close(() => r())) };
}

export function serveHealth(health: ProxyHealth, metrics: ProxyMetrics, bind: string): Promise<Listening> {
  const srv = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz' && path !== '/livez') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end('404 page not found\n');
    }
    const st = health.state();
    const healthz = path === '/healthz';
    const ok = st.healthy && (!healthz || health.nodeEligible);
    const code = ok ? 200 : 503;
    (healthz ? metrics.healthzTotal : metrics.livezTotal).inc({ code: String(code) });
    // As upstream: a healthy proxy reports the current time as its last update.
    const last = goTime(st.healthy ? st.currentTime : st.lastUpdated);
    const body = healthz
      ? `{"lastUpdated": ${JSON.stringify(last)},"currentTime": ${JSON.stringify(goTime(st.currentTime))}, "nodeEligible": ${health.nodeEligible}}`
      : `{"lastUpdated": ${JSON.stringify(last)},"currentTime": ${JSON.stringify(goTime(st.currentTime))}}`;
    res.writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' });
    res.end(body);
  });
  return listen(srv, bind, 'healthz-bind-address');
}

export function serveMetrics(metrics: ProxyMetrics, bind: string, mode: string): Promise<Listening> {
  const srv = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/proxyMode') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end(mode);
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end('ok');
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end('404 page not found\n');
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
        res.end(text);
      },
      (e: Error) => {
        res.writeHead(500);
        res.end(e.message);
      },
    );
  });
  return listen(srv, bind, 'metrics-bind-address');
}
