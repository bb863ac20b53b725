// Health check node ports (upstream healthcheck.ServiceHealthServer): for each
// Service with externalTrafficPolicy Local and a healthCheckNodePort, an HTTP
// server on that port answering 200 while this node has a ready endpoint of it
// (and the proxy is healthy), 503 otherwise, so an external load balancer only
// sends traffic to nodes that can serve it. Body and headers as upstream.
import http from 'node:http';

import type { Logger } from '../kube/log.js';

interface Instance {
  port: number;
  servers: http.Server[];
  endpoints: number;
}

/** Upstream's dedented body, tabs and all, without a trailing newline. */
export function healthBody(service: string, endpoints: number, proxyHealthy: boolean): string {
  const [namespace, name] = service.split('/') as [string, string];
  return `{\n\t"service": {\n\t\t"namespace": ${JSON.stringify(namespace)},\n\t\t"name": ${JSON.stringify(name)}\n\t},\n\t"localEndpoints": ${endpoints},\n\t"serviceProxyHealthy": ${proxyHealthy}\n}`;
}

export class ServiceHealthServer {
  private readonly services = new Map<string, Instance>();

  constructor(
    /** Addresses to listen on: the NodePort addresses, or 0.0.0.0 for all. */
    private readonly addresses: () => string[],
    private readonly proxyHealthy: () => boolean,
    private readonly log: Logger,
  ) {}

  /** One Service's health check port (0: none) and local ready endpoint count. */
  async set(service: string, port: number, endpoints: number): Promise<void> {
    const cur = this.services.get(service);
    if (cur && cur.port !== port) await this.delete(service);
    if (!port) return;
    const have = this.services.get(service);
    if (have) {
      have.endpoints = endpoints;
      return;
    }
    const inst: Instance = { port, servers: [], endpoints };
    this.services.set(service, inst);
    for (const addr of this.addresses()) {
      const srv = http.createServer((_req, res) => {
        const healthy = this.proxyHealthy();
        res.writeHead(inst.endpoints > 0 && healthy ? 200 : 503, {
          'Content-Type': 'application/json',
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(healthBody(service, inst.endpoints, healthy));
      });
      try {
        await new Promise<void>((resolve, reject) => {
          srv.once('error', reject);
          // "::" beside "0.0.0.0" (dual stack): IPv6 only, whatever net.ipv6.bindv6only says.
          srv.listen({ port, host: addr, ipv6Only: addr === '::' }, resolve);
        });
        inst.servers.push(srv);
      } catch (e) {
        // Upstream: FailedToStartServiceHealthcheck; the rules still work, only the load balancer's check does not.
        this.log.warn(`node failed to start healthcheck "${service}" on port ${port}: ${(e as Error).message}`);
      }
    }
  }

  async delete(service: string): Promise<void> {
    const inst = this.services.get(service);
    if (!inst) return;
    this.services.delete(service);
    await Promise.all(inst.servers.map((s) => new Promise((r) => s.close(r))));
  }

  ports(): Map<string, number> {
    return new Map([...this.services].map(([k, v]) => [k, v.port]));
  }

  async close(): Promise<void> {
    await Promise.all([...this.services.keys()].map((k) => this.delete(k)));
  }
}
