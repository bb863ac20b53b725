// The pods/ephemeralcontainers subresource's rules (upstream
// ValidatePodEphemeralContainersUpdate and validateEphemeralContainers):
// ephemeral containers are only ever added; each has a name no other
// container has, targets an existing regular or init container, and sets
// none of the fields that would make it part of the workload.
import { semanticJson } from '../../kube/hash.js';
import { checkDns1123Label } from '../../kube/names.js';
import type { Obj } from '../storage/store.js';
import type { Cause } from './errors.js';

/** Fields an ephemeral container may set (upstream allowedEphemeralContainerFields, with true). */
const ALLOWED = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'env',
  'envFrom',
  'volumeMounts',
  'volumeDevices',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'targetContainerName',
]);

/** Go's reflect IsZero as upstream's allow list applies it: kubectl sends `resources: {}`. */
const isZero = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === '' ||
  v === false ||
  v === 0 ||
  (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.values(v as Obj).every(isZero));

const canon = (v: unknown): string => semanticJson(v);

export function validateEphemeralUpdate(cur: Obj, next: Obj): Cause[] {
  const causes: Cause[] = [];
  const list = (next.spec?.ephemeralContainers ?? []) as Obj[];
  const byName = new Map(list.map((c) => [c.name as string, c]));
  ((cur.spec?.ephemeralContainers ?? []) as Obj[]).forEach((old, i) => {
    const now = byName.get(old.name as string);
    if (!now)
      causes.push({
        field: 'spec',
        reason: 'FieldValueForbidden',
        message: `Forbidden: existing ephemeral containers ${JSON.stringify(old.name)} may not be removed\n`,
      });
    else if (canon(now) !== canon(old))
      causes.push({
        field: `spec.ephemeralContainers[${i}]`,
        reason: 'FieldValueForbidden',
        message: `Forbidden: existing ephemeral containers ${JSON.stringify(old.name)} may not be changed\n`,
      });
  });
  const others = new Set(
    [...((next.spec?.containers ?? []) as Obj[]), ...((next.spec?.initContainers ?? []) as Obj[])].map(
      (c) => c.name as string,
    ),
  );
  const seen = new Set(others);
  list.forEach((c, i) => {
    const p = `spec.ephemeralContainers[${i}]`;
    if (typeof c.name !== 'string' || !c.name)
      causes.push({ field: `${p}.name`, reason: 'FieldValueRequired', message: 'Required value' });
    else {
      const bad = checkDns1123Label(c.name);
      if (bad) causes.push({ field: `${p}.name`, message: `Invalid value: ${JSON.stringify(c.name)}: ${bad}` });
      if (seen.has(c.name))
        causes.push({
          field: `${p}.name`,
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${JSON.stringify(c.name)}`,
        });
      seen.add(c.name);
    }
    if (typeof c.image !== 'string' || !c.image.trim())
      causes.push({ field: `${p}.image`, reason: 'FieldValueRequired', message: 'Required value' });
    if (c.targetContainerName && !others.has(c.targetContainerName as string))
      causes.push({
        field: `${p}.targetContainerName`,
        reason: 'FieldValueNotFound',
        message: `Not found: ${JSON.stringify(c.targetContainerName)}`,
      });
    for (const k of Object.keys(c))
      if (!ALLOWED.has(k) && !isZero(c[k]))
        causes.push({
          field: `${p}.${k}`,
          reason: 'FieldValueForbidden',
          message: 'Forbidden: cannot be set for an Ephemeral Container',
        });
    ((c.volumeMounts ?? []) as Obj[]).forEach((m, j) => {
      if (m.subPath)
        causes.push({
          field: `${p}.volumeMounts[${j}].subPath`,
          reason: 'FieldValueForbidden',
          message: 'Forbidden: cannot be set for an Ephemeral Container',
        });
      if (m.subPathExpr)
        causes.push({
          field: `${p}.volumeMounts[${j}].subPathExpr`,
          reason: 'FieldValueForbidden',
          message: 'Forbidden: cannot be set for an Ephemeral Container',
        });
    });
  });
  return causes;
}
