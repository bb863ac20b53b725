// deployment-progress: the Deployment's Progressing condition, as upstream's
// rollout status sync. Any step forward renews lastUpdateTime; no step for
// progressDeadlineSeconds turns it False with ProgressDeadlineExceeded, which
// `kubectl rollout status` reports as a failed rollout.
import type { KObj } from '../../kube/client.js';
import { rfc3339 } from '../../kube/time.js';

export const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';
const NEW_RS_AVAILABLE = 'NewReplicaSetAvailable';
const MAX_INT32 = 2 ** 31 - 1;

export interface RolloutCounts {
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
}

/** A condition that keeps its lastTransitionTime while the status stays, and its lastUpdateTime while the reason does too. */
export function condition(
  prev: KObj | undefined,
  type: string,
  status: string,
  reason: string,
  message: string,
  now: string,
): KObj {
  const same = prev && prev.status === status && prev.reason === reason;
  return {
    type,
    status,
    lastUpdateTime: same ? prev.lastUpdateTime : now,
    lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now,
    reason,
    message,
  };
}

/** Upstream's DeploymentProgressing: more updated, fewer old, more ready or more available replicas than last written. */
function progressed(before: Partial<RolloutCounts>, after: RolloutCounts): boolean {
  const oldBefore = (before.replicas ?? 0) - (before.updatedReplicas ?? 0);
  return (
    after.updatedReplicas > (before.updatedReplicas ?? 0) ||
    after.replicas - after.updatedReplicas < oldBefore ||
    after.readyReplicas > (before.readyReplicas ?? 0) ||
    after.availableReplicas > (before.availableReplicas ?? 0)
  );
}

export interface Progress {
  condition: KObj;
  /** When to look again for a timeout; unset once the rollout is complete or has timed out. */
  recheckMs?: number;
}

/**
 * The next Progressing condition of d, given this sync's counts. `created`
 * says the new ReplicaSet was made in this sync; `complete` that every
 * desired replica is updated and available.
 */
export function progressingCondition(
  d: KObj,
  newRS: KObj | undefined,
  counts: RolloutCounts,
  created: boolean,
  complete: boolean,
  nowMs = Date.now(),
): Progress {
  const now = rfc3339(new Date(nowMs));
  const last = ((d.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Progressing');
  const rsName = newRS?.metadata.name;
  if (d.spec?.paused)
    return { condition: condition(last, 'Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused', now) };
  // Resuming restarts the deadline clock.
  const prev =
    last?.reason === 'DeploymentPaused'
      ? condition(last, 'Progressing', 'Unknown', 'DeploymentResumed', 'Deployment is resumed', now)
      : last;
  // A complete rollout stays complete while no new template is rolling out, even if pods later fail.
  if (prev?.reason === NEW_RS_AVAILABLE && counts.replicas === counts.updatedReplicas) return { condition: prev };
  if (complete)
    return {
      condition: condition(
        prev,
        'Progressing',
        'True',
        NEW_RS_AVAILABLE,
        `ReplicaSet "${rsName}" has successfully progressed.`,
        now,
      ),
    };
  let next: KObj;
  if (created) next = fresh(prev, 'NewReplicaSetCreated', `Created new replica set "${rsName}"`, now);
  else if (!prev && rsName) next = fresh(prev, 'FoundNewReplicaSet', `Found new replica set "${rsName}"`, now);
  else if (!prev || progressed(d.status ?? {}, counts))
    next = fresh(
      prev,
      'ReplicaSetUpdated',
      rsName ? `ReplicaSet "${rsName}" is progressing.` : `Deployment "${d.metadata.name}" is progressing.`,
      now,
    );
  else next = prev;
  const deadline = d.spec?.progressDeadlineSeconds ?? 600;
  // MaxInt32 is upstream's "no deadline".
  if (next.reason === PROGRESS_DEADLINE_EXCEEDED || deadline >= MAX_INT32) return { condition: next };
  const left = Date.parse(next.lastUpdateTime) + deadline * 1000 - nowMs;
  if (left < 0)
    return {
      condition: condition(
        next,
        'Progressing',
        'False',
        PROGRESS_DEADLINE_EXCEEDED,
        `ReplicaSet "${rsName}" has timed out progressing.`,
        now,
      ),
    };
  return { condition: next, recheckMs: left + 1000 };
}

/** A True Progressing condition that counts as progress: lastUpdateTime is now even when the reason stays. */
function fresh(prev: KObj | undefined, reason: string, message: string, now: string): KObj {
  return { ...condition(prev, 'Progressing', 'True', reason, message, now), lastUpdateTime: now };
}
