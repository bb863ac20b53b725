// `tskube dns`: the cluster DNS server wired to the apiserver (informers on
// Services, EndpointSlices and Namespaces), its sockets, the upstream
// resolvers, its HTTP endpoints and, when it has a published address, the
// kube-dns endpoints.
import { type KObj, KubeClient } from '../kube/client.js';
import { Informer } from '../kube/informer.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import type { Logger } from '../kube/log.js';
import { ClientAcl } from './acl.js';
import { DEFAULT_TTL, type ZoneConfig } from './answer.js';
import { ResponseCache } from './cache.js';
import type { DnsConfig } from './config.js';
import { Forwarder, parseUpstreams, type Upstream, upstreamsFromResolvConf } from './forward.js';
import { QueryHandler } from './handler.js';
import { healthRoutes, type HttpListening, metricsRoutes, readyRoutes, serveHttp } from './http.js';
import { DnsMetrics } from './metrics.js';
import { publishEndpoints, type PublishTarget } from './publish.js';
import { type DnsListening, serveDns, splitHostPort } from './server.js';
import { ZoneData } from './zone.js';

export const DNS_NAMESPACE = 'kube-system';
export const DNS_SERVICE = 'kube-dns';

export interface RunningDns {
  port: number;
  zone: ZoneData;
  stop(): Promise<void>;
}

function upstreams(cfg: DnsConfig, self: { host: string; port: number }[], log: Logger): Upstream[] {
  const list = cfg.upstreams.length
    ? parseUpstreams(cfg.upstreams, '--upstream')
    : upstreamsFromResolvConf(cfg.resolvConf);
  // Forwarding to ourselves would loop until every query times out.
  const kept = list.filter((u) => !self.some((s) => s.host === u.host && s.port === u.port));
  if (kept.length < list.length)
    log.warn('dns: an upstream resolver is this server itself; it is left out to avoid a forwarding loop');
  if (kept.length === 0)
    log.warn(
      `dns: no upstream resolvers (${cfg.upstreams.length ? '--upstream' : cfg.resolvConf}); names outside ${cfg.clusterDomain} get SERVFAIL`,
    );
  return kept;
}

export async function startDns(cfg: DnsConfig, log: Logger): Promise<RunningDns> {
  const client = new KubeClient(loadKubeconfig(cfg.kubeconfig));
  const zone = new ZoneData();
  const config: ZoneConfig = { zone: cfg.clusterDomain, ttl: cfg.ttl ?? DEFAULT_TTL, dnsIPs: [] };
  const listen = splitHostPort(cfg.dnsAddress, 'dns-address');
  const self = [listen, ...(cfg.publishAddress ? [{ host: cfg.publishAddress, port: listen.port }] : [])];
  const metrics = new DnsMetrics();
  metrics.buildInfo.set({ version: '1.11.3', revision: 'tskube', goversion: `node${process.versions.node}` }, 1);
  const cache = new ResponseCache();
  const forwarder = new Forwarder(upstreams(cfg, self, log));
  const server = `dns://:${listen.port}`;
  const handler = new QueryHandler({ zone, config, cache, forwarder, metrics, server });

  // The informers' caches keep only what DNS answers from: a 10,000-Service cluster costs a few MiB, not its full objects.
  const slim = (o: KObj): KObj => ({
    metadata: {
      name: o.metadata?.name,
      namespace: o.metadata?.namespace,
      resourceVersion: o.metadata?.resourceVersion,
      labels: o.metadata?.labels,
    },
    spec: o.spec && {
      type: o.spec.type,
      clusterIP: o.spec.clusterIP,
      clusterIPs: o.spec.clusterIPs,
      externalName: o.spec.externalName,
      ports: o.spec.ports,
      publishNotReadyAddresses: o.spec.publishNotReadyAddresses,
    },
    addressType: o.addressType,
    endpoints: o.endpoints?.map((e: KObj) => ({
      addresses: e.addresses,
      hostname: e.hostname,
      conditions: e.conditions && { ready: e.conditions.ready },
    })),
    ports: o.ports,
  });
  const onError = (what: string) => (e: Error) => log.warn(`dns: ${what} watch: ${e.message}`);
  const dnsIPs = (): void => {
    config.dnsIPs = zone.service(DNS_NAMESPACE, DNS_SERVICE)?.clusterIPs ?? [];
  };
  const informers = [
    new Informer(client, {
      path: '/api/v1/services',
      transform: slim,
      onAdd: (o) => (zone.setService(o), dnsIPs()),
      onUpdate: (o) => (zone.setService(o), dnsIPs()),
      onDelete: (o) => (zone.deleteService(o), dnsIPs()),
      onError: onError('services'),
    }),
    new Informer(client, {
      path: '/apis/discovery.k8s.io/v1/endpointslices',
      transform: slim,
      onAdd: (o) => zone.setSlice(o),
      onUpdate: (o) => zone.setSlice(o),
      onDelete: (o) => zone.deleteSlice(o),
      onError: onError('endpointslices'),
    }),
    new Informer(client, {
      path: '/api/v1/namespaces',
      transform: slim,
      onAdd: (o) => zone.setNamespace(o, true),
      onUpdate: (o) => zone.setNamespace(o, true),
      onDelete: (o) => zone.setNamespace(o, false),
      onError: onError('namespaces'),
    }),
  ];
  // Node addresses for the ACL: pods on other nodes arrive masqueraded to their node's address. Optional: without
  // the right to list Nodes only the --allow-from ranges are answered.
  const acl = new ClientAcl(cfg.allowFrom);
  const setNode = (o: KObj): void =>
    acl.setNode(
      o.metadata?.name,
      ((o.status?.addresses ?? []) as { type: string; address: string }[])
        .filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP')
        .map((a) => a.address),
    );
  const nodes = new Informer(client, {
    path: '/api/v1/nodes',
    transform: (o) => ({
      metadata: { name: o.metadata?.name, resourceVersion: o.metadata?.resourceVersion },
      status: { addresses: o.status?.addresses },
    }),
    onAdd: setNode,
    onUpdate: setNode,
    onDelete: (o) => acl.setNode(o.metadata?.name, []),
    onError: onError('nodes'),
  });
  let synced = false;
  const http: HttpListening[] = [];
  let dns: DnsListening | undefined;
  try {
    http.push(await serveHttp(cfg.healthAddress, 'health-address', healthRoutes()));
    http.push(
      await serveHttp(
        cfg.readyAddress,
        'ready-address',
        readyRoutes(() => (synced && dns ? [] : ['kubernetes'])),
      ),
    );
    http.push(await serveHttp(cfg.metricsAddress, 'metrics-address', metricsRoutes(metrics.registry)));
    await Promise.all(informers.map((i) => i.start()));
    nodes.start().catch((e: Error) => log.warn(`dns: nodes watch: ${e.message}; only --allow-from is answered`));
    synced = true;
    dns = await serveDns(handler, cfg.dnsAddress, log, (address) => acl.allows(address));
  } catch (e) {
    await Promise.all([...informers.map((i) => i.stop()), nodes.stop(), ...http.map((h) => h.close())]);
    client.close();
    throw e;
  }
  log.info(
    `dns: serving ${cfg.clusterDomain} on ${dns.host}:${dns.port} (udp, tcp); forwarding other names to ${forwarder.upstreams.map((u) => `${u.host}:${u.port}`).join(', ') || 'nobody'}`,
  );

  const metricsPort = splitHostPort(cfg.metricsAddress, 'metrics-address').port;
  const target: PublishTarget | undefined = cfg.publishAddress
    ? {
        namespace: DNS_NAMESPACE,
        service: DNS_SERVICE,
        ip: cfg.publishAddress,
        dnsPort: dns.port,
        metricsPort,
        nodeName: cfg.nodeName || undefined,
      }
    : undefined;
  // Published again every 30 s: an endpoint someone removed or an apiserver restarted without it comes back.
  let republish: NodeJS.Timeout | undefined;
  if (target) {
    const publish = (): Promise<void> =>
      publishEndpoints(client, target, true).catch((e: Error) =>
        log.warn(`dns: cannot publish the ${DNS_SERVICE} endpoints: ${e.message}`),
      );
    await publish();
    republish = setInterval(() => void publish(), 30_000);
  }
  return {
    port: dns.port,
    zone,
    stop: async () => {
      clearInterval(republish);
      // Not ready first, so clients move off before the sockets close.
      if (target)
        await publishEndpoints(client, target, false).catch((e: Error) =>
          log.warn(`dns: cannot mark the ${DNS_SERVICE} endpoints not ready: ${e.message}`),
        );
      await dns!.close();
      await Promise.all([...informers.map((i) => i.stop()), nodes.stop(), ...http.map((h) => h.close())]);
      client.close();
    },
  };
}
