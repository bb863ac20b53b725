// Validation the workload kinds share (Deployments, ReplicaSets, DaemonSets, StatefulSets,
// Jobs): selectors against templates, int-or-percent fields, and Go's printing of values
// in upstream's messages.
import { validatePodSpec } from '../../kube/pod-validation.js';
import { labelSelectorMatches } from '../../kube/selectors.js';
import type { Obj } from '../storage/store.js';
import type { Cause } from './errors.js';

/** How Go's %#v prints a map[string]string in upstream's messages. */
export const goMap = (m: Record<string, string>): string =>
  `map[string]string{${Object.entries(m)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
    .join(', ')}}`;

export const isZero = (v: unknown): boolean => v === 0 || v === '0' || v === '0%';
/** How Go's %#v prints an IntOrString in upstream's messages. */
export const goIntOrString = (v: unknown): string =>
  typeof v === 'string'
    ? `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(v)}}`
    : `intstr.IntOrString{Type:0, IntVal:${Number(v)}, StrVal:""}`;

/** What Deployments, DaemonSets and StatefulSets share: a non-empty selector matching the template's labels, and the pod template with restartPolicy Always. */
export function validateSelectorAndTemplate(spec: Obj, kind: string): Cause[] {
  const causes: Cause[] = [];
  const sel = spec.selector as Obj | undefined;
  const empty = !sel || (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length);
  if (empty)
    causes.push(
      { field: 'spec.selector', reason: 'FieldValueRequired', message: 'Required value' },
      { field: 'spec.selector', message: `Invalid value: "null": empty selector is invalid for ${kind}` },
    );
  const labels = (spec.template?.metadata?.labels ?? {}) as Record<string, string>;
  if (!empty && !labelSelectorMatches(sel!, labels))
    causes.push({
      field: 'spec.template.metadata.labels',
      message: `Invalid value: ${goMap(labels)}: \`selector\` does not match template \`labels\``,
    });
  if (!spec.template)
    return [
      ...causes,
      { field: 'spec.template.spec.containers', reason: 'FieldValueRequired', message: 'Required value' },
    ];
  causes.push(...validatePodSpec(spec.template.spec, 'spec.template.spec'));
  const rp = spec.template.spec?.restartPolicy;
  if (rp !== undefined && rp !== 'Always')
    causes.push({
      field: 'spec.template.spec.restartPolicy',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(rp)}: supported values: "Always"`,
    });
  if (spec.template.spec?.activeDeadlineSeconds !== undefined)
    causes.push({
      field: 'spec.template.spec.activeDeadlineSeconds',
      reason: 'FieldValueForbidden',
      message: `Forbidden: activeDeadlineSeconds in ${({ daemonset: 'DaemonSet', statefulset: 'StatefulSet' } as Record<string, string>)[kind] ?? 'ReplicaSet'} is not Supported`,
    });
  return causes;
}

/** A non-negative int or a percent up to 100% (ValidatePositiveIntOrPercent and IsNotMoreThan100Percent). */
export function validateIntOrPercent(v: unknown, field: string): Cause[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'number')
    return Number.isInteger(v) && v >= 0
      ? []
      : [{ field, message: `Invalid value: ${v}: must be greater than or equal to 0` }];
  const s = String(v);
  if (!/^\d+%$/.test(s))
    return [
      {
        field,
        message: `Invalid value: ${JSON.stringify(s)}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
      },
    ];
  return parseInt(s, 10) > 100
    ? [{ field, message: `Invalid value: ${JSON.stringify(s)}: must not be greater than 100%` }]
    : [];
}
