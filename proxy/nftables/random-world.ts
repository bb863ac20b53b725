// Test-only: a random cluster of Services and endpoints and random changes to it, for the property test against the
// kernel model and the netlink/nft equivalence test against the real kernel.
import type { Service } from 'kubernetes-types/core/v1.js';

import { seededRandom } from '../../kube/seeded-random.js';
import { type Endpoint, endpointsOfSlices } from '../model/endpoints.js';
import type { IPFamily } from '../model/family.js';
import { type Ep, NODE, slice, svc } from '../model/fixtures.js';
import { type ServicePort, servicePorts } from '../model/service-port.js';

/** A small deterministic PRNG (mulberry32). */
export const rng = seededRandom;

/** The IPv6 twin of an IPv4 address or CIDR ("10.1.2.3" → "fd00::10:1:2:3", "/8" → "/104"), for an IPv6 world. */
export function v6(ip: string): string {
  const [a, bits] = ip.split('/');
  const twin = `fd00::${a!.split('.').join(':')}`;
  return bits === undefined ? twin : `${twin}/${96 + Number(bits)}`;
}

/** Every IPv4 address and CIDR in an object, as its IPv6 twin. */
function toV6<T>(o: T): T {
  return JSON.parse(JSON.stringify(o), (_k, val: unknown) =>
    typeof val === 'string' && /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(val) ? v6(val) : val,
  ) as T;
}

/** A cluster as the proxier tracks it: service ports by Service, endpoints by port key; an IPv6 world has the twins. */
export class World {
  services = new Map<string, Service>();
  eps = new Map<string, Ep[]>();
  constructor(readonly family: IPFamily = 'IPv4') {}
  private twin<T>(o: T): T {
    return this.family === 'IPv6' ? toV6(o) : o;
  }
  ports(): Map<string, ServicePort[]> {
    return new Map([...this.services].map(([k, s]) => [k, servicePorts(this.twin(s), this.family)]));
  }
  endpoints(): Map<string, Endpoint[]> {
    const out = new Map<string, Endpoint[]>();
    for (const [k, list] of this.eps) {
      const [ns, name] = k.split('/') as [string, string];
      for (const [pk, v] of endpointsOfSlices([slice(ns, name, this.twin(list))], NODE, this.family)) out.set(pk, v);
    }
    return out;
  }
}

/** `plain`: ClusterIP and NodePort Services with Cluster policies and no affinity (what netlink syncs carry). */
export function randomService(r: () => number, i: number, plain = false): Service {
  const type = ['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer'][Math.floor(r() * (plain ? 3 : 4))]!;
  const spec: Record<string, unknown> = {
    clusterIP: `172.30.${i >> 8}.${i & 255}`,
    type,
    ports: [
      {
        name: 'p80',
        port: 80,
        protocol: r() < 0.8 ? 'TCP' : 'UDP',
        ...(type !== 'ClusterIP' ? { nodePort: 30000 + i } : {}),
      },
    ],
  };
  if (plain) return svc('ns', `s${i}`, spec);
  if (r() < 0.3) spec.externalIPs = [`192.168.99.${i & 255}`];
  if (type !== 'ClusterIP' && r() < 0.5) spec.externalTrafficPolicy = 'Local';
  if (r() < 0.2) spec.internalTrafficPolicy = 'Local';
  if (r() < 0.3)
    Object.assign(spec, {
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: r() < 0.5 ? 100 : 200 } },
    });
  if (type === 'LoadBalancer' && r() < 0.5) spec.loadBalancerSourceRanges = ['203.0.113.0/25'];
  return svc(
    'ns',
    `s${i}`,
    spec,
    type === 'LoadBalancer' ? { loadBalancer: { ingress: [{ ip: `1.2.${i >> 8}.${i & 255}` }] } } : undefined,
  );
}

export function randomChange(r: () => number, w: World, n: number, plain = false): string {
  const i = Math.floor(r() * n);
  const key = `ns/s${i}`;
  const x = r();
  if (x < 0.15) {
    if (w.services.has(key)) w.services.delete(key);
    else w.services.set(key, randomService(r, i, plain));
  } else if (x < 0.3) {
    if (w.services.has(key)) w.services.set(key, randomService(r, i, plain));
  } else {
    const list = [...(w.eps.get(key) ?? [])];
    const y = r();
    // Some endpoint IPs are shared between Services (one pod behind several): hairpin pairs are reference counted.
    const ip =
      r() < 0.3
        ? `10.0.0.${Math.floor(r() * 6) + 1}`
        : `10.${i & 255}.${Math.floor(r() * 8)}.${Math.floor(r() * 250) + 1}`;
    if (y < 0.4 || !list.length) list.push({ ip, node: r() < 0.5 ? NODE : 'other' });
    else if (y < 0.7) list.splice(Math.floor(r() * list.length), 1);
    else {
      const e = list[Math.floor(r() * list.length)]!;
      Object.assign(
        e,
        r() < 0.5
          ? { ready: false, serving: true, terminating: true }
          : { ready: true, serving: true, terminating: false },
      );
    }
    if (list.length) w.eps.set(key, list);
    else w.eps.delete(key);
  }
  return key;
}
