// Pure decisions of the CronJob controller (upstream pkg/controller/cronjob,
// v2): schedules (standard five fields and @-descriptors, in spec.timeZone or
// the controller's zone), the most recent missed start, job names, and the
// Job made from the template.
import { CronExpressionParser } from 'cron-parser';

import type { KObj } from '../../kube/client.js';
import { rfc3339 } from '../../kube/time.js';

export const SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Why a schedule is not one upstream accepts, or undefined. */
export function scheduleError(schedule: string): string | undefined {
  const s = schedule.trim();
  if (s.includes('TZ')) return 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead';
  if (s.startsWith('@')) return DESCRIPTORS[s] ? undefined : `unrecognized descriptor: ${s}`;
  const fields = s.split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: ${s}`;
  try {
    CronExpressionParser.parse(s, { tz: 'UTC' });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Why a time zone name is not known, or undefined (Go's time.LoadLocation wording). */
export function timeZoneError(tz: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return undefined;
  } catch {
    return `unknown time zone ${tz}`;
  }
}

const expression = (cj: KObj, from: Date) => {
  const s = String(cj.spec?.schedule ?? '').trim();
  // Without spec.timeZone, the controller's own zone, as kube-controller-manager's time.Local.
  return CronExpressionParser.parse(DESCRIPTORS[s] ?? s, {
    currentDate: from,
    tz: cj.spec?.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
};

/** The next scheduled time after `after`. */
export function nextScheduleTime(cj: KObj, after: Date): Date {
  return expression(cj, after).next().toDate();
}

/**
 * upstream mostRecentScheduleTime: the latest start due at or before now since the last one (or creation), and how
 * many were missed; undefined when none is due.
 */
export function mostRecentScheduleTime(cj: KObj, now: Date): { time: Date; missed: number } | undefined {
  const since = new Date(Date.parse(cj.status?.lastScheduleTime ?? cj.metadata.creationTimestamp));
  const deadline = cj.spec?.startingDeadlineSeconds as number | undefined;
  // With a starting deadline, starts older than it are of no interest (upstream counts from there).
  const from =
    deadline !== undefined && deadline !== null
      ? new Date(Math.max(since.getTime(), now.getTime() - deadline * 1000))
      : since;
  const it = expression(cj, from);
  let time: Date | undefined;
  let missed = 0;
  for (;;) {
    const t = it.next().toDate();
    if (t.getTime() > now.getTime()) break;
    time = t;
    missed++;
    if (missed > 100) break; // upstream stops counting at 100 ("too many missed start times")
  }
  return time ? { time, missed } : undefined;
}

/** <cronjob>-<minutes since the epoch>, as upstream getJobName. */
export const jobName = (cj: KObj, scheduled: Date): string =>
  `${cj.metadata.name}-${Math.floor(scheduled.getTime() / 60_000)}`;

/** The Job for a scheduled time (upstream getJobFromTemplate2). */
export function jobFor(cj: KObj, scheduled: Date, ownerRef: KObj): KObj {
  const t = (cj.spec?.jobTemplate ?? {}) as KObj;
  const annotations = {
    ...((t.metadata?.annotations ?? {}) as Record<string, string>),
    [SCHEDULED_TIMESTAMP]: rfc3339(scheduled),
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(cj, scheduled),
      labels: { ...((t.metadata?.labels ?? {}) as Record<string, string>) },
      annotations,
      ownerReferences: [ownerRef],
    },
    spec: structuredClone(t.spec ?? {}),
  };
}

const finished = (j: KObj): string | undefined =>
  ((j.status?.conditions ?? []) as KObj[]).find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  )?.type;
export const jobFinishedAs = finished;

/** Finished jobs beyond the history limits, oldest first (upstream cleanupFinishedJobs). */
export function jobsToClean(cj: KObj, jobs: KObj[]): KObj[] {
  const out: KObj[] = [];
  const start = (j: KObj): number => Date.parse(j.status?.startTime ?? j.metadata.creationTimestamp ?? '') || 0;
  for (const [kind, limit] of [
    ['Complete', cj.spec?.successfulJobsHistoryLimit ?? 3],
    ['Failed', cj.spec?.failedJobsHistoryLimit ?? 1],
  ] as const) {
    const done = jobs.filter((j) => finished(j) === kind).sort((a, b) => start(a) - start(b));
    out.push(...done.slice(0, Math.max(0, done.length - limit)));
  }
  return out;
}
