// Pure helpers of the ReplicaSet and Deployment controllers: pod readiness
// and availability, controller references, the pod-template-hash, and the
// rolling-update arithmetic of upstream's deployment controller.
import { type KObj, KubeApiError } from '../../kube/client.js';
import { canonicalJson } from '../../kube/hash.js';

export const POD_TEMPLATE_HASH = 'pod-template-hash';
export const ANN_REVISION = 'deployment.kubernetes.io/revision';
export const ANN_REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const ANN_DESIRED = 'deployment.kubernetes.io/desired-replicas';
export const ANN_MAX = 'deployment.kubernetes.io/max-replicas';

/** The Deployment annotations upstream never copies to its ReplicaSets (deployment_util.go annotationsToSkip). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  ANN_REVISION,
  ANN_REVISION_HISTORY,
  ANN_DESIRED,
  ANN_MAX,
  'deprecated.deployment.rollback.to',
]);

/**
 * The new ReplicaSet's annotations with the Deployment's copied in (kubernetes.io/change-cause for `kubectl rollout
 * history`, and any other), as upstream's copyDeploymentAnnotationsToReplicaSet; undefined when nothing changes.
 */
export function withDeploymentAnnotations(
  deployment: Record<string, string> | undefined,
  rs: Record<string, string> | undefined,
): Record<string, string> | undefined {
  const out = { ...(rs ?? {}) };
  let changed = false;
  for (const [k, v] of Object.entries(deployment ?? {})) {
    if (NOT_COPIED.has(k) || out[k] === v) continue;
    out[k] = v;
    changed = true;
  }
  return changed ? out : undefined;
}

/** For .catch on a read or delete: a 404 is undefined (the object is gone), anything else is thrown. */
export const notFoundOk = (e: unknown): undefined => {
  if (e instanceof KubeApiError && e.code === 404) return undefined;
  throw e;
};

export const controllerRef = (o: KObj): KObj | undefined =>
  ((o.metadata.ownerReferences ?? []) as KObj[]).find((r) => r.controller === true);
export const ownedBy = (o: KObj, owner: KObj): boolean => controllerRef(o)?.uid === owner.metadata.uid;

export function ownerRefTo(owner: KObj): KObj {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Not being deleted and not finished: it counts toward replicas. */
export const isActive = (p: KObj): boolean =>
  !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

const readyCondition = (p: KObj): KObj | undefined =>
  ((p.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Ready');
export const isReady = (p: KObj): boolean => readyCondition(p)?.status === 'True';

/** Ready for at least minReadySeconds. */
export function isAvailable(p: KObj, minReadySeconds: number, now = Date.now()): boolean {
  const c = readyCondition(p);
  if (c?.status !== 'True') return false;
  if (!minReadySeconds) return true;
  const since = Date.parse(c.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= now;
}

/** upstream rand.SafeEncodeString: the decimal form mapped onto an alphabet without vowels. */
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';
export const safeEncode = (s: string): string => [...s].map((c) => SAFE[c.charCodeAt(0) % SAFE.length]).join('');

/** The pod-template-hash of a template (FNV-32a of its canonical JSON, plus the collision count). */
export function templateHash(template: KObj, collisionCount = 0): string {
  let h = 0x811c9dc5;
  const feed = (s: string): void => {
    for (const b of Buffer.from(s, 'utf8')) {
      h ^= b;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  };
  feed(canonicalJson(template));
  if (collisionCount) feed(String(collisionCount));
  return safeEncode(String(h));
}

/**
 * Templates equal but for the pod-template-hash label (upstream EqualIgnoreHash).
 * Compared as upstream's typed structs would be: null, {} and [] are absent,
 * since a Go client writes `creationTimestamp: null` and `resources: {}` into
 * a template it copied (e.g. `kubectl rollout undo`).
 */
export function sameTemplate(a: KObj, b: KObj): boolean {
  const strip = (t: KObj): string => {
    const c = (withoutEmpty(t) ?? {}) as KObj;
    if (c.metadata?.labels) delete c.metadata.labels[POD_TEMPLATE_HASH];
    return canonicalJson(c);
  };
  return strip(a) === strip(b);
}

function withoutEmpty(v: unknown): unknown {
  if (v === null) return undefined;
  if (Array.isArray(v)) {
    const items = v.map(withoutEmpty).filter((x) => x !== undefined);
    return items.length ? items : undefined;
  }
  if (typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const kept = withoutEmpty(x);
    if (kept !== undefined) out[k] = kept;
  }
  return Object.keys(out).length ? out : undefined;
}

/** An int-or-percent against a total (intstr.GetScaledValueFromIntOrPercent). */
export function scaled(v: number | string | undefined, total: number, roundUp: boolean, dflt: string): number {
  const x = v ?? dflt;
  if (typeof x === 'number') return x;
  const m = /^(\d+)%$/.exec(x);
  if (!m) return Number(x) || 0;
  const f = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(f) : Math.floor(f);
}

/** maxSurge and maxUnavailable of a RollingUpdate Deployment; both 0 would deadlock, so unavailable becomes 1. */
export function surgeAndUnavailable(d: KObj): { maxSurge: number; maxUnavailable: number } {
  const desired = d.spec?.replicas ?? 1;
  const ru = d.spec?.strategy?.rollingUpdate ?? {};
  const maxSurge = scaled(ru.maxSurge, desired, true, '25%');
  let maxUnavailable = scaled(ru.maxUnavailable, desired, false, '25%');
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

const spec = (rs: KObj): number => rs.spec?.replicas ?? 0;
const available = (rs: KObj): number => rs.status?.availableReplicas ?? 0;

/** How many replicas the new ReplicaSet may have now (NewRSNewReplicas). */
export function newRSReplicas(d: KObj, newRS: KObj | undefined, all: KObj[]): number {
  const desired = d.spec?.replicas ?? 1;
  const cur = newRS ? spec(newRS) : 0;
  if (d.spec?.strategy?.type === 'Recreate') return desired;
  const { maxSurge } = surgeAndUnavailable(d);
  const total = all.reduce((s, rs) => s + spec(rs), 0);
  const maxTotal = desired + maxSurge;
  if (total >= maxTotal) return cur;
  return cur + Math.min(maxTotal - total, desired - cur);
}

/**
 * New replica counts for the old ReplicaSets (oldest first) during a rolling
 * update: first their unavailable pods, then available ones while enough stay
 * available (reconcileOldReplicaSets). Returns name -> new replicas for those that change.
 */
export function scaleDownOld(d: KObj, newRS: KObj | undefined, old: KObj[]): Map<string, number> {
  const out = new Map<string, number>();
  const desired = d.spec?.replicas ?? 1;
  const oldCount = old.reduce((s, rs) => s + spec(rs), 0);
  if (!oldCount) return out;
  const all = newRS ? [...old, newRS] : old;
  const allCount = all.reduce((s, rs) => s + spec(rs), 0);
  const { maxUnavailable } = surgeAndUnavailable(d);
  const minAvailable = desired - maxUnavailable;
  const newUnavailable = newRS ? spec(newRS) - available(newRS) : 0;
  let room = allCount - minAvailable - newUnavailable;
  if (room <= 0) return out;
  const sorted = [...old].sort(
    (a, b) =>
      Date.parse(a.metadata.creationTimestamp) - Date.parse(b.metadata.creationTimestamp) ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  const next = new Map(sorted.map((rs) => [rs.metadata.name as string, spec(rs)]));
  // Unhealthy replicas first: removing them costs no availability.
  for (const rs of sorted) {
    if (room <= 0) break;
    const unhealthy = Math.max(0, spec(rs) - available(rs));
    const n = Math.min(unhealthy, room);
    if (n > 0) {
      next.set(rs.metadata.name, spec(rs) - n);
      room -= n;
    }
  }
  const availableNow = all.reduce((s, rs) => s + available(rs), 0);
  let budget = availableNow - minAvailable;
  for (const rs of sorted) {
    if (budget <= 0) break;
    const cur = next.get(rs.metadata.name)!;
    const n = Math.min(cur, budget);
    if (n > 0) {
      next.set(rs.metadata.name, cur - n);
      budget -= n;
    }
  }
  for (const rs of sorted)
    if (next.get(rs.metadata.name) !== spec(rs)) out.set(rs.metadata.name, next.get(rs.metadata.name)!);
  return out;
}

/** Which of `pods` to delete first when scaling down (upstream ActivePods ranking, simplified). */
export function deletionOrder(pods: KObj[]): KObj[] {
  const rank = (p: KObj): number[] => [
    p.spec?.nodeName ? 1 : 0,
    p.status?.phase === 'Pending' ? 0 : p.status?.phase === 'Running' ? 2 : 1,
    isReady(p) ? 1 : 0,
    -((p.status?.containerStatuses ?? []) as KObj[]).reduce((s, c) => s + (c.restartCount ?? 0), 0),
    -Date.parse(p.metadata.creationTimestamp ?? '0'),
  ];
  return [...pods].sort((a, b) => {
    const ra = rank(a);
    const rb = rank(b);
    for (let i = 0; i < ra.length; i++) if (ra[i] !== rb[i]) return ra[i]! - rb[i]!;
    return 0;
  });
}
