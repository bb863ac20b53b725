// apps/v1 DaemonSet, StatefulSet and ControllerRevision: server-side
// defaults, the DaemonSet template generation annotation, and validation
// with upstream's field errors (pkg/apis/apps/validation).
import type { Pod } from 'kubernetes-types/core/v1.js';

import { canonicalJson } from '../../kube/hash.js';
import { applyPodDefaults } from '../../kube/pod-defaults.js';
import type { Obj } from '../storage/store.js';
import type { Cause } from './errors.js';
import { goIntOrString, isZero, validateIntOrPercent, validateSelectorAndTemplate } from './workload-validation.js';

/** The apps/v1 form of the internal spec.templateGeneration (upstream DeprecatedTemplateGeneration). */
export const ANN_TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

function defaultTemplate(t: Obj | undefined): void {
  if (t?.spec) applyPodDefaults(t as Pod);
}

/** SetDefaults_DaemonSet. */
export function defaultDaemonSet(ds: Obj): void {
  const spec = (ds.spec ??= {}) as Obj;
  const us = (spec.updateStrategy ??= {}) as Obj;
  us.type ??= 'RollingUpdate';
  if (us.type === 'RollingUpdate') {
    const ru = (us.rollingUpdate ??= {}) as Obj;
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  defaultTemplate(spec.template);
  ds.status ??= { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
}

/** SetDefaults_StatefulSet, with each claim template defaulted as a PersistentVolumeClaim. */
export function defaultStatefulSet(sts: Obj): void {
  const spec = (sts.spec ??= {}) as Obj;
  spec.replicas ??= 1;
  spec.podManagementPolicy ??= 'OrderedReady';
  const us = (spec.updateStrategy ??= {}) as Obj;
  us.type ??= 'RollingUpdate';
  if (us.type === 'RollingUpdate') {
    const ru = (us.rollingUpdate ??= {}) as Obj;
    ru.partition ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  const retention = (spec.persistentVolumeClaimRetentionPolicy ??= {}) as Obj;
  retention.whenDeleted ??= 'Retain';
  retention.whenScaled ??= 'Retain';
  for (const c of (spec.volumeClaimTemplates ?? []) as Obj[]) {
    c.apiVersion ??= 'v1';
    c.kind ??= 'PersistentVolumeClaim';
    (c.spec ??= {}).volumeMode ??= 'Filesystem';
    c.status ??= { phase: 'Pending' };
  }
  defaultTemplate(spec.template);
  sts.status ??= { replicas: 0, availableReplicas: 0 };
}

/** PrepareForCreate / PrepareForUpdate of DaemonSets: the template generation starts at 1 and counts template changes. */
export function stampTemplateGeneration(ds: Obj, cur?: Obj): void {
  const ann = (ds.metadata.annotations ??= {}) as Record<string, string>;
  const prev = Number(cur?.metadata?.annotations?.[ANN_TEMPLATE_GENERATION] ?? 0) || 0;
  if (!cur) ann[ANN_TEMPLATE_GENERATION] = String(Math.max(1, Number(ann[ANN_TEMPLATE_GENERATION]) || 1));
  else
    ann[ANN_TEMPLATE_GENERATION] = String(
      canonicalJson(ds.spec?.template ?? {}) === canonicalJson(cur.spec?.template ?? {}) ? Math.max(prev, 1) : prev + 1,
    );
}

const nonNegative = (spec: Obj, f: string, causes: Cause[], at = `spec.${f}`): void => {
  const v = spec[f];
  if (v !== undefined && v !== null && (!Number.isInteger(v) || v < 0))
    causes.push({ field: at, message: `Invalid value: ${JSON.stringify(v)}: must be greater than or equal to 0` });
};

/** ValidateDaemonSet (create and update alike). */
export function validateDaemonSet(ds: Obj): Cause[] {
  const spec = (ds.spec ?? {}) as Obj;
  const causes = validateSelectorAndTemplate(spec, 'daemonset');
  nonNegative(spec, 'minReadySeconds', causes);
  nonNegative(spec, 'revisionHistoryLimit', causes);
  const us = (spec.updateStrategy ?? {}) as Obj;
  if (us.type !== undefined && !['OnDelete', 'RollingUpdate'].includes(us.type))
    causes.push({
      field: 'spec.updateStrategy.type',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(us.type)}: supported values: "OnDelete", "RollingUpdate"`,
    });
  const ru = us.rollingUpdate as Obj | undefined;
  if (us.type === 'RollingUpdate' && ru) {
    causes.push(
      ...validateIntOrPercent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable'),
      ...validateIntOrPercent(ru.maxSurge, 'spec.updateStrategy.rollingUpdate.maxSurge'),
    );
    // Exactly one of them non-zero (maxUnavailable defaults to 1).
    const unavailable = !isZero(ru.maxUnavailable ?? 1);
    const surge = !isZero(ru.maxSurge ?? 0);
    if (unavailable && surge)
      causes.push({
        field: 'spec.updateStrategy.rollingUpdate.maxSurge',
        message: `Invalid value: ${goIntOrString(ru.maxSurge)}: may not be set when maxUnavailable is non-zero`,
      });
    if (!unavailable && !surge)
      causes.push({
        field: 'spec.updateStrategy.rollingUpdate.maxUnavailable',
        reason: 'FieldValueRequired',
        message: 'Required value: cannot be 0 when maxSurge is 0',
      });
  }
  return causes;
}

const RETENTION = ['Retain', 'Delete'];

/** ValidateStatefulSet (create). */
export function validateStatefulSet(sts: Obj): Cause[] {
  const spec = (sts.spec ?? {}) as Obj;
  // The claim templates are volumes of every pod: containers may mount them.
  const claimVolumes = ((spec.volumeClaimTemplates ?? []) as Obj[]).map((c) => ({
    name: c.metadata?.name,
    persistentVolumeClaim: { claimName: c.metadata?.name },
  }));
  const template = spec.template?.spec
    ? {
        ...spec.template,
        spec: {
          ...spec.template.spec,
          volumes: [
            ...((spec.template.spec.volumes ?? []) as Obj[]),
            ...claimVolumes.filter(
              (c) => !((spec.template.spec.volumes ?? []) as Obj[]).some((v) => v.name === c.name),
            ),
          ],
        },
      }
    : spec.template;
  const causes = validateSelectorAndTemplate({ ...spec, template }, 'statefulset');
  for (const f of ['replicas', 'minReadySeconds', 'revisionHistoryLimit']) nonNegative(spec, f, causes);
  if (spec.ordinals) nonNegative(spec.ordinals, 'start', causes, 'spec.ordinals.start');
  if (spec.podManagementPolicy !== undefined && !['OrderedReady', 'Parallel'].includes(spec.podManagementPolicy))
    causes.push({
      field: 'spec.podManagementPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(spec.podManagementPolicy)}: supported values: "OrderedReady", "Parallel"`,
    });
  const us = (spec.updateStrategy ?? {}) as Obj;
  if (us.type !== undefined && !['OnDelete', 'RollingUpdate'].includes(us.type))
    causes.push({
      field: 'spec.updateStrategy.type',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(us.type)}: supported values: "OnDelete", "RollingUpdate"`,
    });
  if (us.type === 'OnDelete' && us.rollingUpdate)
    causes.push({
      field: 'spec.updateStrategy.rollingUpdate',
      message: `Invalid value: ${JSON.stringify(us.rollingUpdate)}: only allowed for updateStrategy 'RollingUpdate'`,
    });
  if (us.rollingUpdate)
    nonNegative(us.rollingUpdate, 'partition', causes, 'spec.updateStrategy.rollingUpdate.partition');
  const retention = (spec.persistentVolumeClaimRetentionPolicy ?? {}) as Obj;
  for (const f of ['whenDeleted', 'whenScaled']) {
    if (retention[f] !== undefined && !RETENTION.includes(retention[f]))
      causes.push({
        field: `spec.persistentVolumeClaimRetentionPolicy.${f}`,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(retention[f])}: supported values: "Retain", "Delete"`,
      });
  }
  ((spec.volumeClaimTemplates ?? []) as Obj[]).forEach((c, i) => {
    const f = `spec.volumeClaimTemplates[${i}]`;
    if (!c.metadata?.name)
      causes.push({
        field: `${f}.metadata.name`,
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
      });
    if (!(c.spec?.accessModes ?? []).length)
      causes.push({
        field: `${f}.spec.accessModes`,
        reason: 'FieldValueRequired',
        message: 'Required value: at least 1 access mode is required',
      });
    if (c.spec?.resources?.requests?.storage === undefined)
      causes.push({ field: `${f}.spec.resources[storage]`, reason: 'FieldValueRequired', message: 'Required value' });
  });
  return causes;
}

/** ValidateStatefulSetUpdate: only these spec fields may change. */
const STS_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

export function validateStatefulSetUpdate(next: Obj, cur: Obj): Cause[] {
  const fixed = (s: Obj | undefined): string => {
    const c = { ...(s ?? {}) };
    for (const f of STS_MUTABLE) delete c[f];
    return canonicalJson(c);
  };
  if (fixed(next.spec) === fixed(cur.spec)) return [];
  return [
    {
      field: 'spec',
      reason: 'FieldValueForbidden',
      message:
        "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    },
  ];
}

/** ValidateControllerRevision: a revision number of at least 0, and data that never changes. */
export function validateControllerRevision(cr: Obj, cur?: Obj): Cause[] {
  const causes: Cause[] = [];
  if (cr.data === undefined || cr.data === null)
    causes.push({ field: 'data', reason: 'FieldValueRequired', message: 'Required value' });
  if (cr.revision !== undefined && (!Number.isInteger(cr.revision) || cr.revision < 0))
    causes.push({
      field: 'revision',
      message: `Invalid value: ${JSON.stringify(cr.revision)}: must be greater than or equal to 0`,
    });
  if (cur && canonicalJson(cr.data ?? null) !== canonicalJson(cur.data ?? null))
    causes.push({ field: 'data', message: `Invalid value: ${JSON.stringify(cr.data)}: field is immutable` });
  return causes;
}
