// The DNS server's HTTP endpoints, as CoreDNS's plugins serve them: /health
// (health, :8080) answers OK while the process runs; /ready (ready, :8181) is
// 200 OK once the Service data is loaded, else 503 naming the plugin not ready;
// /metrics (prometheus, :9153).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Registry } from '../kube/prom.js';
import { closer } from '../kube/server-close.js';
import { splitHostPort } from './server.js';

export interface HttpListening {
  port: number;
  close(): Promise<void>;
}

type Route = (res: http.ServerResponse) => void;

function text(res: http.ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

export async function serveHttp(bind: string, flag: string, routes: Record<string, Route>): Promise<HttpListening> {
  const { host, port } = splitHostPort(bind, flag);
  const srv = http.createServer((req, res) => {
    const route = routes[(req.url ?? '/').split('?')[0]!];
    if (route) route(res);
    else text(res, 404, '404 page not found\n');
  });
  const close = closer(srv);
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, host, () => resolve());
  });
  return {
    port: (srv.address() as AddressInfo).port,
    close,
  };
}

export const healthRoutes = (): Record<string, Route> => ({ '/health': (res) => text(res, 200, 'OK') });

export const readyRoutes = (notReady: () => string[]): Record<string, Route> => ({
  '/ready': (res) => {
    const waiting = notReady();
    if (waiting.length) text(res, 503, waiting.join(', '));
    else text(res, 200, 'OK');
  },
});

export const metricsRoutes = (registry: Registry): Record<string, Route> => ({
  '/metrics': (res) => {
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(body);
      },
      (e: Error) => text(res, 500, e.message),
    );
  },
});
