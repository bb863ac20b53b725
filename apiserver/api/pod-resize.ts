// The pods/resize subresource (in-place resize, upstream 1.33): a write that
// may change only the cpu and memory requests and limits (and resize policy)
// of containers and sidecars. dropNonResizeUpdates keeps everything else of
// the stored pod; ValidatePodResize then refuses what a running container
// cannot take: a QoS class change, a request or limit removed, a memory limit
// lowered without a restart, other resources changed.
import { canonicalJson } from '../../kube/hash.js';
import { qosClass } from '../../kube/pod-qos.js';
import { validatePodSpec } from '../../kube/pod-validation.js';
import { parseQuantity } from '../../kube/quantity.js';
import type { Obj } from '../storage/store.js';
import type { Cause } from './errors.js';

const MIRROR = 'kubernetes.io/config.mirror';
const RESIZABLE = ['cpu', 'memory'];
const isSidecar = (c: Obj): boolean => c.restartPolicy === 'Always';
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

/** The stored pod with only the resources and resize policies of the body's containers (matched by name). */
export function applyResize(cur: Obj, body: Obj): Obj {
  const next = clone(cur);
  for (const list of ['containers', 'initContainers']) {
    const byName = new Map(((body.spec?.[list] ?? []) as Obj[]).map((c) => [c.name as string, c]));
    for (const c of (next.spec?.[list] ?? []) as Obj[]) {
      const from = byName.get(c.name);
      if (!from) continue;
      if (from.resources === undefined) delete c.resources;
      else c.resources = clone(from.resources);
      if (from.resizePolicy === undefined) delete c.resizePolicy;
      else c.resizePolicy = clone(from.resizePolicy);
    }
  }
  return next;
}

const qty = (v: unknown): number | undefined => {
  if (v === undefined || v === null) return undefined;
  try {
    return parseQuantity(v as string);
  } catch {
    return undefined;
  }
};
const keys = (o: unknown): string[] => Object.keys((o ?? {}) as Obj);
const canon = (v: unknown): string => canonicalJson(v ?? null);

/** validateContainerResize: requests and limits are never removed; a memory limit goes down only with RestartContainer. */
function validateContainerResize(next: Obj, old: Obj, path: string): Cause[] {
  const causes: Cause[] = [];
  const nr = (next.resources ?? {}) as Obj;
  const or = (old.resources ?? {}) as Obj;
  if (keys(or.requests).some((k) => nr.requests?.[k] === undefined))
    causes.push({
      field: `${path}.requests`,
      reason: 'FieldValueForbidden',
      message: 'Forbidden: resource requests cannot be removed',
    });
  if (keys(or.limits).some((k) => nr.limits?.[k] === undefined))
    causes.push({
      field: `${path}.limits`,
      reason: 'FieldValueForbidden',
      message: 'Forbidden: resource limits cannot be removed',
    });
  const memPolicy = ((old.resizePolicy ?? []) as Obj[]).find((p) => p.resourceName === 'memory')?.restartPolicy;
  if (memPolicy === undefined || memPolicy === 'NotRequired') {
    const n = qty(nr.limits?.memory);
    const o = qty(or.limits?.memory);
    if (n !== undefined && o !== undefined && n < o)
      causes.push({
        field: `${path}.limits[memory]`,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer',
      });
  }
  return causes;
}

/** Whether anything but cpu and memory requests and limits (and the resize policy) differs between the two. */
function nonResizableChanged(now: Obj, old: Obj): boolean {
  const others = (c: Obj): Obj => {
    const res: Obj = {};
    for (const part of ['requests', 'limits']) {
      const rest = Object.fromEntries(
        Object.entries((c.resources?.[part] ?? {}) as Obj).filter(([k]) => !RESIZABLE.includes(k)),
      );
      if (keys(rest).length) res[part] = rest;
    }
    return { ...c, resources: res, resizePolicy: undefined };
  };
  return canon(others(now)) !== canon(others(old));
}

/** ValidatePodResize, for a pod made by applyResize. */
export function validatePodResize(cur: Obj, next: Obj): Cause[] {
  if (cur.metadata?.annotations?.[MIRROR] !== undefined)
    return [{ field: '', reason: 'FieldValueForbidden', message: 'Forbidden: static pods cannot be resized' }];
  if (cur.spec?.os?.name === 'windows')
    return [{ field: '', reason: 'FieldValueForbidden', message: 'Forbidden: windows pods cannot be resized' }];
  const causes: Cause[] = validatePodSpec(next.spec, 'spec');
  const oldQos = (cur.status?.qosClass as string | undefined) || qosClass(cur.spec);
  if (oldQos !== qosClass(next.spec))
    causes.push({
      field: 'spec',
      message: `Invalid value: ${JSON.stringify(next.status?.qosClass ?? '')}: Pod QOS Class may not change as a result of resizing`,
    });
  // Version skew (upstream isPodResizeRequestSupported): a running pod whose kubelet reports no container resources cannot act on a resize.
  if (cur.status?.phase === 'Running') {
    const running = ((cur.status?.containerStatuses ?? []) as Obj[]).find((s) => s.state?.running);
    if (running && running.resources === undefined)
      causes.push({
        field: 'spec',
        reason: 'FieldValueForbidden',
        message: 'Forbidden: Pod running on node without support for resize',
      });
  }
  const oldInit = (cur.spec?.initContainers ?? []) as Obj[];
  const newInit = (next.spec?.initContainers ?? []) as Obj[];
  let otherChanged = false;
  let sidecarChanged = false;
  oldInit.forEach((old, i) => {
    const now = newInit[i] ?? {};
    if (!isSidecar(old)) {
      if (canon(now.resources) !== canon(old.resources) || canon(now.resizePolicy) !== canon(old.resizePolicy))
        causes.push({
          field: `spec.initContainers[${i}].resources`,
          reason: 'FieldValueForbidden',
          message: 'Forbidden: resources for non-sidecar init containers are immutable',
        });
      return;
    }
    causes.push(...validateContainerResize(now, old, `spec.initContainers[${i}].resources`));
    if (nonResizableChanged(now, old)) sidecarChanged = true;
  });
  ((cur.spec?.containers ?? []) as Obj[]).forEach((old, i) => {
    const now = ((next.spec?.containers ?? []) as Obj[])[i] ?? {};
    causes.push(...validateContainerResize(now, old, `spec.containers[${i}].resources`));
    if (nonResizableChanged(now, old)) otherChanged = true;
  });
  if (sidecarChanged)
    causes.push({
      field: 'spec',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: only cpu and memory resources for sidecar containers are mutable',
    });
  if (otherChanged)
    causes.push({
      field: 'spec',
      reason: 'FieldValueForbidden',
      message: 'Forbidden: only cpu and memory resources are mutable',
    });
  return causes;
}
