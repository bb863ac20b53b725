// A plain-HTTP listener for local use: /healthz always (--healthz-port), and
// with metrics also /metrics and /metrics/probes (--metrics-bind-address).
// The authenticated kubelet API on :10250 serves the same paths.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeletMetrics } from '../metrics.js';

export async function serveLocal(bind: string, metrics?: KubeletMetrics): Promise<{ port: number; close(): Promise<void> }> {
  const i = bind.lastIndexOf(':');
  const host = bind.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
  const port = Number(bind.slice(i + 1));
  if (i < 0 || !Number.isInteger(port)) throw new Error(`want host:port, got "${bind}"`);
  const srv = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reg = !metrics ? undefined : path === '/metrics' ? metrics.registry : path === '/metrics/probes' ? metrics.probes : undefined;
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      return res.end('ok');
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
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, resolve);
  });
  return { port: (srv.address() as AddressInfo).port, close: () => new Promise((r) => srv.close(() => r())) };
}
