import type { PodSpec } from 'kubernetes-types/core/v1.js';
import { parseQuantity } from './quantity.js';

const QOS_RESOURCES = ['cpu', 'memory'];

const amount = (q: unknown): number => {
  // Most containers set no resources: no parse (and no exception) for them.
  if (q === undefined || q === null) return 0;
  try {
    return parseQuantity(q as string);
  } catch {
    return 0;
  }
};

type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/**
 * status.qosClass as upstream's ComputePodQOS: only cpu and memory count, zero quantities are ignored; Guaranteed
 * needs every container to limit both and the summed requests to equal the summed limits.
 */
export function qosClass(spec: PodSpec | undefined): QosClass {
  const cs = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  for (const c of cs) {
    const req = (c.resources?.requests ?? {}) as Record<string, unknown>;
    const lim = (c.resources?.limits ?? {}) as Record<string, unknown>;
    for (const k of QOS_RESOURCES) {
      // A request left out is the limit (the defaulting every pod gets before it runs).
      const r = amount(req[k] ?? lim[k]);
      if (r > 0) requests.set(k, (requests.get(k) ?? 0) + r);
      const l = amount(lim[k]);
      if (l > 0) limits.set(k, (limits.get(k) ?? 0) + l);
    }
    if (!QOS_RESOURCES.every((k) => amount(lim[k]) > 0)) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) for (const [k, v] of requests) if (Math.abs((limits.get(k) ?? 0) - v) > 1e-9) guaranteed = false;
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
