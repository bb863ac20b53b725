// metadata.managedFields as kube-apiserver keeps them: every write records
// which manager set which fields (operation Update), and server-side apply
// (operation Apply) merges a manager's configuration, refuses to change
// fields other managers own unless forced (409 naming them), and removes
// fields the manager stopped applying that nobody else owns.
import { ApiError } from '../api/errors.js';
import { kindSchema } from '../openapi/schema.js';
import { apiVersionOf, type ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';
import { fieldPE, FieldSet, type Path, pathString } from './fieldset.js';
import { compare, merge, removeFields, toFieldSet } from './typed.js';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

interface Managed {
  entry: ManagedFieldsEntry;
  set: FieldSet;
}

/** Who writes: the manager (fieldManager, or the user agent's first word), and through which subresource. */
export interface Writer {
  manager: string;
  subresource: string;
  now: string;
}

// Fields no manager owns (upstream's stripMeta): identity and bookkeeping.
const META_IGNORED = [
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'clusterName',
  'generation',
  'managedFields',
  'resourceVersion',
];
const IGNORED = new FieldSet();
for (const p of [
  [fieldPE('apiVersion')],
  [fieldPE('kind')],
  [fieldPE('metadata')],
  ...META_IGNORED.map((f) => [fieldPE('metadata'), fieldPE(f)]),
])
  IGNORED.insert(p);

/** The fields a write through `sub` can own: status only through status, everything else only through the main resource. */
function scoped(r: ResourceDef, sub: string, set: FieldSet): FieldSet {
  const s = set.difference(IGNORED);
  if (!r.subresources.includes('status')) return s;
  const status = new FieldSet();
  status.insert([fieldPE('status')]);
  if (sub === 'status' || sub === 'approval') {
    const only = new FieldSet();
    const below = s.at([fieldPE('status')]);
    if (s.members.has(fieldPE('status'))) only.members.add(fieldPE('status'));
    if (!below.isEmpty()) only.children.set(fieldPE('status'), below.clone());
    return only;
  }
  const out = s.difference(status);
  out.children.delete(fieldPE('status'));
  return out;
}

const decode = (list: unknown): Managed[] =>
  (Array.isArray(list) ? (list as ManagedFieldsEntry[]) : [])
    .filter((e) => e && e.manager)
    .map((e) => ({ entry: { ...e }, set: FieldSet.fromFieldsV1(e.fieldsV1) }));

function encode(managed: Managed[]): ManagedFieldsEntry[] {
  return managed
    .filter((m) => !m.set.isEmpty())
    .map((m) => ({ ...m.entry, fieldsType: 'FieldsV1', fieldsV1: m.set.toFieldsV1() }));
}

const withoutManaged = (o: Obj | undefined): Obj | undefined => {
  if (!o) return undefined;
  const { managedFields: _drop, ...md } = (o.metadata ?? {}) as Obj;
  return { ...o, metadata: md };
};

function entryFor(
  managed: Managed[],
  e: Required<Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'apiVersion'>> & { subresource: string },
): Managed {
  const same = (m: ManagedFieldsEntry) =>
    m.manager === e.manager &&
    m.operation === e.operation &&
    (m.subresource ?? '') === e.subresource &&
    (e.operation === 'Apply' || m.apiVersion === e.apiVersion);
  let m = managed.find((x) => same(x.entry));
  if (!m) {
    m = {
      entry: {
        manager: e.manager,
        operation: e.operation,
        apiVersion: e.apiVersion,
        ...(e.subresource ? { subresource: e.subresource } : {}),
      },
      set: new FieldSet(),
    };
    managed.push(m);
  }
  m.entry.apiVersion = e.apiVersion;
  return m;
}

/**
 * managedFields after an ordinary write (create, update, patch) of `next` over `cur`:
 * the writer takes every field it added or changed, from whoever held it; removed fields leave every manager.
 * A write that changes nothing keeps them as they were.
 */
export function trackUpdate(r: ResourceDef, cur: Obj | undefined, next: Obj, w: Writer): ManagedFieldsEntry[] {
  const entries = (
    Array.isArray(cur?.metadata?.managedFields) ? cur!.metadata.managedFields : []
  ) as ManagedFieldsEntry[];
  const c = compare(withoutManaged(cur) ?? {}, withoutManaged(next), kindSchema(r));
  const changed = scoped(r, w.subresource, c.modified.union(c.added));
  const removed = c.removed;
  if (changed.isEmpty() && scoped(r, w.subresource, removed).isEmpty()) return entries;
  const lost = changed.union(removed);
  const mine = {
    manager: w.manager,
    operation: 'Update' as const,
    apiVersion: apiVersionOf(r),
    subresource: w.subresource,
  };
  const isMine = (e: ManagedFieldsEntry) =>
    e.manager === mine.manager &&
    e.operation === 'Update' &&
    (e.subresource ?? '') === mine.subresource &&
    e.apiVersion === mine.apiVersion;
  const out: ManagedFieldsEntry[] = [];
  let own: FieldSet | undefined;
  for (const e of entries) {
    if (!e?.manager) continue;
    if (isMine(e)) {
      own = FieldSet.fromFieldsV1(e.fieldsV1);
      continue;
    }
    // Entries the write does not touch are kept as they are (no decoding, no re-encoding).
    if (!lost.touchesFieldsV1(e.fieldsV1)) {
      out.push(e);
      continue;
    }
    const set = FieldSet.fromFieldsV1(e.fieldsV1).difference(lost);
    if (!set.isEmpty()) out.push({ ...e, fieldsType: 'FieldsV1', fieldsV1: set.toFieldsV1() });
  }
  const set = (own ?? new FieldSet()).union(changed).difference(removed);
  if (!set.isEmpty())
    out.push({
      manager: mine.manager,
      operation: 'Update',
      apiVersion: mine.apiVersion,
      time: w.now,
      fieldsType: 'FieldsV1',
      fieldsV1: set.toFieldsV1(),
      ...(mine.subresource ? { subresource: mine.subresource } : {}),
    });
  return out;
}

const printManager = (e: ManagedFieldsEntry): string =>
  `${JSON.stringify(e.manager)}${e.subresource ? ` with subresource ${JSON.stringify(e.subresource)}` : ''}${e.operation === 'Update' ? ` using ${e.apiVersion}` : ''}`;

/** The 409 for an apply that would change fields other managers own, worded as upstream. */
export function conflictError(conflicts: { entry: ManagedFieldsEntry; paths: Path[] }[]): ApiError {
  const flat = conflicts.flatMap((c) => c.paths.map((p) => ({ who: printManager(c.entry), field: pathString(p) })));
  const n = flat.length;
  let message: string;
  if (n === 1) message = `Apply failed with 1 conflict: conflict with ${flat[0]!.who}: ${flat[0]!.field}`;
  else {
    const byManager = [...new Set(flat.map((f) => f.who))].sort();
    message = `Apply failed with ${n} conflicts: ${byManager.flatMap((who) => [`conflicts with ${who}:`, ...flat.filter((f) => f.who === who).map((f) => `- ${f.field}`)]).join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, {
    causes: flat.map((f) => ({ reason: 'FieldManagerConflict', message: `conflict with ${f.who}`, field: f.field })),
  });
}

/**
 * Server-side apply of `config` by `w.manager` onto `cur` (undefined: the object does not exist yet):
 * the merged object and its managedFields, or a conflict error when another manager owns a field
 * the configuration changes and `force` is not set (with force, the fields change hands).
 */
export function applyConfig(
  r: ResourceDef,
  cur: Obj | undefined,
  config: Obj,
  w: Writer & { force: boolean },
): { object: Obj; managedFields: ManagedFieldsEntry[] } {
  const schema = kindSchema(r);
  const managed = decode(cur?.metadata?.managedFields);
  const live = withoutManaged(cur) ?? {};
  const applied = withoutManaged(config)!;
  let merged = merge(live, applied, schema) as Obj;
  const newSet = scoped(r, w.subresource, toFieldSet(applied, schema));
  const mine = entryFor(managed, {
    manager: w.manager,
    operation: 'Apply',
    apiVersion: apiVersionOf(r),
    subresource: w.subresource,
  });
  const lastSet = mine.set;
  const c = compare(live, merged, schema);
  const changed = c.modified.union(c.added);
  const conflicts = managed
    .filter((m) => m !== mine)
    .map((m) => ({ m, x: m.set.intersection(changed) }))
    .filter((x) => !x.x.isEmpty());
  if (conflicts.length && !w.force)
    throw conflictError(conflicts.map(({ m, x }) => ({ entry: m.entry, paths: x.paths() })));
  for (const { m, x } of conflicts) m.set = m.set.difference(x);
  // Fields this manager applied before and no longer does, that no one else holds, go.
  const others = managed.filter((m) => m !== mine).reduce((acc, m) => acc.union(m.set), new FieldSet());
  const dropped = lastSet.difference(newSet).difference(others);
  if (!dropped.isEmpty()) merged = removeFields(merged, dropped, schema, newSet.union(others)) as Obj;
  // An apply that changes nothing (the same configuration again) leaves managedFields, timestamps included, as they were.
  const noop = changed.isEmpty() && dropped.isEmpty() && newSet.equals(lastSet) && !conflicts.length && mine.entry.time;
  mine.set = newSet;
  if (!noop) mine.entry.time = w.now;
  return { object: merged, managedFields: encode(managed) };
}
