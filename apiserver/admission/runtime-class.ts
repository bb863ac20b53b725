// RuntimeClass (node.k8s.io/v1): its validation, and upstream's RuntimeClass
// admission plugin for pods being created — the class must exist, its
// overhead becomes the pod's (a different one is refused), and its scheduling
// constraints are merged into the pod's nodeSelector and tolerations.
import { checkDns1123Label } from '../../kube/names.js';
import { parseQuantity } from '../../kube/pod-validation.js';
import { validateLabels } from '../../kube/validation.js';
import type { Cause } from '../api/errors.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

/** ValidateRuntimeClass: the handler is a DNS label; overhead quantities are non-negative; scheduling labels valid. */
export function validateRuntimeClass(rc: Obj): Cause[] {
  const causes: Cause[] = [];
  const handler = typeof rc.handler === 'string' ? rc.handler : '';
  const bad = checkDns1123Label(handler);
  if (bad) causes.push({ field: 'handler', message: `Invalid value: ${JSON.stringify(handler)}: ${bad}` });
  for (const [res, q] of Object.entries((rc.overhead?.podFixed ?? {}) as Record<string, unknown>)) {
    const n = parseQuantity(q);
    if (n === undefined)
      causes.push({
        field: `overhead.podFixed[${res}]`,
        message: `Invalid value: ${JSON.stringify(q)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      });
    else if (n < 0)
      causes.push({
        field: `overhead.podFixed[${res}]`,
        message: `Invalid value: ${JSON.stringify(String(q))}: must be greater than or equal to 0`,
      });
  }
  causes.push(...validateLabels(rc.scheduling?.nodeSelector, 'scheduling.nodeSelector'));
  return causes;
}

/** ValidateRuntimeClassUpdate: the handler is immutable. */
export function validateRuntimeClassUpdate(next: Obj, cur: Obj): Cause[] {
  return next.handler === cur.handler
    ? []
    : [{ field: 'handler', message: `Invalid value: ${JSON.stringify(next.handler ?? '')}: field is immutable` }];
}

const sameTolerations = (a: Obj, b: Obj): boolean =>
  ['key', 'operator', 'value', 'effect', 'tolerationSeconds'].every((k) => (a[k] ?? '') === (b[k] ?? ''));

/** Mutates a pod being created (mirror pods too, as upstream). */
export function admitRuntimeClass(pod: Obj, getRuntimeClass: (name: string) => Obj | undefined): void {
  const spec = (pod.spec ?? {}) as Obj;
  const name = String(pod.metadata?.name ?? '');
  const forbid = (why: string): never => {
    throw errors.forbiddenObject('pods', '', name, why);
  };
  const rcName = spec.runtimeClassName as string | undefined;
  const rc = rcName ? getRuntimeClass(rcName) : undefined;
  if (rcName && (!rc || rc.metadata?.deletionTimestamp))
    forbid(`pod rejected: RuntimeClass ${JSON.stringify(rcName)} not found`);
  const podOverhead = (spec.overhead ?? {}) as Record<string, unknown>;
  const rcOverhead = rc?.overhead?.podFixed as Record<string, unknown> | undefined;
  if (rcOverhead) {
    const same = (a: Record<string, unknown>, b: Record<string, unknown>): boolean =>
      Object.keys(a).length === Object.keys(b).length &&
      Object.entries(a).every(([k, v]) => b[k] !== undefined && parseQuantity(b[k]) === parseQuantity(v));
    if (Object.keys(podOverhead).length && !same(rcOverhead, podOverhead))
      forbid("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    spec.overhead = { ...rcOverhead };
  } else if (Object.keys(podOverhead).length)
    forbid('pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
  const sched = rc?.scheduling as Obj | undefined;
  if (!sched) return;
  const selector = { ...((spec.nodeSelector ?? {}) as Record<string, string>) };
  for (const [k, want] of Object.entries((sched.nodeSelector ?? {}) as Record<string, string>)) {
    if (selector[k] !== undefined && selector[k] !== want)
      forbid(
        `conflict: runtimeClass.scheduling.nodeSelector[${k}] = ${want}; pod.spec.nodeSelector[${k}] = ${selector[k]}`,
      );
    selector[k] = want;
  }
  if (Object.keys(selector).length) spec.nodeSelector = selector;
  const tolerations = [...((spec.tolerations ?? []) as Obj[])];
  for (const t of (sched.tolerations ?? []) as Obj[])
    if (!tolerations.some((x) => sameTolerations(x, t))) tolerations.push(t);
  if (tolerations.length) spec.tolerations = tolerations;
}
