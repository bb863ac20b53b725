// The three PATCH flavours the apiserver accepts: JSON merge patch (RFC 7386),
// JSON patch (RFC 6902), and strategic merge patch (merge-by-key lists).
type J = unknown;
type Obj = Record<string, J>;
const isObj = (v: J): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export class PatchError extends Error {}

/** A JSON patch that is not a list of operations: refused before it is applied (upstream's 400, not 422). */
export class PatchDecodeError extends PatchError {}

/** The JSON kind Go's decoder names in `cannot unmarshal <kind> into Go value`. */
const goKind = (v: unknown): string =>
  v === null ? 'null' : typeof v === 'boolean' ? 'bool' : typeof v === 'object' ? 'object' : typeof v;

export function mergePatch(target: J, patch: J): J {
  if (!isObj(patch)) return structuredClone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

function unescape(seg: string): string {
  return seg.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new PatchError(`invalid JSON pointer "${p}"`);
  return p.slice(1).split('/').map(unescape);
}

function getAt(doc: J, path: string[]): J {
  let cur = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isObj(cur)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function setAt(doc: J, path: string[], value: J, mode: 'add' | 'replace' | 'remove'): J {
  if (path.length === 0) return mode === 'remove' ? null : value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(doc)) {
    const arr = [...doc];
    const idx = head === '-' ? arr.length : Number(head);
    if (
      !Number.isInteger(idx) ||
      idx < 0 ||
      idx > arr.length ||
      (rest.length === 0 && mode !== 'add' && idx >= arr.length)
    )
      throw new PatchError(`index ${head} out of range`);
    if (rest.length) arr[idx] = setAt(arr[idx], rest, value, mode);
    else if (mode === 'add') arr.splice(idx, 0, value);
    else if (mode === 'replace') arr[idx] = value;
    else arr.splice(idx, 1);
    return arr;
  }
  if (!isObj(doc)) throw new PatchError(`path segment "${head}" does not exist`);
  const o = { ...doc };
  if (rest.length) {
    if (!(head in o)) throw new PatchError(`path segment "${head}" does not exist`);
    o[head] = setAt(o[head], rest, value, mode);
  } else if (mode === 'remove') {
    if (!(head in o)) throw new PatchError(`unable to remove nonexistent key "${head}"`);
    delete o[head];
  } else {
    if (mode === 'replace' && !(head in o))
      throw new PatchError(`replace operation does not apply: doc is missing key "${head}"`);
    o[head] = value;
  }
  return o;
}

export function jsonPatch(doc: J, ops: J): J {
  if (!Array.isArray(ops))
    throw new PatchDecodeError(
      `error decoding patch: json: cannot unmarshal ${goKind(ops)} into Go value of type []handlers.jsonPatchOp`,
    );
  let cur = structuredClone(doc);
  for (const raw of ops) {
    if (!isObj(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string')
      throw new PatchError('each JSON patch operation needs "op" and "path"');
    const path = parsePointer(raw.path);
    switch (raw.op) {
      case 'add':
        cur = setAt(cur, path, structuredClone(raw.value), 'add');
        break;
      case 'replace':
        cur = setAt(cur, path, structuredClone(raw.value), 'replace');
        break;
      case 'remove':
        cur = setAt(cur, path, undefined, 'remove');
        break;
      case 'move':
      case 'copy': {
        if (typeof raw.from !== 'string') throw new PatchError(`"${raw.op}" needs "from"`);
        const from = parsePointer(raw.from);
        const v = getAt(cur, from);
        if (v === undefined) throw new PatchError(`"from" path ${raw.from} does not exist`);
        if (raw.op === 'move') cur = setAt(cur, from, undefined, 'remove');
        cur = setAt(cur, path, structuredClone(v), 'add');
        break;
      }
      case 'test':
        if (JSON.stringify(getAt(cur, path)) !== JSON.stringify(raw.value))
          throw new PatchError(`test operation failed at ${raw.path}`);
        break;
      default:
        throw new PatchError(`unknown JSON patch operation "${raw.op}"`);
    }
  }
  return cur;
}

/** Merge keys of list fields, by field name (as in the upstream Go struct tags). */
export const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  conditions: 'type',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  ephemeralContainerStatuses: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  ports: 'containerPort',
  imagePullSecrets: 'name',
  tolerations: 'key',
  hostAliases: 'ip',
  ownerReferences: 'uid',
  podIPs: 'ip',
  hostIPs: 'ip',
  addresses: 'type',
  taints: 'key',
  images: 'names',
  resourceClaims: 'name',
};

function mergeList(key: string, field: string, target: J[], patch: J[], isServicePorts: boolean): J[] {
  const mk = isServicePorts ? 'port' : key;
  const out = [...target];
  for (const item of patch) {
    if (!isObj(item)) continue;
    if (item.$patch === 'delete') {
      const i = out.findIndex((t) => isObj(t) && t[mk] === item[mk]);
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    const i = out.findIndex((t) => isObj(t) && JSON.stringify(t[mk]) === JSON.stringify(item[mk]));
    if (i >= 0) out[i] = strategicMerge(out[i], item, field);
    else out.push(strategicMerge(undefined, item, field));
  }
  return out;
}

/** Strategic merge patch: like a merge patch, but lists with a merge key merge item by item. */
export function strategicMerge(target: J, patch: J, parentField = ''): J {
  if (!isObj(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return structuredClone(rest);
  }
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (
      k === '$patch' ||
      k.startsWith('$setElementOrder/') ||
      k.startsWith('$deleteFromPrimitiveList/') ||
      k === '$retainKeys'
    )
      continue;
    if (v === null) {
      delete out[k];
      continue;
    }
    const key = MERGE_KEYS[k];
    const servicePorts = k === 'ports' && parentField === 'spec-service';
    // A {$patch: replace} element in a list means: the other elements are the whole new list.
    const replaceList = Array.isArray(v) && v.some((x) => isObj(x) && x.$patch === 'replace');
    if (key && Array.isArray(v) && Array.isArray(out[k]) && !replaceList) {
      out[k] = mergeList(key, k, out[k] as J[], v, servicePorts);
    } else if (Array.isArray(v)) {
      out[k] = v.filter((x) => !(isObj(x) && x.$patch)).map((x) => strategicMerge(undefined, x, k));
    } else {
      out[k] = strategicMerge(
        out[k],
        v,
        k === 'spec' && isObj(out[k]) && 'clusterIP' in (out[k] as Obj) ? 'spec-service' : k,
      );
    }
  }
  return out;
}
