// Table output of custom resources: the name, the definition's
// additionalPrinterColumns read with kubectl's JSONPath subset, and Age
// when the definition names no columns (upstream's default).
import type { CustomVersion } from '../resources.js';
import type { Obj } from '../storage/store.js';

type Step =
  | { field: string }
  | { index: number }
  | { all: true }
  | { filter: { path: string[]; op: string; value: string | number | boolean } };

/** `.status.conditions[?(@.type=="Ready")].status` → steps; undefined when it is not in the supported subset. */
export function parseJsonPath(expr: string): Step[] | undefined {
  const s = expr
    .trim()
    .replace(/^\{(.*)\}$/, '$1')
    .replace(/^\$/, '');
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] === '.') {
      const m = /^\.([A-Za-z0-9_\-$]+)/.exec(s.slice(i));
      if (!m) return undefined;
      steps.push({ field: m[1]! });
      i += m[0].length;
    } else if (s[i] === '[') {
      const end = s.indexOf(']', i);
      if (end < 0) return undefined;
      const inner = s.slice(i + 1, end);
      if (inner === '*') steps.push({ all: true });
      else if (/^\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (/^'[^']*'$|^"[^"]*"$/.test(inner)) steps.push({ field: inner.slice(1, -1) });
      else {
        const f =
          /^\?\(@((?:\.[A-Za-z0-9_-]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?\d+(?:\.\d+)?)|(true|false))\s*\)$/.exec(
            inner,
          );
        if (!f) return undefined;
        const value = f[3] ?? f[4] ?? (f[5] !== undefined ? Number(f[5]) : f[6] === 'true');
        steps.push({ filter: { path: f[1]!.slice(1).split('.'), op: f[2]!, value } });
      }
      i = end + 1;
    } else return undefined;
  }
  return steps;
}

/** The values a path reaches in `o` (a filter or wildcard may reach several). */
export function evalJsonPath(o: unknown, steps: Step[]): unknown[] {
  let cur: unknown[] = [o];
  for (const st of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if ('field' in st) {
        if (v && typeof v === 'object' && !Array.isArray(v) && (v as Obj)[st.field] !== undefined)
          next.push((v as Obj)[st.field]);
      } else if ('index' in st) {
        if (Array.isArray(v) && st.index < v.length) next.push(v[st.index]);
      } else if ('all' in st) {
        if (Array.isArray(v)) next.push(...(v as unknown[]));
        else if (v && typeof v === 'object') next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const x of v) {
          let at: unknown = x;
          for (const k of st.filter.path) at = at && typeof at === 'object' ? (at as Obj)[k] : undefined;
          if ((at === st.filter.value) === (st.filter.op === '==')) next.push(x);
        }
      }
    }
    cur = next;
  }
  return cur;
}

type Col = { name: string; type: string; format: string; description: string; priority: number };

/** Upstream's CRD table convertor: Name, then the definition's columns, or Age when it names none. */
export function customColumns(c: CustomVersion): {
  columns: Col[];
  row: (o: Obj, now: number, age: (ts: string | undefined, now: number) => string) => unknown[];
} {
  const defined = c.columns.length
    ? c.columns
    : [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: '' }];
  const paths = defined.map((x) => parseJsonPath(x.jsonPath));
  const columns: Col[] = [
    {
      name: 'Name',
      type: 'string',
      format: 'name',
      description:
        'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
      priority: 0,
    },
    ...defined.map((x) => ({
      name: x.name,
      type: x.type,
      format: x.format ?? '',
      description: x.description ?? '',
      priority: x.priority ?? 0,
    })),
  ];
  const row = (o: Obj, now: number, age: (ts: string | undefined, now: number) => string): unknown[] => [
    o.metadata?.name,
    ...defined.map((x, i) => {
      const steps = paths[i];
      const vals = steps ? evalJsonPath(o, steps) : [];
      if (!vals.length) return null;
      const v = vals[0];
      // Dates read as ages, as upstream's printer shows them; other types are given as they are.
      if (x.type === 'date') return typeof v === 'string' ? age(v, now) : null;
      if (x.type === 'integer' || x.type === 'number') return typeof v === 'number' ? v : null;
      if (x.type === 'boolean') return typeof v === 'boolean' ? v : null;
      if (vals.length > 1) return vals.map((y) => (typeof y === 'object' ? JSON.stringify(y) : String(y))).join(',');
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    }),
  ];
  return { columns, row };
}
