// endpointslice-mirroring-controller: a Service without a selector whose Endpoints a user writes gets those
// Endpoints mirrored as EndpointSlices (managed-by endpointslicemirroring-controller.k8s.io, owned by the Endpoints),
// so kube-proxy, which reads only slices, serves them. As upstream's endpointslicemirroring controller: not for
// Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true or holding a leader-election annotation.
import { isIP } from 'node:net';

import type { Endpoints } from 'kubernetes-types/core/v1.js';
import type { EndpointPort, EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { KeyQueue } from './key-queue.js';

export const MIRROR_CONTROLLER = 'endpointslicemirroring-controller.k8s.io';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const SERVICE_NAME = 'kubernetes.io/service-name';
const SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
const LEADER = 'control-plane.alpha.kubernetes.io/leader';
const SKIPPED_ANNOTATIONS = new Set([
  'endpoints.kubernetes.io/last-change-trigger-time',
  'kubectl.kubernetes.io/last-applied-configuration',
]);

type Slice = Pick<EndpointSlice, 'addressType' | 'ports' | 'endpoints'>;

/** Whether a Service's Endpoints are mirrored: the Service has no selector and the Endpoints do not opt out. */
export function shouldMirror(svc: KObj | undefined, ep: Endpoints | undefined): boolean {
  if (!svc || !ep || Object.keys(svc.spec?.selector ?? {}).length) return false;
  if (ep.metadata?.labels?.[SKIP_MIRROR] === 'true') return false;
  return ep.metadata?.annotations?.[LEADER] === undefined;
}

/** The slices an Endpoints object mirrors to: one per subset and address family, ready and not-ready addresses. */
export function mirroredSlices(ep: Endpoints): Slice[] {
  const out: Slice[] = [];
  for (const subset of ep.subsets ?? []) {
    const ports: EndpointPort[] = (subset.ports ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    }));
    for (const family of ['IPv4', 'IPv6'] as const) {
      const want = family === 'IPv4' ? 4 : 6;
      const endpoints = [
        ...(subset.addresses ?? []).map((a) => ({ a, ready: true })),
        ...(subset.notReadyAddresses ?? []).map((a) => ({ a, ready: false })),
      ]
        .filter(({ a }) => isIP(a.ip) === want)
        .map(({ a, ready }) => ({
          addresses: [a.ip],
          conditions: { ready },
          ...(a.hostname ? { hostname: a.hostname } : {}),
          ...(a.nodeName ? { nodeName: a.nodeName } : {}),
          ...(a.targetRef ? { targetRef: a.targetRef } : {}),
        }));
      if (endpoints.length) out.push({ addressType: family, ports, endpoints });
    }
  }
  return out;
}

const content = (s: Slice): string =>
  JSON.stringify([s.addressType, s.ports ?? [], (s.endpoints ?? []).map((e) => [e.addresses, e.conditions?.ready])]);

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

export class EndpointSliceMirroringController {
  private readonly services: Informer;
  private readonly endpoints: Informer;
  private readonly queue = new KeyQueue<number>(async (key) => {
    try {
      await this.sync(key);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409))
        this.log.warn(`endpointslice-mirroring-controller: ${key}: ${(e as Error).message}; retrying`);
      setTimeout(() => this.queue.add(key, Date.now()), 1000).unref();
    }
  });

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
  ) {
    const enq = (o: KObj): void => this.queue.add(keyOf(o), Date.now());
    const onErr = (what: string) => (e: Error) =>
      log.warn(`endpointslice-mirroring-controller: ${what} watch: ${e.message}`);
    this.services = new Informer(client, {
      path: '/api/v1/services',
      onAdd: enq,
      onUpdate: enq,
      onDelete: enq,
      onError: onErr('service'),
    });
    this.endpoints = new Informer(client, {
      path: '/api/v1/endpoints',
      onAdd: enq,
      onUpdate: enq,
      onDelete: enq,
      onError: onErr('endpoints'),
    });
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const svc = this.services.cache.get(key);
    const ep = this.endpoints.cache.get(key) as Endpoints | undefined;
    const base = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
    const have = (
      (await this.client.get(base, { labelSelector: `${SERVICE_NAME}=${name},${MANAGED_BY}=${MIRROR_CONTROLLER}` }))
        .items as KObj[]
    ).filter((s) => !s.metadata.deletionTimestamp);
    const want = shouldMirror(svc, ep) ? mirroredSlices(ep!) : [];
    const wanted = new Set(want.map(content));
    const kept = new Set<string>();
    for (const s of have) {
      const c = content(s as Slice);
      if (wanted.has(c) && !kept.has(c)) kept.add(c);
      else await this.client.delete(`${base}/${s.metadata.name}`).catch(notFound);
    }
    for (const s of want) {
      if (kept.has(content(s))) continue;
      kept.add(content(s));
      const annotations = Object.fromEntries(
        Object.entries(ep!.metadata?.annotations ?? {}).filter(([k]) => !SKIPPED_ANNOTATIONS.has(k)),
      );
      await this.client.create(base, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          generateName: `${name}-`,
          labels: { ...(ep!.metadata?.labels ?? {}), [SERVICE_NAME]: name, [MANAGED_BY]: MIRROR_CONTROLLER },
          ...(Object.keys(annotations).length ? { annotations } : {}),
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'Endpoints',
              name,
              uid: ep!.metadata!.uid!,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        ...s,
      });
    }
  }

  async start(): Promise<void> {
    await Promise.all([this.services.start(), this.endpoints.start()]);
    for (const e of this.endpoints.list()) this.queue.add(keyOf(e), Date.now());
  }

  async stop(): Promise<void> {
    await Promise.all([this.services.stop(), this.endpoints.stop()]);
  }
}

function notFound(e: unknown): void {
  if (!(e instanceof KubeApiError && e.code === 404)) throw e;
}
