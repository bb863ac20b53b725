// The StatefulSet controller's decisions, kept pure (upstream pkg/controller/
// statefulset): stable pod names, hostnames and claims per ordinal, which
// revision a new pod gets (partition), and one sync's steps — OrderedReady
// waits for each pod to be Running and Ready before the next and removes the
// highest ordinal first; Parallel does not wait; RollingUpdate replaces from
// the highest ordinal down to the partition, one pod at a time.
import type { KObj } from '../../kube/client.js';
import { LABEL_REVISION_HASH, revisionTemplate } from './controller-history.js';
import { isAvailable, isReady } from './workload-model.js';

export const LABEL_POD_NAME = 'statefulset.kubernetes.io/pod-name';
export const LABEL_POD_INDEX = 'apps.kubernetes.io/pod-index';

export const podName = (set: KObj, ordinal: number): string => `${set.metadata.name}-${ordinal}`;
export const claimName = (claim: KObj, set: KObj, ordinal: number): string =>
  `${claim.metadata.name}-${set.metadata.name}-${ordinal}`;

/** getOrdinal: the number after the set's name, or -1 for a pod not named as the set's. */
export function ordinalOf(set: KObj, pod: KObj): number {
  const m = /^(.*)-(\d+)$/.exec(pod.metadata.name ?? '');
  return m && m[1] === set.metadata.name ? Number(m[2]) : -1;
}

export const podRevision = (pod: KObj): string | undefined => pod.metadata.labels?.[LABEL_REVISION_HASH];

/** The claims a pod at this ordinal uses, as made from volumeClaimTemplates (labels: the set's selector's). */
export function claimsFor(set: KObj, ordinal: number): KObj[] {
  return ((set.spec?.volumeClaimTemplates ?? []) as KObj[]).map((t) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: claimName(t, set, ordinal),
      namespace: set.metadata.namespace,
      labels: { ...(t.metadata?.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
      ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
    },
    spec: structuredClone(t.spec ?? {}),
  }));
}

/** newVersionedStatefulSetPod: the revision's template with the pod's identity and storage. */
export function statefulPod(set: KObj, ordinal: number, revision: KObj): KObj {
  const t = revisionTemplate(revision);
  const name = podName(set, ordinal);
  const spec = (t.spec ?? {}) as KObj;
  spec.hostname = name;
  if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
  const claims = (set.spec?.volumeClaimTemplates ?? []) as KObj[];
  const volumes = ((spec.volumes ?? []) as KObj[]).filter((v) => !claims.some((c) => c.metadata?.name === v.name));
  for (const c of claims)
    volumes.push({ name: c.metadata.name, persistentVolumeClaim: { claimName: claimName(c, set, ordinal) } });
  if (volumes.length) spec.volumes = volumes;
  const labels = {
    ...(t.metadata?.labels ?? {}),
    [LABEL_POD_NAME]: name,
    [LABEL_POD_INDEX]: String(ordinal),
    [LABEL_REVISION_HASH]: revision.metadata.name,
  };
  return { metadata: { ...(t.metadata ?? {}), name, labels }, spec };
}

const phase = (p: KObj): string | undefined => p.status?.phase;
const terminating = (p: KObj): boolean => !!p.metadata.deletionTimestamp;
const runningAndReady = (p: KObj): boolean => phase(p) === 'Running' && isReady(p);
const healthy = (p: KObj, minReady: number, now: number): boolean =>
  runningAndReady(p) && !terminating(p) && isAvailable(p, minReady, now);

export interface StatefulPlan {
  /** Ordinals to create, each with the revision (current or update) its pod is made from. */
  create: { ordinal: number; revision: 'current' | 'update' }[];
  delete: { name: string; why: 'failed' | 'condemned' | 'update' }[];
  status: KObj;
  /** Waiting on a pod to be available for minReadySeconds: look again then. */
  recheckMs?: number;
}

/**
 * One sync (updateStatefulSet). `current` and `update` are the names of the
 * current and update revisions; pods are the set's own.
 */
export function planStatefulSet(
  set: KObj,
  pods: KObj[],
  current: string,
  update: string,
  now = Date.now(),
): StatefulPlan {
  const replicas = set.spec?.replicas ?? 1;
  const start = set.spec?.ordinals?.start ?? 0;
  const minReady = set.spec?.minReadySeconds ?? 0;
  const monotonic = set.spec?.podManagementPolicy !== 'Parallel';
  const rolling = set.spec?.updateStrategy?.type !== 'OnDelete';
  const partition = rolling ? (set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
  const slots: (KObj | undefined)[] = Array.from({ length: replicas }, () => undefined);
  const condemned: KObj[] = [];
  for (const p of pods) {
    const o = ordinalOf(set, p);
    if (o >= start && o < start + replicas) slots[o - start] = p;
    else if (o >= 0) condemned.push(p);
  }
  condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
  const plan: StatefulPlan = { create: [], delete: [], status: statefulStatus(set, pods, current, update, now) };
  const done = (): StatefulPlan => plan;

  for (let i = 0; i < replicas; i++) {
    const p = slots[i];
    const ordinal = start + i;
    if (!p) {
      // Below the partition a new pod keeps the current revision.
      plan.create.push({ ordinal, revision: rolling && ordinal < partition ? 'current' : 'update' });
      if (monotonic) return done();
      continue;
    }
    if (phase(p) === 'Failed' || phase(p) === 'Succeeded') {
      if (!terminating(p)) plan.delete.push({ name: p.metadata.name, why: 'failed' });
      if (monotonic) return done();
      continue;
    }
    if (!monotonic) continue;
    if (terminating(p) || !runningAndReady(p)) return done();
    if (!isAvailable(p, minReady, now)) {
      const since = Date.parse(
        ((p.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Ready')?.lastTransitionTime ?? '',
      );
      plan.recheckMs = Math.max(100, since + minReady * 1000 - now + 100);
      return done();
    }
  }
  // Scale down, highest ordinal first; OrderedReady only while every kept pod is healthy.
  for (const p of condemned) {
    if (terminating(p)) {
      if (monotonic) return done();
      continue;
    }
    if (monotonic && slots.some((s) => s && !healthy(s, minReady, now))) return done();
    plan.delete.push({ name: p.metadata.name, why: 'condemned' });
    if (monotonic) return done();
  }
  if (!rolling) return done();
  // RollingUpdate: from the highest ordinal down to the partition, one at a time.
  for (let i = replicas - 1; i >= partition - start && i >= 0; i--) {
    const p = slots[i];
    if (!p) return done();
    if (podRevision(p) !== update && !terminating(p)) {
      plan.delete.push({ name: p.metadata.name, why: 'update' });
      return done();
    }
    if (!healthy(p, minReady, now)) return done();
  }
  return done();
}

/** computeReplicaStatus, with the rollout completed once every pod is updated and ready. */
function statefulStatus(set: KObj, pods: KObj[], current: string, update: string, now: number): KObj {
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let currentReplicas = 0;
  let updated = 0;
  for (const p of pods) {
    if (phase(p)) replicas++;
    if (runningAndReady(p)) {
      ready++;
      if (isAvailable(p, set.spec?.minReadySeconds ?? 0, now)) available++;
    }
    if (phase(p) && !terminating(p)) {
      if (podRevision(p) === current) currentReplicas++;
      if (podRevision(p) === update) updated++;
    }
  }
  const status: KObj = {
    observedGeneration: set.metadata.generation,
    replicas,
    readyReplicas: ready,
    currentReplicas,
    updatedReplicas: updated,
    currentRevision: current,
    updateRevision: update,
    collisionCount: set.status?.collisionCount ?? 0,
    availableReplicas: available,
  };
  if (
    set.spec?.updateStrategy?.type !== 'OnDelete' &&
    updated === replicas &&
    ready === replicas &&
    replicas === (set.spec?.replicas ?? 1)
  ) {
    status.currentRevision = update;
    status.currentReplicas = updated;
  }
  // Both omitted when zero, as upstream's omitempty.
  for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas'] as const) if (!status[k]) delete status[k];
  return status;
}
