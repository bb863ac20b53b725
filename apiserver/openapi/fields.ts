// Server-side field validation (fieldValidation=Strict|Warn|Ignore): fields
// the schema does not declare are dropped, as decoding into upstream's typed
// structs drops them, and reported with upstream's wording; so are keys a
// JSON body repeats.
import { errors } from '../api/errors.js';
import { isFreeForm, resolve, type Schema } from './schema.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export function fieldValidationParam(v: string | null): FieldValidation {
  if (v === null || v === '') return 'Warn'; // upstream's default when a client does not say
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw errors.badRequest(
    `fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`,
  );
}

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Removes, in place, every field `schema` does not declare; returns their paths (spec.containers[0].foo). */
export function dropUnknownFields(value: Json, schema: Schema | undefined, path = ''): string[] {
  const out: string[] = [];
  const walk = (v: Json, s: Schema | undefined, p: string): void => {
    const sch = resolve(s);
    if (!sch || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      if (sch.items) v.forEach((x, i) => walk(x, sch.items, `${p}[${i}]`));
      return;
    }
    if (isFreeForm(sch) || !isObj(v)) return;
    if (sch.properties) {
      for (const k of Object.keys(v)) {
        const ps = sch.properties[k];
        const kp = p ? `${p}.${k}` : k;
        if (ps) walk(v[k], ps, kp);
        else {
          out.push(kp);
          delete v[k];
        }
      }
    } else if (typeof sch.additionalProperties === 'object') {
      for (const k of Object.keys(v)) walk(v[k], sch.additionalProperties, p ? `${p}.${k}` : k);
    }
  };
  walk(value, schema, path);
  return out;
}

/**
 * Keys a JSON text repeats within one object, as paths in document order,
 * and the offset where each path first appears (to order reports as upstream).
 */
export function scanJsonKeys(text: string): { duplicates: string[]; firstAt: Map<string, number> } {
  const duplicates: string[] = [];
  const firstAt = new Map<string, number>();
  // A stack of open containers: an object's seen keys, or an array's next index.
  const stack: (
    { kind: 'obj'; path: string; seen: Set<string>; key?: string } | { kind: 'arr'; path: string; index: number }
  )[] = [];
  const childPath = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    if (top.kind === 'arr') return `${top.path}[${top.index}]`;
    return top.path ? `${top.path}.${top.key}` : top.key!;
  };
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (expectKey && top?.kind === 'obj') {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, j + 1)) as string;
        } catch {
          key = text.slice(i + 1, j);
        }
        const p = top.path ? `${top.path}.${key}` : key;
        if (top.seen.has(key)) duplicates.push(p);
        else {
          top.seen.add(key);
          if (!firstAt.has(p)) firstAt.set(p, i);
        }
        top.key = key;
        expectKey = false;
      }
      i = j;
    } else if (c === '{') {
      stack.push({ kind: 'obj', path: childPath(), seen: new Set() });
      expectKey = true;
    } else if (c === '[') {
      stack.push({ kind: 'arr', path: childPath(), index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'arr') top.index++;
      else expectKey = true;
    }
  }
  return { duplicates, firstAt };
}

export interface FieldReport {
  /** Unknown-field paths, already dropped from the object. */
  unknown: string[];
  /** Repeated keys in the request body. */
  duplicates: string[];
  /** Order reports by where each path first appears in the body (create and update), else duplicates first and unknowns sorted (patches). */
  firstAt?: Map<string, number>;
}

/** The reports in upstream's order and wording: `unknown field "spec.foo"`, `duplicate field "metadata.name"`. */
export function fieldMessages(r: FieldReport): string[] {
  const unknown = r.unknown.map((p) => ({ p, msg: `unknown field ${JSON.stringify(p)}` }));
  const dup = r.duplicates.map((p) => ({ p, msg: `duplicate field ${JSON.stringify(p)}` }));
  if (!r.firstAt) return [...dup, ...unknown.sort((a, b) => (a.p < b.p ? -1 : a.p > b.p ? 1 : 0))].map((x) => x.msg);
  const at = r.firstAt;
  // A duplicate sits where its path first appeared, after that path's own report.
  const keyed = [
    ...dup.map((x) => ({ ...x, at: at.get(x.p) ?? Infinity, n: 1 })),
    ...unknown.map((x) => ({ ...x, at: at.get(x.p) ?? Infinity, n: 0 })),
  ];
  return keyed.sort((a, b) => a.at - b.at || a.n - b.n).map((x) => x.msg);
}
