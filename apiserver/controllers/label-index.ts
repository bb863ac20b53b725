// Indexes for "which pods does this selector pick" and "which selectors pick
// this pod" without scanning every object: each namespace/key=value pair maps
// to the objects carrying it (labels) or asking for it (selectors), and a
// query starts from its rarest pair. Equality selectors only (Services').
type Labels = Record<string, string>;

const pair = (ns: string, k: string, v: string): string => `${ns}\u0000${k}=${v}`;

function add(m: Map<string, Set<string>>, p: string, key: string): void {
  let s = m.get(p);
  if (!s) m.set(p, (s = new Set()));
  s.add(key);
}
function remove(m: Map<string, Set<string>>, p: string, key: string): void {
  const s = m.get(p);
  if (!s) return;
  s.delete(key);
  if (!s.size) m.delete(p);
}

/** Objects by their labels: the keys of those a selector matches. */
export class LabelIndex {
  private readonly byPair = new Map<string, Set<string>>();
  private readonly byNs = new Map<string, Set<string>>();
  private readonly objects = new Map<string, { ns: string; labels: Labels }>();

  set(key: string, ns: string, labels: Labels | undefined): void {
    this.delete(key);
    const l = { ...(labels ?? {}) };
    this.objects.set(key, { ns, labels: l });
    add(this.byNs, ns, key);
    for (const [k, v] of Object.entries(l)) add(this.byPair, pair(ns, k, v), key);
  }

  delete(key: string): void {
    const o = this.objects.get(key);
    if (!o) return;
    this.objects.delete(key);
    remove(this.byNs, o.ns, key);
    for (const [k, v] of Object.entries(o.labels)) remove(this.byPair, pair(o.ns, k, v), key);
  }

  /** Keys of the objects in `ns` whose labels include every pair of `selector` (all of `ns` for an empty one). */
  select(ns: string, selector: Labels): string[] {
    const pairs = Object.entries(selector);
    if (!pairs.length) return [...(this.byNs.get(ns) ?? [])];
    let smallest: Set<string> | undefined;
    for (const [k, v] of pairs) {
      const s = this.byPair.get(pair(ns, k, v));
      if (!s) return [];
      if (!smallest || s.size < smallest.size) smallest = s;
    }
    return [...smallest!].filter((key) => {
      const l = this.objects.get(key)!.labels;
      return pairs.every(([k, v]) => l[k] === v);
    });
  }
}

/** Selectors by their pairs: the keys of those that pick an object with given labels. */
export class SelectorIndex {
  private readonly byPair = new Map<string, Set<string>>();
  private readonly selectors = new Map<string, { ns: string; selector: Labels; first: string }>();

  /** An empty or missing selector picks nothing (a Service without a selector has no managed endpoints). */
  set(key: string, ns: string, selector: Labels | undefined): void {
    this.delete(key);
    const pairs = Object.entries(selector ?? {});
    if (!pairs.length) return;
    // Indexed under one pair only: a match must carry it, and the rest is checked.
    const [k, v] = pairs[0]!;
    const first = pair(ns, k, v);
    this.selectors.set(key, { ns, selector: { ...selector }, first });
    add(this.byPair, first, key);
  }

  delete(key: string): void {
    const s = this.selectors.get(key);
    if (!s) return;
    this.selectors.delete(key);
    remove(this.byPair, s.first, key);
  }

  /** Keys of the selectors in `ns` that `labels` satisfies. */
  matching(ns: string, labels: Labels | undefined): string[] {
    const out: string[] = [];
    for (const [k, v] of Object.entries(labels ?? {})) {
      for (const key of this.byPair.get(pair(ns, k, v)) ?? []) {
        const s = this.selectors.get(key)!;
        if (Object.entries(s.selector).every(([sk, sv]) => labels![sk] === sv)) out.push(key);
      }
    }
    return out;
  }
}
