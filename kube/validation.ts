// Field validation shared by the dev apiserver and the kubelet (upstream runs
// one ValidatePod for API and static pods): metadata labels and annotations,
// paths that must stay inside a volume, hostPath sources, and the UIDs the
// kubelet builds directories from. Each problem is a field path and
// upstream's message, as field.ErrorList prints it.
export interface FieldError {
  field: string;
  message: string;
  reason?: string;
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const NAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/** IsQualifiedName: [prefix/]name, the prefix a DNS subdomain. */
export function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  let name = key;
  const out: string[] = [];
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) out.push('prefix part must be non-empty');
    else if (prefix.length > 253) out.push('prefix part must be no more than 253 characters');
    else if (!DNS1123_SUBDOMAIN.test(prefix))
      out.push(
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      );
  } else if (parts.length > 2) {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) out.push('name part must be non-empty');
  else if (name.length > 63) out.push('name part must be no more than 63 characters');
  if (name.length && !QUALIFIED_NAME.test(name)) out.push(NAME_MSG);
  return out;
}

const isStringMap = (m: unknown): m is Record<string, unknown> =>
  typeof m === 'object' && m !== null && !Array.isArray(m);

/** ValidateLabels. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  if (labels === undefined || labels === null) return [];
  if (!isStringMap(labels)) return [{ field: path, message: 'Invalid value: must be a map of strings' }];
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const m of qualifiedNameErrors(k))
      out.push({ field: path, message: `Invalid value: ${JSON.stringify(k)}: ${m}` });
    if (typeof v !== 'string') out.push({ field: `${path}[${k}]`, message: 'Invalid value: must be a string' });
    else {
      if (v.length > 63)
        out.push({
          field: `${path}`,
          message: `Invalid value: ${JSON.stringify(v.slice(0, 80))}: must be no more than 63 characters`,
        });
      else if (!LABEL_VALUE.test(v))
        out.push({ field: `${path}`, message: `Invalid value: ${JSON.stringify(v)}: ${VALUE_MSG}` });
    }
  }
  return out;
}

/** ValidateAnnotations: qualified keys, at most 256 KiB of keys and values together. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  if (annotations === undefined || annotations === null) return [];
  if (!isStringMap(annotations)) return [{ field: path, message: 'Invalid value: must be a map of strings' }];
  const out: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const m of qualifiedNameErrors(k.toLowerCase()))
      out.push({ field: path, message: `Invalid value: ${JSON.stringify(k)}: ${m}` });
    if (typeof v !== 'string') out.push({ field: `${path}[${k}]`, message: 'Invalid value: must be a string' });
    else size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT)
    out.push({
      field: path,
      reason: 'FieldValueTooLong',
      message: `Too long: may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
    });
  return out;
}

/** validateLocalDescendingPath: relative, and no '..' element (subPath, items[].path). */
export function validateLocalDescendingPath(p: string, path: string): FieldError[] {
  const out: FieldError[] = [];
  if (p.startsWith('/'))
    out.push({ field: path, message: `Invalid value: ${JSON.stringify(p)}: must be a relative path` });
  out.push(...validatePathNoBacksteps(p, path));
  return out;
}

export function validatePathNoBacksteps(p: string, path: string): FieldError[] {
  return p.split('/').includes('..')
    ? [{ field: path, message: `Invalid value: ${JSON.stringify(p)}: must not contain '..'` }]
    : [];
}

export const HOST_PATH_TYPES = [
  '',
  'DirectoryOrCreate',
  'Directory',
  'FileOrCreate',
  'File',
  'Socket',
  'CharDevice',
  'BlockDevice',
];

/** validateHostPathVolumeSource. */
export function validateHostPath(hp: unknown, path: string): FieldError[] {
  if (!isStringMap(hp)) return [{ field: path, reason: 'FieldValueRequired', message: 'Required value' }];
  if (typeof hp.path !== 'string' || hp.path === '')
    return [{ field: `${path}.path`, reason: 'FieldValueRequired', message: 'Required value' }];
  const out = validatePathNoBacksteps(hp.path, `${path}.path`);
  if (hp.type !== undefined && hp.type !== null && !HOST_PATH_TYPES.includes(hp.type as string)) {
    out.push({
      field: `${path}.type`,
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(hp.type)}: supported values: ${HOST_PATH_TYPES.map((t) => JSON.stringify(t)).join(', ')}`,
    });
  }
  return out;
}

/** A UID the kubelet may name a directory after: one path element of letters, digits, '-', '_' and '.', not '.' or '..'. */
export function checkUid(uid: string): string | undefined {
  if (uid.length > 128 || !/^[A-Za-z0-9][-A-Za-z0-9_.]*$/.test(uid))
    return "must be a UUID or up to 128 letters, digits, '-', '_' or '.' starting with a letter or digit";
  return undefined;
}

/** Volume mounts' subPaths and the volumes' sources of one pod spec (the parts with security weight). */
export function validatePodPaths(spec: Record<string, any>, path: string): FieldError[] {
  const out: FieldError[] = [];
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const cs = Array.isArray(spec?.[list]) ? (spec[list] as Record<string, any>[]) : [];
    cs.forEach((c, i) => {
      const mounts = Array.isArray(c?.volumeMounts) ? (c.volumeMounts as Record<string, any>[]) : [];
      mounts.forEach((m, j) => {
        const mp = `${path}.${list}[${i}].volumeMounts[${j}]`;
        if (typeof m?.subPath === 'string' && m.subPath)
          out.push(...validateLocalDescendingPath(m.subPath, `${mp}.subPath`));
        if (m?.subPath && m?.subPathExpr)
          out.push({
            field: `${mp}.subPathExpr`,
            message: `Invalid value: ${JSON.stringify(m.subPathExpr)}: subPathExpr and subPath are mutually exclusive`,
          });
        if (typeof m?.subPathExpr === 'string' && m.subPathExpr)
          out.push(...validateLocalDescendingPath(m.subPathExpr, `${mp}.subPathExpr`));
        // validateMountPropagation.
        const prop = m?.mountPropagation;
        if (prop !== undefined && !['Bidirectional', 'HostToContainer', 'None'].includes(prop))
          out.push({
            field: `${mp}.mountPropagation`,
            reason: 'FieldValueNotSupported',
            message: `Unsupported value: ${JSON.stringify(prop)}: supported values: "Bidirectional", "HostToContainer", "None"`,
          });
        else if (prop === 'Bidirectional' && c?.securityContext?.privileged !== true)
          out.push({
            field: `${mp}.mountPropagation`,
            reason: 'FieldValueForbidden',
            message: 'Forbidden: Bidirectional mount propagation is available only to privileged containers',
          });
      });
    });
  }
  const vols = Array.isArray(spec?.volumes) ? (spec.volumes as Record<string, any>[]) : [];
  vols.forEach((v, i) => {
    if (v?.hostPath !== undefined) out.push(...validateHostPath(v.hostPath, `${path}.volumes[${i}].hostPath`));
  });
  return out;
}
