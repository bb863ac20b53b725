// batch/v1 Job: server-side defaults, the generated selector and labels, and
// validation with upstream's field errors (pkg/apis/batch).
import type { Pod } from 'kubernetes-types/core/v1.js';

import { canonicalJson } from '../../kube/hash.js';
import { applyPodDefaults } from '../../kube/pod-defaults.js';
import { validatePodSpec } from '../../kube/pod-validation.js';
import { labelSelectorMatches } from '../../kube/selectors.js';
import { scheduleError, timeZoneError } from '../controllers/cronjob-model.js';
import {
  LABEL_CONTROLLER_UID,
  LABEL_JOB_NAME,
  LEGACY_CONTROLLER_UID,
  LEGACY_JOB_NAME,
} from '../controllers/job-model.js';
import type { Obj } from '../storage/store.js';
import type { Cause } from './errors.js';
import { goMap } from './workload-validation.js';

/** SetDefaults_Job and the create strategy's generateSelector (unless spec.manualSelector). */
export function defaultJob(job: Obj): void {
  const spec = (job.spec ??= {}) as Obj;
  if (spec.completions === undefined && spec.parallelism === undefined) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex !== undefined ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  for (const r of (spec.podFailurePolicy?.rules ?? []) as Obj[])
    for (const p of (r.onPodConditions ?? []) as Obj[]) p.status ||= 'True';
  spec.podReplacementPolicy ??= spec.podFailurePolicy ? 'Failed' : 'TerminatingOrFailed';
  const t = (spec.template ??= {}) as Obj;
  const md = (t.metadata ??= {}) as Obj;
  if (t.spec) applyPodDefaults(t as Pod);
  if (spec.manualSelector !== true && job.metadata?.uid) {
    const labels = (md.labels ??= {}) as Record<string, string>;
    labels[LEGACY_JOB_NAME] ??= job.metadata.name;
    labels[LABEL_JOB_NAME] ??= job.metadata.name;
    labels[LEGACY_CONTROLLER_UID] ??= job.metadata.uid;
    labels[LABEL_CONTROLLER_UID] ??= job.metadata.uid;
    const sel = (spec.selector ??= {}) as Obj;
    const ml = (sel.matchLabels ??= {}) as Record<string, string>;
    ml[LABEL_CONTROLLER_UID] ??= job.metadata.uid;
  }
  if (md.labels && !Object.keys(job.metadata?.labels ?? {}).length) job.metadata.labels = { ...md.labels };
  job.status ??= {};
}

const nonNegative = (spec: Obj, f: string, causes: Cause[]): void => {
  const v = spec[f];
  if (v !== undefined && v !== null && (!Number.isInteger(v) || v < 0))
    causes.push({
      field: `spec.${f}`,
      message: `Invalid value: ${JSON.stringify(v)}: must be greater than or equal to 0`,
    });
};

/** ValidateJob (the subset clients meet), before and again after defaulting (which generates the selector): counts, completion mode, selector and template, restart policy, podFailurePolicy actions. */
export function validateJob(job: Obj): Cause[] {
  const causes: Cause[] = [];
  const spec = (job.spec ?? {}) as Obj;
  for (const f of [
    'parallelism',
    'completions',
    'backoffLimit',
    'activeDeadlineSeconds',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ])
    nonNegative(spec, f, causes);
  if (spec.activeDeadlineSeconds === 0)
    causes.push({ field: 'spec.activeDeadlineSeconds', message: 'Invalid value: 0: must be greater than 0' });
  if (spec.completionMode !== undefined && !['NonIndexed', 'Indexed'].includes(spec.completionMode))
    causes.push({
      field: 'spec.completionMode',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.completionMode)}: supported values: "NonIndexed", "Indexed"`,
    });
  if (spec.completionMode === 'Indexed') {
    if (spec.completions === undefined || spec.completions === null)
      causes.push({
        field: 'spec.completions',
        reason: 'FieldValueRequired',
        message: 'Required value: when completion mode is Indexed',
      });
    else if (spec.completions > 100000)
      causes.push({
        field: 'spec.completions',
        message: `Invalid value: ${spec.completions}: must be less than or equal to 100000 when completion mode is Indexed`,
      });
  }
  for (const p of ['NonIndexed', 'Indexed'].includes(spec.completionMode) &&
  spec.podReplacementPolicy !== undefined &&
  !['TerminatingOrFailed', 'Failed'].includes(spec.podReplacementPolicy)
    ? [spec.podReplacementPolicy]
    : [])
    causes.push({
      field: 'spec.podReplacementPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(p)}: supported values: "Failed", "TerminatingOrFailed"`,
    });
  ((spec.podFailurePolicy?.rules ?? []) as Obj[]).forEach((r, i) => {
    if (!['FailJob', 'FailIndex', 'Ignore', 'Count'].includes(r.action))
      causes.push({
        field: `spec.podFailurePolicy.rules[${i}].action`,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(r.action ?? '')}: supported values: "Count", "FailIndex", "FailJob", "Ignore"`,
      });
    if (!r.onExitCodes === !r.onPodConditions?.length)
      causes.push({
        field: `spec.podFailurePolicy.rules[${i}]`,
        message: 'Invalid value: specifying one of OnExitCodes and OnPodConditions is required',
      });
    if (r.onExitCodes && !['In', 'NotIn'].includes(r.onExitCodes.operator))
      causes.push({
        field: `spec.podFailurePolicy.rules[${i}].onExitCodes.operator`,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(r.onExitCodes.operator ?? '')}: supported values: "In", "NotIn"`,
      });
  });
  // Indexed-only features (1.32: backoffLimitPerIndex and successPolicy are beta, on by default).
  const indexed = spec.completionMode === 'Indexed';
  const set = (v: unknown): boolean => v !== undefined && v !== null;
  if (set(spec.backoffLimitPerIndex) && !indexed)
    causes.push({
      field: 'spec.backoffLimitPerIndex',
      message: `Invalid value: ${spec.backoffLimitPerIndex}: requires indexed completion mode`,
    });
  if (set(spec.maxFailedIndexes)) {
    if (!set(spec.backoffLimitPerIndex))
      causes.push({
        field: 'spec.backoffLimitPerIndex',
        reason: 'FieldValueRequired',
        message: 'Required value: when maxFailedIndexes is specified',
      });
    if (set(spec.completions) && spec.maxFailedIndexes > spec.completions)
      causes.push({
        field: 'spec.maxFailedIndexes',
        message: `Invalid value: ${spec.maxFailedIndexes}: must be less than or equal to completions`,
      });
  }
  ((spec.podFailurePolicy?.rules ?? []) as Obj[]).forEach((r, i) => {
    if (r.action === 'FailIndex' && !set(spec.backoffLimitPerIndex))
      causes.push({
        field: `spec.podFailurePolicy.rules[${i}].action`,
        message: 'Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set',
      });
  });
  if (set(spec.successPolicy)) {
    const rules = (spec.successPolicy.rules ?? []) as Obj[];
    if (!indexed)
      causes.push({
        field: 'spec.successPolicy',
        message: `Invalid value: ${JSON.stringify(spec.successPolicy)}: requires indexed completion mode`,
      });
    if (!rules.length || rules.length > 20)
      causes.push({
        field: 'spec.successPolicy.rules',
        reason: rules.length ? 'FieldValueTooMany' : 'FieldValueRequired',
        message: rules.length ? `Too many: ${rules.length}: must have at most 20 items` : 'Required value',
      });
    rules.forEach((r, i) => {
      if (!set(r.succeededCount) && !set(r.succeededIndexes))
        causes.push({
          field: `spec.successPolicy.rules[${i}]`,
          reason: 'FieldValueRequired',
          message: 'Required value: at least one of succeededCount or succeededIndexes must be specified',
        });
      if (
        set(r.succeededCount) &&
        (r.succeededCount < 0 || (set(spec.completions) && r.succeededCount > spec.completions))
      )
        causes.push({
          field: `spec.successPolicy.rules[${i}].succeededCount`,
          message: `Invalid value: ${r.succeededCount}: must be between 0 and completions`,
        });
      if (set(r.succeededIndexes) && !/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(String(r.succeededIndexes)))
        causes.push({
          field: `spec.successPolicy.rules[${i}].succeededIndexes`,
          message: `Invalid value: ${JSON.stringify(r.succeededIndexes)}: error parsing succeededIndexes`,
        });
    });
  }
  if (
    set(spec.managedBy) &&
    (String(spec.managedBy).length > 63 ||
      !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[-A-Za-z0-9_./]+$/.test(String(spec.managedBy)))
  )
    causes.push({
      field: 'spec.managedBy',
      message: `Invalid value: ${JSON.stringify(spec.managedBy)}: must be a domain-prefixed path of at most 63 characters (such as "acme.io/foo")`,
    });
  const sel = spec.selector as Obj | undefined;
  const labels = (spec.template?.metadata?.labels ?? {}) as Record<string, string>;
  // Without manualSelector the selector is generated (after this first validation on create).
  if (!sel) {
    if (spec.manualSelector === true)
      causes.push({ field: 'spec.selector', reason: 'FieldValueRequired', message: 'Required value' });
  } else if (!labelSelectorMatches(sel, labels))
    causes.push({
      field: 'spec.template.metadata.labels',
      message: `Invalid value: ${goMap(labels)}: \`selector\` does not match template \`labels\``,
    });
  if (
    spec.manualSelector !== true &&
    sel?.matchLabels?.[LABEL_CONTROLLER_UID] !== undefined &&
    sel.matchLabels[LABEL_CONTROLLER_UID] !== job.metadata?.uid
  )
    causes.push({
      field: 'spec.selector',
      message: `Invalid value: ${JSON.stringify(sel)}: \`selector\` not auto-generated`,
    });
  const rp = spec.template?.spec?.restartPolicy ?? 'Always';
  if (rp !== 'OnFailure' && rp !== 'Never')
    causes.push({
      field: 'spec.template.spec.restartPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(rp ?? '')}: supported values: "OnFailure", "Never"`,
    });
  if (!spec.template?.spec)
    causes.push({ field: 'spec.template.spec.containers', reason: 'FieldValueRequired', message: 'Required value' });
  else causes.push(...validatePodSpec(spec.template.spec, 'spec.template.spec'));
  return causes;
}

const canon = (v: unknown): string => canonicalJson(v ?? null);

/** ValidateJobUpdate: selector, template, completion mode immutable; completions only with parallelism in an Indexed Job (elastic). */
export function validateJobUpdate(next: Obj, cur: Obj): Cause[] {
  const causes: Cause[] = [];
  const n = (next.spec ?? {}) as Obj;
  const o = (cur.spec ?? {}) as Obj;
  const immutable = (f: string, v: unknown): Cause => ({
    field: `spec.${f}`,
    message: `Invalid value: ${JSON.stringify(v ?? null)}: field is immutable`,
  });
  if (canon(n.selector) !== canon(o.selector)) causes.push(immutable('selector', n.selector));
  if (canon(n.template) !== canon(o.template)) causes.push(immutable('template', n.template));
  if (n.completionMode !== o.completionMode) causes.push(immutable('completionMode', n.completionMode));
  if ((n.managedBy ?? null) !== (o.managedBy ?? null)) causes.push(immutable('managedBy', n.managedBy));
  if (canon(n.successPolicy) !== canon(o.successPolicy)) causes.push(immutable('successPolicy', n.successPolicy));
  if (n.completions !== o.completions && !(n.completionMode === 'Indexed' && n.completions === n.parallelism))
    causes.push(immutable('completions', n.completions));
  return causes;
}

/** SetDefaults_CronJob, and the pod template's defaults inside its job template. */
export function defaultCronJob(cj: Obj): void {
  const spec = (cj.spec ??= {}) as Obj;
  spec.concurrencyPolicy ??= 'Allow';
  spec.suspend ??= false;
  spec.successfulJobsHistoryLimit ??= 3;
  spec.failedJobsHistoryLimit ??= 1;
  const t = spec.jobTemplate?.spec?.template as Obj | undefined;
  if (t?.spec) applyPodDefaults(t as Pod);
  cj.status ??= {};
}

/** ValidateCronJob: name length (room for the job suffix), schedule, time zone, policy, limits, and the job template as a Job's spec. */
export function validateCronJob(cj: Obj): Cause[] {
  const causes: Cause[] = [];
  const spec = (cj.spec ?? {}) as Obj;
  const name = String(cj.metadata?.name ?? '');
  if (name.length > 52)
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: ${JSON.stringify(name)}: must be no more than 52 characters`,
    });
  if (typeof spec.schedule !== 'string' || !spec.schedule)
    causes.push({ field: 'spec.schedule', reason: 'FieldValueRequired', message: 'Required value' });
  else {
    const bad = scheduleError(spec.schedule);
    if (bad)
      causes.push({ field: 'spec.schedule', message: `Invalid value: ${JSON.stringify(spec.schedule)}: ${bad}` });
  }
  if (spec.timeZone !== undefined && spec.timeZone !== null) {
    const bad = spec.timeZone === '' ? 'unknown time zone ' : timeZoneError(String(spec.timeZone));
    if (bad)
      causes.push({ field: 'spec.timeZone', message: `Invalid value: ${JSON.stringify(spec.timeZone)}: ${bad}` });
  }
  if (spec.concurrencyPolicy !== undefined && !['Allow', 'Forbid', 'Replace'].includes(spec.concurrencyPolicy))
    causes.push({
      field: 'spec.concurrencyPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.concurrencyPolicy)}: supported values: "Allow", "Forbid", "Replace"`,
    });
  for (const f of ['startingDeadlineSeconds', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'])
    nonNegative(spec, f, causes);
  const inner = validateJob({
    metadata: {},
    spec: { completionMode: 'NonIndexed', ...((spec.jobTemplate?.spec ?? {}) as Obj) },
  });
  causes.push(...inner.map((c) => ({ ...c, field: (c.field ?? '').replace(/^spec\./, 'spec.jobTemplate.spec.') })));
  return causes;
}
