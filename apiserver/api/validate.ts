// Validation with field paths, for the fields the dev apiserver checks.
import { checkDns1123Label, checkDns1123Subdomain } from '../../kube/names.js';
import type { Cause } from './errors.js';
import { validateAnnotations, validateLabels, validatePodPaths } from '../../kube/validation.js';
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';

export const MAX_DATA_SIZE = 1024 * 1024;
const DNS_LABEL_NAMED = new Set(['namespaces', 'services']);
/** RBAC objects are named like path segments (system:node-proxier), not DNS names. */
const PATH_SEGMENT_NAMED = new Set(['clusterroles', 'clusterrolebindings', 'roles', 'rolebindings']);

function checkPathSegment(name: string): string | undefined {
  if (name === '.' || name === '..') return `may not be '${name}'`;
  if (/[/%]/.test(name)) return `may not contain '${name.includes('/') ? '/' : '%'}'`;
  return undefined;
}

export function validateObject(r: ResourceDef, o: Obj): Cause[] {
  const causes: Cause[] = [];
  const name = o.metadata?.name;
  if (typeof name !== 'string' || name === '') causes.push({ field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' });
  else {
    const bad = PATH_SEGMENT_NAMED.has(r.resource) ? checkPathSegment(name) : DNS_LABEL_NAMED.has(r.resource) ? checkDns1123Label(name) : checkDns1123Subdomain(name);
    if (bad) causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": ${bad}` });
  }
  causes.push(...validateLabels(o.metadata?.labels, 'metadata.labels'), ...validateAnnotations(o.metadata?.annotations, 'metadata.annotations'));
  if (r.resource === 'pods') causes.push(...validatePodSpec(o.spec, 'spec'));
  if (r.resource === 'deployments' || r.resource === 'replicasets') causes.push(...validateWorkload(o));
  // core.MaxSecretSize: ConfigMaps and Secrets hold at most 1 MiB of data.
  if (r.resource === 'configmaps' || r.resource === 'secrets') {
    let size = 0;
    for (const f of ['data', 'binaryData', 'stringData']) for (const [k, v] of Object.entries((o[f] ?? {}) as Record<string, unknown>)) size += k.length + (typeof v === 'string' ? (f === 'data' && r.resource === 'secrets' ? Math.floor((v.length * 3) / 4) : Buffer.byteLength(v)) : 0);
    if (size > MAX_DATA_SIZE) causes.push({ field: r.resource === 'secrets' ? 'data' : '[]', reason: 'FieldValueTooLong', message: `Too long: may not be more than ${MAX_DATA_SIZE} bytes` });
  }
  if (r.resource === 'services') {
    for (const [i, p] of ((o.spec?.ports ?? []) as Obj[]).entries()) {
      if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535) causes.push({ field: `spec.ports[${i}].port`, message: `Invalid value: ${JSON.stringify(p.port)}: must be between 1 and 65535, inclusive` });
    }
  }
  return causes;
}

function validatePodSpec(spec: Obj | undefined, path: string): Cause[] {
  const causes: Cause[] = [];
  if (!spec || typeof spec !== 'object') return [{ field: path, reason: 'FieldValueRequired', message: 'Required value' }];
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) causes.push({ field: `${path}.containers`, reason: 'FieldValueRequired', message: 'Required value' });
  const seen = new Set<string>();
  for (const list of ['initContainers', 'containers']) {
    for (const [i, c] of ((Array.isArray(spec[list]) ? spec[list] : []) as Obj[]).entries()) {
      const p = `${path}.${list}[${i}]`;
      if (typeof c?.name !== 'string' || c.name === '') causes.push({ field: `${p}.name`, reason: 'FieldValueRequired', message: 'Required value' });
      else {
        const bad = checkDns1123Label(c.name);
        if (bad) causes.push({ field: `${p}.name`, message: `Invalid value: "${c.name}": ${bad}` });
        if (seen.has(c.name)) causes.push({ field: `${p}.name`, reason: 'FieldValueDuplicate', message: `Duplicate value: "${c.name}"` });
        seen.add(c.name);
      }
      if (typeof c?.image !== 'string' || c.image.trim() === '') causes.push({ field: `${p}.image`, reason: 'FieldValueRequired', message: 'Required value' });
    }
  }
  causes.push(...validatePodPaths(spec, path));
  if (spec.restartPolicy !== undefined && !['Always', 'OnFailure', 'Never'].includes(spec.restartPolicy)) causes.push({ field: `${path}.restartPolicy`, reason: 'FieldValueNotSupported', message: `Unsupported value: "${String(spec.restartPolicy)}": supported values: "Always", "OnFailure", "Never"` });
  return causes;
}

const goMap = (m: Record<string, string>): string => `map[string]string{${Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(', ')}}`;

/** apps/v1 Deployment and ReplicaSet: selector required and matching the template, replicas >= 0, the pod template. */
function validateWorkload(o: Obj): Cause[] {
  const causes: Cause[] = [];
  const spec = (o.spec ?? {}) as Obj;
  if (spec.replicas !== undefined && (!Number.isInteger(spec.replicas) || spec.replicas < 0)) causes.push({ field: 'spec.replicas', message: `Invalid value: ${JSON.stringify(spec.replicas)}: must be greater than or equal to 0` });
  const sel = spec.selector as Obj | undefined;
  const empty = !sel || (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length);
  if (empty) causes.push({ field: 'spec.selector', reason: 'FieldValueRequired', message: 'Required value' }, { field: 'spec.selector', message: 'Invalid value: "null": empty selector is invalid for deployment' });
  const labels = (spec.template?.metadata?.labels ?? {}) as Record<string, string>;
  if (!empty && !selectorMatches(sel!, labels)) causes.push({ field: 'spec.template.metadata.labels', message: `Invalid value: ${goMap(labels)}: \`selector\` does not match template \`labels\`` });
  if (!spec.template) causes.push({ field: 'spec.template.spec.containers', reason: 'FieldValueRequired', message: 'Required value' });
  else causes.push(...validatePodSpec(spec.template.spec, 'spec.template.spec'));
  return causes;
}

/** metav1.LabelSelectorAsSelector(...).Matches(labels). */
export function selectorMatches(sel: Obj, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries((sel.matchLabels ?? {}) as Record<string, string>)) if (labels[k] !== v) return false;
  for (const e of (sel.matchExpressions ?? []) as Obj[]) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const vals = (e.values ?? []) as string[];
    if (e.operator === 'In' && !(has && vals.includes(labels[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && vals.includes(labels[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}
