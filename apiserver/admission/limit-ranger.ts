// LimitRanger admission (on by default upstream): a namespace's LimitRanges
// give containers their default limits and requests, then bound each
// container, pod and claim by min, max and maxLimitRequestRatio, with
// upstream's messages. Also LimitRange's own defaulting (default from max,
// defaultRequest from default).
import { parseQuantity } from '../../kube/quantity.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

/** SetDefaults_LimitRangeItem: a Container item's default limit is its max, its default request its default (or min). */
export function defaultLimitRange(lr: Obj): void {
  for (const item of (lr.spec?.limits ?? []) as Obj[]) {
    if (item.type !== 'Container') continue;
    for (const [r, v] of Object.entries((item.max ?? {}) as Record<string, string>)) (item.default ??= {})[r] ??= v;
    for (const [r, v] of Object.entries((item.default ?? {}) as Record<string, string>))
      (item.defaultRequest ??= {})[r] ??= v;
    for (const [r, v] of Object.entries((item.min ?? {}) as Record<string, string>))
      (item.defaultRequest ??= {})[r] ??= v;
  }
}

const num = (v: unknown): number => parseQuantity(String(v));
const containersOf = (spec: Obj): Obj[] => [
  ...((spec.initContainers ?? []) as Obj[]),
  ...((spec.containers ?? []) as Obj[]),
];

/** Upstream minConstraint/maxConstraint/limitRequestRatioConstraint over one set of requests and limits. */
function bounds(
  kind: string,
  item: Obj,
  req: Record<string, unknown>,
  lim: Record<string, unknown>,
  out: string[],
): void {
  for (const [r, min] of Object.entries((item.min ?? {}) as Record<string, string>)) {
    if (req[r] === undefined) out.push(`minimum ${r} usage per ${kind} is ${min}.  No request is specified`);
    else if (num(req[r]) < num(min)) out.push(`minimum ${r} usage per ${kind} is ${min}, but request is ${req[r]}`);
  }
  for (const [r, max] of Object.entries((item.max ?? {}) as Record<string, string>)) {
    if (lim[r] === undefined) out.push(`maximum ${r} usage per ${kind} is ${max}.  No limit is specified`);
    else if (num(lim[r]) > num(max)) out.push(`maximum ${r} usage per ${kind} is ${max}, but limit is ${lim[r]}`);
  }
  for (const [r, ratio] of Object.entries((item.maxLimitRequestRatio ?? {}) as Record<string, string>)) {
    if (lim[r] === undefined || req[r] === undefined || num(req[r]) === 0) {
      out.push(
        `${r} max limit to request ratio per ${kind} is ${ratio}, but no ${lim[r] === undefined ? 'limit' : 'request'} is specified or request is 0`,
      );
      continue;
    }
    const actual = num(lim[r]) / num(req[r]);
    if (actual > num(ratio))
      out.push(`${r} max limit to request ratio per ${kind} is ${ratio}, but provided ratio is ${actual.toFixed(6)}`);
  }
}

const forbidden = (resource: string, name: string, msgs: string[]) =>
  errors.forbiddenObject(resource, '', name, msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`);

/** Defaults then checks a new pod against the namespace's LimitRanges; throws 403 with every violation. */
export function admitPodLimits(pod: Obj, ranges: Obj[]): void {
  const items = ranges.flatMap((lr) => (lr.spec?.limits ?? []) as Obj[]);
  if (!items.length) return;
  const set: string[] = [];
  for (const item of items.filter((i) => i.type === 'Container')) {
    for (const c of containersOf(pod.spec ?? {})) {
      const res = (c.resources ??= {});
      // Pod defaulting ran first upstream: an unset request with a limit is the limit.
      for (const [r, v] of Object.entries((res.limits ?? {}) as Record<string, string>)) (res.requests ??= {})[r] ??= v;
      const reqs: string[] = [];
      const lims: string[] = [];
      for (const [r, v] of Object.entries((item.defaultRequest ?? {}) as Record<string, string>))
        if ((res.requests ??= {})[r] === undefined) {
          res.requests[r] = v;
          reqs.push(r);
        }
      for (const [r, v] of Object.entries((item.default ?? {}) as Record<string, string>))
        if ((res.limits ??= {})[r] === undefined) {
          res.limits[r] = v;
          lims.push(r);
        }
      if (!Object.keys(res.requests ?? {}).length) delete res.requests;
      if (!Object.keys(res.limits ?? {}).length) delete res.limits;
      if (reqs.length) set.push(`${reqs.join(', ')} request for container ${c.name}`);
      if (lims.length) set.push(`${lims.join(', ')} limit for container ${c.name}`);
    }
  }
  if (set.length)
    (pod.metadata.annotations ??= {})['kubernetes.io/limit-ranger'] = `LimitRanger plugin set: ${set.join('; ')}`;
  const msgs: string[] = [];
  for (const item of items) {
    if (item.type === 'Container')
      for (const c of containersOf(pod.spec ?? {}))
        bounds('Container', item, c.resources?.requests ?? {}, c.resources?.limits ?? {}, msgs);
    if (item.type === 'Pod') {
      const sum = (k: 'requests' | 'limits'): Record<string, number> => {
        const out: Record<string, number> = {};
        for (const c of (pod.spec?.containers ?? []) as Obj[])
          for (const [r, v] of Object.entries((c.resources?.[k] ?? {}) as Record<string, string>))
            out[r] = (out[r] ?? 0) + num(v);
        return out;
      };
      bounds('Pod', item, sum('requests'), sum('limits'), msgs);
    }
  }
  if (msgs.length) throw forbidden('pods', pod.metadata.name, msgs);
}

/** A new claim against PersistentVolumeClaim items (min and max of requests.storage). */
export function admitClaimLimits(pvc: Obj, ranges: Obj[]): void {
  const msgs: string[] = [];
  for (const item of ranges
    .flatMap((lr) => (lr.spec?.limits ?? []) as Obj[])
    .filter((i) => i.type === 'PersistentVolumeClaim')) {
    const req = pvc.spec?.resources?.requests ?? {};
    for (const [r, min] of Object.entries((item.min ?? {}) as Record<string, string>))
      if (req[r] !== undefined && num(req[r]) < num(min))
        msgs.push(`minimum ${r} usage per PersistentVolumeClaim is ${min}, but request is ${req[r]}`);
    for (const [r, max] of Object.entries((item.max ?? {}) as Record<string, string>))
      if (req[r] !== undefined && num(req[r]) > num(max))
        msgs.push(`maximum ${r} usage per PersistentVolumeClaim is ${max}, but request is ${req[r]}`);
  }
  if (msgs.length) throw forbidden('persistentvolumeclaims', pvc.metadata.name, msgs);
}
