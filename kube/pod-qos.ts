import type { PodSpec } from 'kubernetes-types/core/v1.js';

/** status.qosClass: Guaranteed (cpu and memory limits, requests equal), Burstable (some resources), BestEffort (none). */
export function qosClass(spec: PodSpec | undefined): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const cs = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of cs) {
    const req = (c.resources?.requests ?? {}) as Record<string, unknown>;
    const lim = (c.resources?.limits ?? {}) as Record<string, unknown>;
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const k of ['cpu', 'memory']) if (lim[k] === undefined || (req[k] !== undefined && String(req[k]) !== String(lim[k]))) guaranteed = false;
  }
  return !any ? 'BestEffort' : guaranteed ? 'Guaranteed' : 'Burstable';
}
