// Strategic merge patch as upstream's apimachinery strategicpatch applies it, driven by the schema: each list field's
// patch strategy and merge key come from its x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key (a list
// without a merge strategy is replaced whole, as taints and tolerations are), with the directives kubectl sends:
// $patch (replace, delete, merge), $retainKeys, $setElementOrder/<list> and $deleteFromPrimitiveList/<list>.
import { PatchError } from './patch.js';

type J = unknown;
type Obj = Record<string, J>;
const isObj = (v: J): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the merge needs to know of a field: its patch strategy and merge key, and the schema of its parts. */
export interface PatchSchema {
  strategy?: string;
  mergeKey?: string;
  property(name: string): PatchSchema | undefined;
  items(): PatchSchema | undefined;
}

const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';
const RETAIN_KEYS = '$retainKeys';
const PATCH = '$patch';

const has = (strategy: string | undefined, s: string): boolean => (strategy ?? '').split(',').includes(s);
const same = (a: J, b: J): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Applies `patch` to `target` (an object) as a strategic merge patch under `schema`. */
export function strategicMergeBySchema(target: J, patch: J, schema: PatchSchema | undefined): J {
  if (!isObj(patch)) return structuredClone(patch);
  return mergeMap(isObj(target) ? target : {}, patch, schema);
}

function mergeMap(target: Obj, patch: Obj, schema: PatchSchema | undefined): Obj {
  const directive = patch[PATCH];
  if (directive === 'replace') {
    const { [PATCH]: _drop, ...rest } = patch;
    return strip(rest) as Obj;
  }
  if (directive !== undefined && directive !== 'merge')
    throw new PatchError(`Unrecognized $patch directive ${JSON.stringify(directive)} in a map`);
  let out: Obj = { ...target };
  // $retainKeys: keys of the original not listed go (the field's strategy must allow it: upstream checks).
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new PatchError('$retainKeys must be a list');
    out = Object.fromEntries(Object.entries(out).filter(([k]) => retain.includes(k)));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === PATCH || k === RETAIN_KEYS || k.startsWith(SET_ORDER)) continue;
    if (k.startsWith(DELETE_PRIMITIVE)) {
      const field = k.slice(DELETE_PRIMITIVE.length);
      if (!Array.isArray(v)) throw new PatchError(`${k} must be a list`);
      if (Array.isArray(out[field])) out[field] = (out[field] as J[]).filter((x) => !v.some((d) => same(d, x)));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const field = schema?.property(k);
    if (isObj(v)) {
      if (v[PATCH] === 'delete') delete out[k];
      else out[k] = isObj(out[k]) ? mergeMap(out[k] as Obj, v, field) : (strip(v) as Obj);
    } else if (Array.isArray(v)) {
      out[k] = Array.isArray(out[k]) && has(field?.strategy, 'merge') ? mergeList(out[k] as J[], v, field!) : strip(v);
    } else out[k] = v;
  }
  for (const [k, order] of Object.entries(patch)) {
    if (!k.startsWith(SET_ORDER)) continue;
    const field = k.slice(SET_ORDER.length);
    if (!Array.isArray(order)) throw new PatchError(`${k} must be a list`);
    if (Array.isArray(out[field])) out[field] = applyOrder(out[field] as J[], order, schema?.property(field)?.mergeKey);
  }
  return out;
}

/** A list field with the merge strategy: items by merge key (or primitives, each once), with $patch items. */
function mergeList(target: J[], patch: J[], field: PatchSchema): J[] {
  if (patch.some((x) => isObj(x) && x[PATCH] === 'replace'))
    return patch.filter((x) => !(isObj(x) && x[PATCH] === 'replace')).map(strip);
  const key = field.mergeKey;
  const items = field.items();
  if (!key) {
    // A merged list of primitives (finalizers): the union, in upstream's order.
    const out = [...target];
    for (const x of patch) if (!out.some((t) => same(t, x))) out.push(x);
    return normalizeOrder(out, patch, target, (x) => JSON.stringify(x));
  }
  const out = [...target];
  for (const item of patch) {
    if (!isObj(item)) throw new PatchError(`a list merged by "${key}" holds only objects`);
    if (item[key] === undefined && item[PATCH] !== 'delete')
      throw new PatchError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const i = out.findIndex((t) => isObj(t) && same(t[key], item[key]));
    if (item[PATCH] === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = mergeMap(out[i] as Obj, item, items);
    else out.push(mergeMap({}, item, items));
  }
  const id = (x: J): string => JSON.stringify(isObj(x) ? x[key] : x);
  const kept = target.filter((t) => out.some((o) => id(o) === id(t)));
  return normalizeOrder(
    out,
    patch.filter((x) => isObj(x) && x[PATCH] !== 'delete'),
    kept,
    id,
  );
}

/**
 * Upstream's normalizeElementOrder: the items the patch names in the patch's order, the others in the original's,
 * then merged as mergeSortedSlice does: an item the patch adds goes before the original's items, not after them.
 */
function normalizeOrder(merged: J[], patchOrder: J[], serverOrder: J[], id: (x: J) => string): J[] {
  const at = (order: J[]): ((x: J) => number) => {
    const m = new Map(order.map((x, i) => [id(x), i]));
    return (x) => m.get(id(x)) ?? -1;
  };
  const inPatch = at(patchOrder);
  const inServer = at(serverOrder);
  const right = merged.filter((x) => inPatch(x) >= 0).sort((a, b) => inPatch(a) - inPatch(b));
  const left = merged.filter((x) => inPatch(x) < 0).sort((a, b) => inServer(a) - inServer(b));
  const out: J[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      const l = inServer(left[i]);
      const r = inServer(right[j]);
      if (l >= 0 && r >= 0 && l < r) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/**
 * $setElementOrder: the items it names take the places the named items hold, in its order; items it does not name
 * (added by someone else) keep their places.
 */
function applyOrder(list: J[], order: J[], key: string | undefined): J[] {
  const id = (x: J): string => JSON.stringify(key && isObj(x) ? x[key] : x);
  const rank = new Map(order.map((x, i) => [id(x), i]));
  const named = list.filter((x) => rank.has(id(x))).sort((a, b) => rank.get(id(a))! - rank.get(id(b))!);
  let next = 0;
  return list.map((x) => (rank.has(id(x)) ? named[next++] : x));
}

/** A value taken whole from the patch: directives inside it are dropped, and so are null fields (absent once typed). */
function strip(v: J): J {
  if (Array.isArray(v))
    return v.filter((x) => !(isObj(x) && x[PATCH] !== undefined && Object.keys(x).length === 1)).map(strip);
  if (!isObj(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(
        ([k, x]) =>
          x !== null && k !== PATCH && k !== RETAIN_KEYS && !k.startsWith(SET_ORDER) && !k.startsWith(DELETE_PRIMITIVE),
      )
      .map(([k, x]) => [k, strip(x)]),
  );
}
