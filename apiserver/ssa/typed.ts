// Schema-driven walks over objects for server-side apply, after
// structured-merge-diff: the set of fields an object sets, the comparison
// of two objects, the merge of an applied configuration onto the live
// object, and the removal of fields. Lists merge by the schema's keys
// (containers by name, ports by containerPort+protocol), sets by value,
// everything else is atomic; maps merge per key unless marked atomic.
import { isFreeForm, resolve, type Schema } from '../openapi/schema.js';
import { fieldPE, FieldSet, indexPE, keyPE, type Path, type PathElement, valuePE } from './fieldset.js';

type Json = unknown;
type JObj = Record<string, Json>;
const isObj = (v: Json): v is JObj => typeof v === 'object' && v !== null && !Array.isArray(v);

type Element =
  | { kind: 'scalar' | 'atomic' }
  | { kind: 'struct'; fields: Record<string, Schema> }
  | { kind: 'map'; values: Schema | undefined }
  | { kind: 'list'; items: Schema | undefined; keys?: string[]; set?: boolean };

/** What a schema (or, without one, the value itself) says a node is. */
function elementOf(s: Schema | undefined, v: Json): Element {
  const sch = resolve(s);
  if (!sch || isFreeForm(sch))
    return isObj(v) ? { kind: 'map', values: undefined } : Array.isArray(v) ? { kind: 'atomic' } : { kind: 'scalar' };
  if (sch.type === 'array') {
    const lt = sch['x-kubernetes-list-type'];
    if (lt === 'map') return { kind: 'list', items: sch.items, keys: sch['x-kubernetes-list-map-keys'] ?? [] };
    if (lt === 'set') return { kind: 'list', items: sch.items, set: true };
    if (lt === 'atomic') return { kind: 'atomic' };
    const mergeKey = sch['x-kubernetes-patch-merge-key'];
    if (mergeKey) return { kind: 'list', items: sch.items, keys: [mergeKey] };
    if (sch['x-kubernetes-patch-strategy']?.includes('merge')) return { kind: 'list', items: sch.items, set: true };
    return { kind: 'atomic' };
  }
  if (sch.type === 'object' || sch.properties || sch.additionalProperties) {
    if (sch['x-kubernetes-map-type'] === 'atomic') return { kind: 'atomic' };
    if (sch.properties) return { kind: 'struct', fields: sch.properties };
    return { kind: 'map', values: typeof sch.additionalProperties === 'object' ? sch.additionalProperties : undefined };
  }
  return { kind: 'scalar' };
}

const childSchema = (el: Element, key: string): Schema | undefined =>
  el.kind === 'struct' ? el.fields[key] : el.kind === 'map' ? el.values : undefined;

// Key fields the API defaults (upstream's schema says so; its v2 form does not carry defaults): an item that
// leaves them out is the same item as the defaulted one already stored.
const KEY_DEFAULTS: Record<string, Json> = { protocol: 'TCP' };

function itemPE(el: Extract<Element, { kind: 'list' }>, item: Json, i: number): PathElement {
  if (el.set) return valuePE(item);
  if (el.keys?.length && isObj(item) && el.keys.some((k) => item[k] !== undefined)) {
    const keyed = { ...item };
    for (const k of el.keys) if (keyed[k] === undefined && k in KEY_DEFAULTS) keyed[k] = KEY_DEFAULTS[k];
    return keyPE(keyed, el.keys);
  }
  return indexPE(i);
}

function indexItems(el: Extract<Element, { kind: 'list' }>, list: Json[]): Map<PathElement, Json> {
  const m = new Map<PathElement, Json>();
  list.forEach((x, i) => m.set(itemPE(el, x, i), x));
  return m;
}

/** The fields `v` sets (ToFieldSet): leaves, atomic values, list items, map entries. */
export function toFieldSet(v: Json, s: Schema | undefined): FieldSet {
  const set = new FieldSet();
  const walk = (x: Json, sch: Schema | undefined, path: Path): void => {
    const el = elementOf(sch, x);
    if (el.kind === 'scalar' || el.kind === 'atomic' || x === null) return set.insert(path);
    if (el.kind === 'list') {
      if (!Array.isArray(x)) return set.insert(path);
      for (const [pe, item] of indexItems(el, x)) {
        set.insert([...path, pe]);
        walk(item, el.items, [...path, pe]);
      }
      return;
    }
    if (!isObj(x)) return set.insert(path);
    for (const [k, child] of Object.entries(x)) {
      const p = [...path, fieldPE(k)];
      walk(child, childSchema(el, k), p);
      if (child === null || (isObj(child) && !Object.keys(child).length) || el.kind === 'map') set.insert(p);
    }
  };
  walk(v, s, []);
  return set;
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

const emptyish = (v: Json): boolean =>
  v === undefined || v === null || (Array.isArray(v) && !v.length) || (isObj(v) && !Object.keys(v).length);

/** What changed from `l` to `r` (Compare). Struct nodes themselves are not recorded, only what they hold. */
export function compare(l: Json, r: Json, s: Schema | undefined): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const leaf = (a: Json, b: Json, path: Path): void => {
    if (a === undefined) c.added.insert(path);
    else if (b === undefined) c.removed.insert(path);
    else if (!deepEqual(a, b)) c.modified.insert(path);
  };
  const walk = (a: Json, b: Json, sch: Schema | undefined, path: Path): void => {
    const el = elementOf(sch, b !== undefined ? b : a);
    if (
      el.kind === 'scalar' ||
      el.kind === 'atomic' ||
      (emptyish(a) && emptyish(b)) ||
      (a !== undefined && b !== undefined && (Array.isArray(a) !== Array.isArray(b) || isObj(a) !== isObj(b)))
    )
      return leaf(a, b, path);
    if (el.kind === 'list') {
      const la = indexItems(el, Array.isArray(a) ? a : []);
      const lb = indexItems(el, Array.isArray(b) ? b : []);
      for (const pe of new Set([...la.keys(), ...lb.keys()])) walk(la.get(pe), lb.get(pe), el.items, [...path, pe]);
    } else {
      const oa = isObj(a) ? a : {};
      const ob = isObj(b) ? b : {};
      for (const k of new Set([...Object.keys(oa), ...Object.keys(ob)]))
        walk(oa[k], ob[k], childSchema(el, k), [...path, fieldPE(k)]);
    }
    // Maps, lists and list items are recorded themselves when they come or go; structs only through what they hold.
    if (path.length && (el.kind !== 'struct' || !path[path.length - 1]!.startsWith('f:'))) {
      if (a === undefined) c.added.insert(path);
      else if (b === undefined) c.removed.insert(path);
    }
  };
  walk(l, r, s, []);
  return c;
}

export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** The applied configuration `r` merged onto `l`: r's values win, keyed list items merge, items only in l keep their place. */
export function merge(l: Json, r: Json, s: Schema | undefined): Json {
  if (r === undefined) return l;
  if (l === undefined || l === null || r === null) return structuredClone(r);
  const el = elementOf(s, r);
  if (el.kind === 'scalar' || el.kind === 'atomic') return structuredClone(r);
  if (el.kind === 'list') {
    if (!Array.isArray(l) || !Array.isArray(r)) return structuredClone(r);
    const la = indexItems(el, l);
    const rb = indexItems(el, r);
    const rOrder = [...rb.keys()];
    const out: Json[] = [];
    let next = 0;
    const emitUpTo = (pe: PathElement): void => {
      while (next < rOrder.length) {
        const cur = rOrder[next++]!;
        out.push(merge(la.get(cur), rb.get(cur), el.items));
        if (cur === pe) return;
      }
    };
    for (const [pe, item] of la) {
      if (!rb.has(pe)) out.push(item);
      else if (rOrder.indexOf(pe) >= next) emitUpTo(pe);
    }
    while (next < rOrder.length) {
      const cur = rOrder[next++]!;
      out.push(merge(la.get(cur), rb.get(cur), el.items));
    }
    return out;
  }
  if (!isObj(l) || !isObj(r)) return structuredClone(r);
  const out: JObj = { ...l };
  for (const [k, v] of Object.entries(r)) {
    const m = merge(l[k], v, childSchema(el, k));
    if (m === null) delete out[k];
    else out[k] = m;
  }
  return out;
}

/**
 * `v` without the member paths of `set` (list items, map entries, leaves), except nodes under which
 * `keep` still owns something (those lose only what `set` holds below them); maps and lists emptied by it go too.
 */
export function removeFields(v: Json, set: FieldSet, s: Schema | undefined, keep: FieldSet = new FieldSet()): Json {
  const el = elementOf(s, v);
  const visit = (pe: PathElement, child: Json, sch: Schema | undefined): { drop: boolean; value: Json } => {
    const kept = keep.children.get(pe);
    const held = keep.members.has(pe) || (kept !== undefined && !kept.isEmpty());
    if (set.members.has(pe) && !held) return { drop: true, value: undefined };
    const c = set.children.get(pe);
    if (!c) return { drop: false, value: child };
    const pruned = removeFields(child, c, sch, kept);
    return { drop: emptyish(pruned) && !emptyish(child), value: pruned };
  };
  if (el.kind === 'list' && Array.isArray(v)) {
    const out: Json[] = [];
    v.forEach((item, i) => {
      const r = visit(itemPE(el, item, i), item, el.items);
      if (!r.drop) out.push(r.value);
    });
    return out;
  }
  if ((el.kind === 'struct' || el.kind === 'map') && isObj(v)) {
    const out: JObj = {};
    for (const [k, child] of Object.entries(v)) {
      const r = visit(fieldPE(k), child, childSchema(el, k));
      if (!r.drop) out[k] = r.value;
    }
    return out;
  }
  return v;
}
