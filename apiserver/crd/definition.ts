// CustomResourceDefinitions (apiextensions.k8s.io/v1): what upstream's
// validation accepts, the status the apiserver gives a definition (accepted
// names, conditions, stored versions), and the resources it makes served.
// Pure functions; the Api and the registry act on what they return.
import type { Cause } from '../api/errors.js';
import type { CustomVersion, ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';
import { structuralErrors, toKindSchema } from './structural.js';

export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUB = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUB_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

const dns1035 = (s: string): string | undefined =>
  s.length > 63 ? 'must be no more than 63 characters' : DNS1035.test(s) ? undefined : DNS1035_MSG;
const q = (v: unknown): string => JSON.stringify(v);

function validateNames(names: Obj, path: string): Cause[] {
  const out: Cause[] = [];
  const bad = (f: string, v: unknown, msg: string): void =>
    void out.push({ field: `${path}.${f}`, message: `Invalid value: ${q(v)}: ${msg}` });
  for (const f of ['plural', 'singular']) {
    const v = names[f];
    const e = typeof v === 'string' && v ? dns1035(v) : undefined;
    if (e) bad(f, v, e);
  }
  for (const f of ['kind', 'listKind']) {
    const v = names[f];
    const e = typeof v === 'string' && v ? dns1035(v.toLowerCase()) : undefined;
    if (e) bad(f, v, `may have mixed case, but should otherwise match: ${e}`);
  }
  ((names.shortNames ?? []) as string[]).forEach((s, i) => {
    const e = dns1035(String(s));
    if (e) bad(`shortNames[${i}]`, s, e);
  });
  if (names.kind && names.kind === names.listKind)
    bad('listKind', names.listKind, 'kind and listKind may not be the same');
  ((names.categories ?? []) as string[]).forEach((s, i) => {
    const e = dns1035(String(s));
    if (e) bad(`categories[${i}]`, s, e);
  });
  return out;
}

function validateColumn(c: Obj, path: string): Cause[] {
  const out: Cause[] = [];
  if (!c.name) out.push({ field: `${path}.name`, reason: 'FieldValueRequired', message: 'Required value' });
  if (!c.type)
    out.push({
      field: `${path}.type`,
      reason: 'FieldValueRequired',
      message: `Required value: must be one of ${COLUMN_TYPES.join(',')}`,
    });
  else if (!COLUMN_TYPES.includes(c.type))
    out.push({
      field: `${path}.type`,
      message: `Invalid value: ${q(c.type)}: must be one of ${COLUMN_TYPES.join(',')}`,
    });
  if (c.format && !COLUMN_FORMATS.includes(c.format))
    out.push({
      field: `${path}.format`,
      message: `Invalid value: ${q(c.format)}: must be one of ${COLUMN_FORMATS.join(',')}`,
    });
  if (!c.jsonPath) out.push({ field: `${path}.JSONPath`, reason: 'FieldValueRequired', message: 'Required value' });
  else if (!String(c.jsonPath).startsWith('.'))
    out.push({
      field: `${path}.JSONPath`,
      message: `Invalid value: ${q(c.jsonPath)}: must be a simple json path starting with .`,
    });
  return out;
}

function validateScale(scale: Obj, path: string): Cause[] {
  const out: Cause[] = [];
  const check = (f: string, under: string, required: boolean): void => {
    const v = scale[f];
    if (v === undefined || v === '') {
      if (required) out.push({ field: `${path}.${f}`, reason: 'FieldValueRequired', message: 'Required value' });
      return;
    }
    if (!String(v).startsWith('.'))
      out.push({
        field: `${path}.${f}`,
        message: `Invalid value: ${q(v)}: must be a simple json path starting with .`,
      });
    else if (!String(v).startsWith(`.${under}.`))
      out.push({ field: `${path}.${f}`, message: `Invalid value: ${q(v)}: should be a json path under .${under}` });
  };
  check('specReplicasPath', 'spec', true);
  check('statusReplicasPath', 'status', true);
  check('labelSelectorPath', 'status', false);
  return out;
}

/** Upstream's ValidateCustomResourceDefinition, as far as this apiserver implements definitions. */
export function validateCrd(o: Obj): Cause[] {
  const out: Cause[] = [];
  const spec = (o.spec ?? {}) as Obj;
  const names = (spec.names ?? {}) as Obj;
  const group = spec.group as string | undefined;
  const name = o.metadata?.name as string | undefined;
  if (name !== `${String(names.plural ?? '')}.${String(group ?? '')}`)
    out.push({
      field: 'metadata.name',
      message: `Invalid value: ${q(name ?? '')}: must be spec.names.plural+"."+spec.group`,
    });
  if (!group) out.push({ field: 'spec.group', reason: 'FieldValueRequired', message: 'Required value' });
  else if (!DNS1123_SUB.test(group))
    out.push({ field: 'spec.group', message: `Invalid value: ${q(group)}: ${DNS1123_SUB_MSG}` });
  else if (!group.includes('.'))
    out.push({ field: 'spec.group', message: `Invalid value: ${q(group)}: should be a domain with at least one dot` });
  if (!spec.scope) out.push({ field: 'spec.scope', reason: 'FieldValueRequired', message: 'Required value' });
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    out.push({
      field: 'spec.scope',
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${q(spec.scope)}: supported values: "Cluster", "Namespaced"`,
    });
  const versions = (Array.isArray(spec.versions) ? spec.versions : []) as Obj[];
  if (!versions.length)
    out.push({
      field: 'spec.versions',
      reason: 'FieldValueRequired',
      message: 'Required value: must have at least one version',
    });
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    const e = dns1035(String(v.name ?? ''));
    if (e) out.push({ field: `${p}.name`, message: `Invalid value: ${q(v.name ?? '')}: ${e}` });
    const schema = v.schema?.openAPIV3Schema as Obj | undefined;
    if (!schema)
      out.push({
        field: `${p}.schema.openAPIV3Schema`,
        reason: 'FieldValueRequired',
        message: 'Required value: schemas are required',
      });
    else out.push(...structuralErrors(schema, `${p}.schema.openAPIV3Schema`, !!v.subresources?.status));
    if (v.subresources?.scale) out.push(...validateScale(v.subresources.scale as Obj, `${p}.subresources.scale`));
    ((v.additionalPrinterColumns ?? []) as Obj[]).forEach((c, j) =>
      out.push(...validateColumn(c, `${p}.additionalPrinterColumns[${j}]`)),
    );
    for (const [j, f] of ((v.selectableFields ?? []) as Obj[]).entries()) {
      if (!String(f.jsonPath ?? '').startsWith('.'))
        out.push({
          field: `${p}.selectableFields[${j}].jsonPath`,
          message: `Invalid value: ${q(f.jsonPath ?? '')}: must be a simple json path starting with .`,
        });
    }
  });
  if (!unique) out.push({ field: 'spec.versions', message: 'Invalid value: "": must contain unique version names' });
  if (versions.length && versions.filter((v) => v.storage === true).length !== 1)
    out.push({
      field: 'spec.versions',
      message: 'Invalid value: "": must have exactly one version marked as storage version',
    });
  for (const f of ['plural', 'singular', 'kind', 'listKind'])
    if (!names[f]) out.push({ field: `spec.names.${f}`, reason: 'FieldValueRequired', message: 'Required value' });
  out.push(...validateNames(names, 'spec.names'));
  const conv = spec.conversion as Obj | undefined;
  if (conv && conv.strategy !== 'None') {
    // Conversion webhooks need a webhook client this apiserver does not have: refused, not silently ignored.
    if (conv.strategy === 'Webhook')
      out.push({
        field: 'spec.conversion.strategy',
        reason: 'FieldValueNotSupported',
        message:
          'Unsupported value: "Webhook": supported values: "None" (this apiserver does not call conversion webhooks)',
      });
    else
      out.push({
        field: 'spec.conversion.strategy',
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${q(conv.strategy ?? '')}: supported values: "None", "Webhook"`,
      });
  }
  return out;
}

/** ValidateCustomResourceDefinitionSpecUpdate beyond validateCrd: group and plural never change; scope and kind not once established. */
export function validateCrdUpdate(next: Obj, cur: Obj): Cause[] {
  const out: Cause[] = [];
  const immutable = (field: string, a: unknown, b: unknown): void => {
    if (a !== b) out.push({ field, message: `Invalid value: ${q(a ?? '')}: field is immutable` });
  };
  const established = ((cur.status?.conditions ?? []) as Obj[]).some(
    (c) => c.type === 'Established' && c.status === 'True',
  );
  if (established) {
    immutable('spec.scope', next.spec?.scope, cur.spec?.scope);
    immutable('spec.names.kind', next.spec?.names?.kind, cur.spec?.names?.kind);
  }
  immutable('spec.group', next.spec?.group, cur.spec?.group);
  immutable('spec.names.plural', next.spec?.names?.plural, cur.spec?.names?.plural);
  // A version that objects may still be stored in cannot go (status.storedVersions).
  const names = new Set(((next.spec?.versions ?? []) as Obj[]).map((v) => v.name as string));
  ((cur.status?.storedVersions ?? []) as string[]).forEach((v, i) => {
    if (!names.has(v))
      out.push({
        field: `status.storedVersions[${i}]`,
        message: `Invalid value: ${q(v)}: must appear in spec.versions`,
      });
  });
  return out;
}

/** The defaults upstream's SetDefaults_CustomResourceDefinition fills in. */
export function defaultCrd(o: Obj): void {
  const spec = (o.spec ??= {});
  spec.conversion ??= { strategy: 'None' };
  const names = (spec.names ??= {});
  if (names.singular === undefined && typeof names.kind === 'string') names.singular = names.kind.toLowerCase();
  if (names.listKind === undefined && typeof names.kind === 'string') names.listKind = `${names.kind}List`;
}

const cond = (type: string, status: string, reason: string, message: string, now: string, prev: Obj[]): Obj => {
  const old = prev.find((c) => c.type === type);
  return {
    type,
    status,
    lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now,
    reason,
    message,
  };
};

/**
 * The status the apiserver keeps: names accepted unless another definition of the
 * group uses them (upstream's naming controller), Established once accepted,
 * Terminating while the cleanup finalizer runs, and every storage version ever used.
 */
export function crdStatus(o: Obj, others: Obj[], now: string): Obj {
  const spec = o.spec ?? {};
  const names = (spec.names ?? {}) as Obj;
  const prev = (o.status?.conditions ?? []) as Obj[];
  const taken = new Map<string, string>();
  for (const other of others) {
    if (other.metadata?.name === o.metadata?.name || other.spec?.group !== spec.group) continue;
    const n = (other.status?.acceptedNames ?? {}) as Obj;
    for (const v of [n.plural, n.singular, ...((n.shortNames ?? []) as string[])])
      if (v) taken.set(`r:${String(v)}`, other.metadata.name);
    for (const v of [n.kind, n.listKind]) if (v) taken.set(`k:${String(v)}`, other.metadata.name);
  }
  const clashes = [
    ...[names.plural, names.singular, ...((names.shortNames ?? []) as string[])]
      .filter((v) => v && taken.has(`r:${String(v)}`))
      .map((v) => `"${String(v)}" is already in use`),
    ...[names.kind, names.listKind]
      .filter((v) => v && taken.has(`k:${String(v)}`))
      .map((v) => `"${String(v)}" is already in use`),
  ];
  const accepted = !clashes.length;
  const acceptedNames = accepted ? { ...names } : (o.status?.acceptedNames ?? {});
  const conditions = [
    accepted
      ? cond('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found', now, prev)
      : cond('NamesAccepted', 'False', 'NameConflict', clashes.join(', '), now, prev),
    accepted || prev.some((c) => c.type === 'Established' && c.status === 'True')
      ? cond('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted', now, prev)
      : cond('Established', 'False', 'NotAccepted', 'not all names are accepted', now, prev),
  ];
  if (o.metadata?.deletionTimestamp)
    conditions.push(
      cond('Terminating', 'True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress', now, prev),
    );
  const storage = ((spec.versions ?? []) as Obj[]).find((v) => v.storage === true)?.name as string | undefined;
  const stored = [...((o.status?.storedVersions ?? []) as string[])];
  if (storage && !stored.includes(storage)) stored.push(storage);
  return { conditions, acceptedNames, storedVersions: stored };
}

/** Upstream's version order (v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > other names, alphabetical). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return [Number(m[1]), m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, Number(m[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa && pb) return pb[1] - pa[1] || pb[0] - pa[0] || pb[2] - pa[2];
  if (pa) return -1;
  if (pb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The reversed-domain definition name of a custom kind in /openapi (stable.example.com → com.example.stable.v1.CronTab). */
export const definitionName = (group: string, version: string, kind: string): string =>
  `${group.split('.').reverse().join('.')}.${version}.${kind}`;

/** The resources a definition serves: one per served version, none while its names are not accepted. */
export function servedResources(o: Obj): ResourceDef[] {
  const spec = o.spec ?? {};
  const accepted = ((o.status?.conditions ?? []) as Obj[]).some((c) => c.type === 'Established' && c.status === 'True');
  if (!accepted) return [];
  const names = (o.status?.acceptedNames ?? spec.names ?? {}) as Obj;
  const versions = ((spec.versions ?? []) as Obj[]).filter((v) => v.served === true);
  const storageVersion = ((spec.versions ?? []) as Obj[]).find((v) => v.storage === true)?.name as string;
  const order = versions.map((v) => v.name as string).sort(compareVersions);
  return versions.map((v): ResourceDef => {
    const sub = (v.subresources ?? {}) as Obj;
    const raw = (v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }) as Obj;
    const custom: CustomVersion = {
      crd: o.metadata.name,
      openAPIV3Schema: raw,
      storageVersion,
      schema: toKindSchema(raw, { group: spec.group, version: v.name, kind: names.kind }),
      definition: definitionName(spec.group, v.name, names.kind),
      scale: sub.scale
        ? {
            specReplicasPath: sub.scale.specReplicasPath,
            statusReplicasPath: sub.scale.statusReplicasPath,
            labelSelectorPath: sub.scale.labelSelectorPath,
          }
        : undefined,
      columns: ((v.additionalPrinterColumns ?? []) as CustomVersion['columns']).map((c) => ({ ...c })),
      priority: order.indexOf(v.name),
      terminating: !!o.metadata?.deletionTimestamp,
    };
    return {
      group: spec.group,
      version: v.name,
      resource: names.plural,
      singular: names.singular ?? String(names.kind).toLowerCase(),
      kind: names.kind,
      listKind: names.listKind ?? `${String(names.kind)}List`,
      namespaced: spec.scope === 'Namespaced',
      shortNames: [...((names.shortNames ?? []) as string[])],
      ...(names.categories?.length ? { categories: [...(names.categories as string[])] } : {}),
      subresources: [...(sub.status ? (['status'] as const) : []), ...(sub.scale ? (['scale'] as const) : [])],
      fields: ((v.selectableFields ?? []) as Obj[]).map((f) => String(f.jsonPath).replace(/^\./, '')),
      custom,
    };
  });
}
