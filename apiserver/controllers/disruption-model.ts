// PodDisruptionBudget arithmetic (upstream pkg/controller/disruption and the
// eviction subresource's checks): expected, desired and current healthy pods,
// and how many disruptions are allowed now.
import type { KObj } from '../../kube/client.js';

const ready = (p: KObj): boolean =>
  ((p.status?.conditions ?? []) as KObj[]).some((c) => c.type === 'Ready' && c.status === 'True');
/** Counts toward the budget: not being deleted, not finished, Ready. */
export const isHealthy = (p: KObj): boolean =>
  !p.metadata.deletionTimestamp && p.status?.phase === 'Running' && ready(p);

/** An int-or-percent of a total; percentages round up (upstream GetScaledValueFromIntOrPercent with roundUp). */
export function scaledValue(v: number | string, total: number): number | undefined {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  return m ? Math.ceil((Number(m[1]) * total) / 100) : undefined;
}

export interface BudgetInput {
  pdb: KObj;
  /** Pods the selector matches in the PDB's namespace. */
  pods: KObj[];
  /** Replicas the pods' controllers want (for percentages and maxUnavailable), or undefined when some pod has no scalable controller. */
  controllerScale: number | undefined;
  /** DisruptedPods entries still pending (evicted, not yet deleted) by pod name. */
  disrupted: Record<string, string>;
}

export interface BudgetStatus {
  expectedPods: number;
  desiredHealthy: number;
  currentHealthy: number;
  disruptionsAllowed: number;
}

/** upstream getExpectedPodCount + the status update: an int minAvailable counts the matching pods; the rest need the controllers' scale. */
export function budget(i: BudgetInput): BudgetStatus | { error: string } {
  const spec = (i.pdb.spec ?? {}) as KObj;
  const currentHealthy = i.pods.filter((p) => isHealthy(p) && !i.disrupted[p.metadata.name]).length;
  let expectedPods: number;
  let desiredHealthy: number;
  if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
    if (i.controllerScale === undefined) return { error: 'found no controllers for some pods' };
    expectedPods = i.controllerScale;
    const max = scaledValue(spec.maxUnavailable, expectedPods);
    if (max === undefined) return { error: `invalid maxUnavailable ${String(spec.maxUnavailable)}` };
    desiredHealthy = Math.max(0, expectedPods - max);
  } else if (typeof spec.minAvailable === 'string') {
    if (i.controllerScale === undefined) return { error: 'found no controllers for some pods' };
    expectedPods = i.controllerScale;
    const min = scaledValue(spec.minAvailable, expectedPods);
    if (min === undefined) return { error: `invalid minAvailable ${spec.minAvailable}` };
    desiredHealthy = min;
  } else {
    expectedPods = i.pods.length;
    desiredHealthy = typeof spec.minAvailable === 'number' ? spec.minAvailable : 0;
  }
  return {
    expectedPods,
    desiredHealthy,
    currentHealthy,
    disruptionsAllowed: Math.max(0, currentHealthy - desiredHealthy),
  };
}

/** The DisruptionAllowed condition (upstream UpdateDisruptionAllowedCondition). */
export function disruptionCondition(allowed: number, old: KObj | undefined, now: string, error?: string): KObj {
  const c = error
    ? { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: error }
    : allowed > 0
      ? { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '' }
      : { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '' };
  return { ...c, lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now };
}
