// Pure decisions of the Job controller (upstream pkg/controller/job, 1.32):
// which finished pods to count and how, whether the Job succeeded or failed
// (backoffLimit, activeDeadlineSeconds, podFailurePolicy), which pods to
// create (NonIndexed counts, Indexed indexes) and the status to write.
import type { KObj } from '../../kube/client.js';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
export const LABEL_CONTROLLER_UID = 'batch.kubernetes.io/controller-uid';
export const LABEL_JOB_NAME = 'batch.kubernetes.io/job-name';
export const LEGACY_CONTROLLER_UID = 'controller-uid';
export const LEGACY_JOB_NAME = 'job-name';
export const COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
/** Backoff before re-creating after failures: 10 s doubling, at most 6 min (upstream DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff). */
export const BACKOFF_BASE_MS = 10_000;
export const BACKOFF_MAX_MS = 360_000;

export const condition = (job: KObj, type: string): KObj | undefined =>
  ((job.status?.conditions ?? []) as KObj[]).find((c) => c.type === type && c.status === 'True');
export const isFinished = (job: KObj): boolean => !!(condition(job, 'Complete') || condition(job, 'Failed'));
export const hasTrackingFinalizer = (p: KObj): boolean =>
  ((p.metadata.finalizers ?? []) as string[]).includes(JOB_TRACKING_FINALIZER);
export const isIndexed = (job: KObj): boolean => job.spec?.completionMode === 'Indexed';

/** The completion index of a pod of an Indexed Job (annotation, then label), or undefined. */
export function podIndex(p: KObj): number | undefined {
  const v = p.metadata.annotations?.[COMPLETION_INDEX] ?? p.metadata.labels?.[COMPLETION_INDEX];
  const n = Number(v);
  return v !== undefined && Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** Only Failed pods are replaced (podReplacementPolicy Failed, or a podFailurePolicy): a pod being deleted waits for its phase. */
const onlyReplaceFailed = (job: KObj): boolean =>
  job.spec?.podReplacementPolicy === 'Failed' || !!job.spec?.podFailurePolicy;

/** Upstream's isPodFailed: Failed, or (unless only failed pods are replaced) being deleted before it succeeded — an orphan may never reach Failed. */
export function isPodFailed(job: KObj, p: KObj): boolean {
  if (p.status?.phase === 'Failed') return true;
  if (onlyReplaceFailed(job)) return false;
  return !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded';
}
export const isPodSucceeded = (p: KObj): boolean => p.status?.phase === 'Succeeded';
export const isTerminating = (p: KObj): boolean =>
  !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
export const isPodActive = (p: KObj): boolean =>
  !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** "1,3-5,7" as upstream writes completedIndexes. */
export function formatIndexes(xs: Iterable<number>): string {
  const s = [...new Set(xs)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    out.push(j === i ? String(s[i]) : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

export function parseIndexes(v: string | undefined): Set<number> {
  const out = new Set<number>();
  for (const part of (v ?? '').split(',').filter(Boolean)) {
    const [a, b] = part.split('-').map(Number) as [number, number | undefined];
    for (let i = a; i <= (b ?? a); i++) out.add(i);
  }
  return out;
}

export interface FailureMatch {
  action: 'FailJob' | 'Ignore' | 'Count' | 'FailIndex';
  message?: string;
}

/** The first podFailurePolicy rule a failed pod matches (upstream matchPodFailurePolicy), or undefined (count it). */
export function matchPodFailurePolicy(job: KObj, p: KObj): FailureMatch | undefined {
  const rules = (job.spec?.podFailurePolicy?.rules ?? []) as KObj[];
  const who = `${p.metadata.namespace}/${p.metadata.name}`;
  for (const [i, r] of rules.entries()) {
    const on = r.onExitCodes as KObj | undefined;
    if (on) {
      const statuses = [
        ...((p.status?.initContainerStatuses ?? []) as KObj[]),
        ...((p.status?.containerStatuses ?? []) as KObj[]),
      ];
      for (const s of statuses) {
        const code = s.state?.terminated?.exitCode as number | undefined;
        if (code === undefined || code === 0) continue;
        if (on.containerName && on.containerName !== s.name) continue;
        const inValues = ((on.values ?? []) as number[]).includes(code);
        if (on.operator === 'In' ? inValues : !inValues) {
          return {
            action: r.action,
            message: `Container ${s.name} for pod ${who} failed with exit code ${code} matching ${r.action} rule at index ${i}`,
          };
        }
      }
    }
    for (const pat of (r.onPodConditions ?? []) as KObj[]) {
      const c = ((p.status?.conditions ?? []) as KObj[]).find(
        (x) => x.type === pat.type && x.status === (pat.status ?? 'True'),
      );
      if (c)
        return {
          action: r.action,
          message: `Pod ${who} has condition ${pat.type} matching ${r.action} rule at index ${i}`,
        };
    }
  }
  return undefined;
}

export interface Counted {
  /** uids newly finished, to record in uncountedTerminatedPods and then count. */
  succeeded: KObj[];
  failed: KObj[];
  /** Failed pods a podFailurePolicy rule says to ignore: their finalizer goes, nothing is counted. */
  ignored: KObj[];
  /** The first FailJob match, which fails the Job. */
  failJob?: string;
  /** Indexes a FailIndex rule failed at once (backoffLimitPerIndex). */
  failIndexes: number[];
}

/** Finished pods that still carry the tracking finalizer and are not recorded yet. (Pods the controller deletes itself lose the finalizer first and are never counted.) */
export function newlyFinished(job: KObj, pods: KObj[]): Counted {
  const out: Counted = { succeeded: [], failed: [], ignored: [], failIndexes: [] };
  const un = (job.status?.uncountedTerminatedPods ?? {}) as { succeeded?: string[]; failed?: string[] };
  const seen = new Set([...(un.succeeded ?? []), ...(un.failed ?? [])]);
  for (const p of pods) {
    if (!hasTrackingFinalizer(p) || seen.has(p.metadata.uid)) continue;
    if (isPodSucceeded(p)) out.succeeded.push(p);
    else if (isPodFailed(job, p)) {
      const m = p.status?.phase === 'Failed' ? matchPodFailurePolicy(job, p) : undefined;
      if (m?.action === 'Ignore') out.ignored.push(p);
      else {
        out.failed.push(p);
        if (m?.action === 'FailJob' && !out.failJob) out.failJob = m.message;
        if (m?.action === 'FailIndex' && podIndex(p) !== undefined) out.failIndexes.push(podIndex(p)!);
      }
    }
  }
  return out;
}

/** Indexes of an Indexed Job that still need a pod: not completed, not held by an active pod. */
export function indexesToCreate(job: KObj, active: KObj[], completed: Set<number>, room: number): number[] {
  const completions = job.spec?.completions ?? 1;
  const busy = new Set(active.map(podIndex).filter((i): i is number => i !== undefined));
  const out: number[] = [];
  for (let i = 0; i < completions && out.length < room; i++) if (!completed.has(i) && !busy.has(i)) out.push(i);
  return out;
}

/** How many pods a NonIndexed Job should add now (upstream manageJob's wantActive). */
export function podsToCreate(job: KObj, activeCount: number, succeeded: number): number {
  const parallelism = job.spec?.parallelism ?? 1;
  const completions = job.spec?.completions as number | undefined;
  let want: number;
  if (completions === undefined || completions === null)
    want = succeeded > 0 ? 0 : parallelism; // a work queue: done once one succeeded
  else want = Math.min(parallelism, Math.max(0, completions - succeeded));
  return Math.max(0, want - activeCount);
}

/** Whether the Job's pods have done what it asks (upstream: CompletionsReached). */
export function completionsReached(
  job: KObj,
  succeeded: number,
  activeCount: number,
  completedIndexes: Set<number>,
): boolean {
  const completions = job.spec?.completions as number | undefined;
  if (isIndexed(job)) return completedIndexes.size >= (completions ?? 1);
  if (completions === undefined || completions === null) return succeeded > 0 && activeCount === 0;
  return succeeded >= completions;
}

/** The wait before pods are re-created after failures: 10 s × 2^(failures-1), at most 6 min. */
export function failureBackoffMs(failures: number): number {
  if (failures <= 0) return 0;
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures - 1, 20));
}

/** A pod of the Job from its template (labels, finalizer, owner; index, env and hostname for Indexed). */
export const INDEX_FAILURE_COUNT = 'batch.kubernetes.io/job-index-failure-count';
/** The controller a Job's spec.managedBy names when the built-in one runs it. */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';

/** How often an index has failed: one more than the count its latest failed pod carried (upstream getNewIndexFailureCounts). */
export function indexFailures(job: KObj, pods: KObj[], index: number): number {
  let n = 0;
  for (const p of pods)
    if (podIndex(p) === index && isPodFailed(job, p))
      n = Math.max(n, Number(p.metadata.annotations?.[INDEX_FAILURE_COUNT] ?? 0) + 1);
  return n;
}

/** backoffLimitPerIndex: the indexes whose failures passed their limit. */
export function exhaustedIndexes(job: KObj, pods: KObj[]): number[] {
  const limit = job.spec?.backoffLimitPerIndex;
  if (limit === undefined || limit === null || !isIndexed(job)) return [];
  const idx = new Set(
    pods
      .filter((p) => isPodFailed(job, p))
      .map(podIndex)
      .filter((i): i is number => i !== undefined),
  );
  return [...idx].filter((i) => indexFailures(job, pods, i) > limit);
}

/** successPolicy (Indexed Jobs): the first rule the completed indexes satisfy, as "Matched rules at index N". */
export function matchSuccessPolicy(job: KObj, completed: Set<number>): string | undefined {
  for (const [i, r] of ((job.spec?.successPolicy?.rules ?? []) as KObj[]).entries()) {
    const want = r.succeededIndexes !== undefined ? parseIndexes(r.succeededIndexes) : undefined;
    const have = want ? [...want].filter((x) => completed.has(x)).length : completed.size;
    const ok =
      r.succeededCount !== undefined && r.succeededCount !== null
        ? have >= r.succeededCount
        : want !== undefined && have === want.size;
    if (ok) return `Matched rules at index ${i}`;
  }
  return undefined;
}

export function podFor(job: KObj, index: number | undefined, ownerRef: KObj, indexFailureCount = 0): KObj {
  const t = (job.spec?.template ?? {}) as KObj;
  const spec = structuredClone(t.spec ?? {}) as KObj;
  const labels = { ...((t.metadata?.labels ?? {}) as Record<string, string>) };
  const annotations = { ...((t.metadata?.annotations ?? {}) as Record<string, string>) };
  const name = job.metadata.name as string;
  if (index !== undefined) {
    annotations[COMPLETION_INDEX] = String(index);
    labels[COMPLETION_INDEX] = String(index);
    if (job.spec?.backoffLimitPerIndex !== undefined && job.spec?.backoffLimitPerIndex !== null)
      annotations[INDEX_FAILURE_COUNT] = String(indexFailureCount);
    spec.hostname ??= `${name}-${index}`;
    const env = {
      name: 'JOB_COMPLETION_INDEX',
      valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } },
    };
    for (const c of [...((spec.initContainers ?? []) as KObj[]), ...((spec.containers ?? []) as KObj[])]) {
      if (!((c.env ?? []) as KObj[]).some((e) => e.name === 'JOB_COMPLETION_INDEX'))
        c.env = [...((c.env ?? []) as KObj[]), env];
    }
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: index !== undefined ? `${name}-${index}-` : `${name}-`,
      labels,
      ...(Object.keys(annotations).length ? { annotations } : {}),
      finalizers: [JOB_TRACKING_FINALIZER],
      ownerReferences: [ownerRef],
    },
    spec,
  };
}

/** A condition as upstream's job controller writes it (with probe and transition times). */
export function jobCondition(
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  now: string,
): KObj {
  return { type, status, reason, message, lastProbeTime: now, lastTransitionTime: now };
}

/** Sets (or replaces) a condition of that type, keeping the transition time when the status did not change. */
export function setCondition(conditions: KObj[], c: KObj): KObj[] {
  const old = conditions.find((x) => x.type === c.type);
  if (old && old.status === c.status && old.reason === c.reason && old.message === c.message) return conditions;
  const next = old && old.status === c.status ? { ...c, lastTransitionTime: old.lastTransitionTime } : c;
  return [...conditions.filter((x) => x.type !== c.type), next];
}
