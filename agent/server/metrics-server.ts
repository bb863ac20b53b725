// A plain-HTTP listener for local use: /healthz always (--healthz-port), and
// with metrics also /metrics and /metrics/probes (--metrics-bind-address).
// The authenticated kubelet API on :10250 serves the same paths.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { closer } from '../../kube/server-close.js';
import type { KubeletMetrics } from '../metrics.js';
import { alwaysOk, type HealthCheck, healthz } from './healthz.js';

export async function serveLocal(
  bind: string,
  o: { metrics?: KubeletMetrics; healthChecks?: HealthCheck[] } = {},
): Promise<{ port: number; close(): Promise<void> }> {
  const { metrics } = o;
  const i = bind.lastIndexOf(':');
  const host = bind.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
  const port = Number(bind.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) throw new Error(`want host:port, got "${bind}"`);
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const path = url.pathname;
    const reg = !metrics
      ? undefined
      : path === '/metrics'
        ? metrics.registry
        : path === '/metrics/probes'
          ? metrics.probes
          : undefined;
    const h =
      req.method === 'GET'
        ? healthz(o.healthChecks ?? [alwaysOk('ping')], path, url.searchParams.has('verbose'))
        : undefined;
    if (h) {
      res.writeHead(h.code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      return res.end(h.body);
    }
    if (!reg || req.method !== 'GET') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end('404 page not found\n');
    }
    reg.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': reg.contentType });
        res.end(text);
      },
      (e: Error) => {
        res.writeHead(500);
        res.end(e.message);
      },
    );
  });
  const close = closer(srv);
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, resolve);
  });
  return { port: (srv.address() as AddressInfo).port, close };
}
