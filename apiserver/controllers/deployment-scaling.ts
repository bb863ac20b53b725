// deployment-scaling: what upstream's deployment controller does when
// spec.replicas changes mid-rollout (a "scaling event": an active
// ReplicaSet's desired-replicas annotation differs). One active ReplicaSet
// takes the new count; a saturated new one ends the old ones; otherwise the
// change is spread over the active ReplicaSets in proportion to their size,
// so availability scales with the Deployment instead of waiting for the rollout.
import type { KObj } from '../../kube/client.js';
import { ANN_DESIRED, ANN_MAX, surgeAndUnavailable } from './workload-model.js';

const size = (rs: KObj): number => rs.spec?.replicas ?? 0;
const created = (rs: KObj): number => Date.parse(rs.metadata.creationTimestamp ?? '') || 0;
const annotated = (rs: KObj, key: string): number | undefined => {
  const v = rs.metadata.annotations?.[key];
  return v === undefined || v === '' || !Number.isFinite(Number(v)) ? undefined : Number(v);
};

export function isScalingEvent(d: KObj, all: KObj[]): boolean {
  const desired = d.spec?.replicas ?? 1;
  return all.some(
    (rs) => size(rs) > 0 && annotated(rs, ANN_DESIRED) !== undefined && annotated(rs, ANN_DESIRED) !== desired,
  );
}

/**
 * name -> replicas for the ReplicaSets a scaling event resizes (upstream's
 * scale()). Every active ReplicaSet is listed in the proportional case, even
 * at its old size, so that its desired-replicas annotation catches up.
 */
export function scaledSizes(d: KObj, newRS: KObj | undefined, old: KObj[]): Map<string, number> {
  const desired = d.spec?.replicas ?? 1;
  const out = new Map<string, number>();
  const active = (newRS ? [...old, newRS] : old).filter((rs) => size(rs) > 0);
  if (active.length <= 1) {
    const target = active[0] ?? newRS ?? [...old].sort((a, b) => created(b) - created(a))[0];
    if (target && size(target) !== desired) out.set(target.metadata.name, desired);
    return out;
  }
  if (
    newRS &&
    annotated(newRS, ANN_DESIRED) === desired &&
    size(newRS) === desired &&
    (newRS.status?.availableReplicas ?? 0) === desired
  ) {
    for (const rs of old) if (size(rs) > 0) out.set(rs.metadata.name, 0);
    return out;
  }
  if (d.spec?.strategy?.type === 'Recreate') return out;
  const { maxSurge } = surgeAndUnavailable(d);
  const allowed = desired > 0 ? desired + maxSurge : 0;
  const toAdd = allowed - active.reduce((s, rs) => s + size(rs), 0);
  // Growing favours the biggest and newest, shrinking the biggest and oldest.
  const sorted = [...active].sort(
    (a, b) => size(b) - size(a) || (toAdd > 0 ? created(b) - created(a) : created(a) - created(b)),
  );
  let added = 0;
  for (const rs of sorted) {
    const p = proportion(rs, d, maxSurge, toAdd, added);
    out.set(rs.metadata.name, size(rs) + p);
    added += p;
  }
  // Rounding leftovers go to the first one.
  const first = sorted[0]!.metadata.name as string;
  out.set(first, Math.max(0, out.get(first)! + toAdd - added));
  return out;
}

/** GetProportion: this ReplicaSet's share of toAdd, bounded by what is left of it. */
function proportion(rs: KObj, d: KObj, maxSurge: number, toAdd: number, added: number): number {
  if (size(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const desired = d.spec?.replicas ?? 1;
  let fraction: number;
  if (desired === 0) fraction = -size(rs);
  else {
    // Its size when the Deployment last had a size: the max-replicas annotation, else status.replicas.
    const before = annotated(rs, ANN_MAX) ?? d.status?.replicas ?? 0;
    fraction = before > 0 ? Math.round((size(rs) * (desired + maxSurge)) / before) - size(rs) : 0;
  }
  const left = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, left) : Math.max(fraction, left);
}
