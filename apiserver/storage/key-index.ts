// The store's keys by resource, each resource's kept sorted: a list reads
// only its own resource (a namespace's only that namespace's range) instead
// of every object in the store, and needs no sort. Keys look like
// `<group>/<resource>/<namespace>/<name>`; the bucket is the key up to its
// second slash. Order is byte order (JavaScript's `<` on these ASCII keys),
// as etcd's, so a continue token that means "after this key" agrees with it.

/** The key's bucket: up to and including its second slash; '' for a key with fewer. */
export function bucketOf(key: string): string {
  const a = key.indexOf('/');
  const b = a < 0 ? -1 : key.indexOf('/', a + 1);
  return b < 0 ? '' : key.slice(0, b + 1);
}

/** Binary search: the first index in [0, length) for which `before` is false (`before` holds for a prefix only). */
export function firstIndex(length: number, before: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index in sorted `xs` whose value is >= `x` (or > `x` when `after`). */
export const lowerBound = (xs: readonly string[], x: string, after = false): number =>
  firstIndex(xs.length, (i) => xs[i]! < x || (after && xs[i] === x));

export class KeyIndex {
  private readonly buckets = new Map<string, string[]>();

  add(key: string): void {
    const id = bucketOf(key);
    let keys = this.buckets.get(id);
    if (!keys) this.buckets.set(id, (keys = []));
    const i = lowerBound(keys, key);
    if (keys[i] !== key) keys.splice(i, 0, key);
  }

  remove(key: string): void {
    const id = bucketOf(key);
    const keys = this.buckets.get(id);
    if (!keys) return;
    const i = lowerBound(keys, key);
    if (keys[i] !== key) return;
    keys.splice(i, 1);
    if (!keys.length) this.buckets.delete(id);
  }

  /** Calls `fn` with each key that starts with `prefix`: in byte order within each bucket, buckets in byte order. */
  forEach(prefix: string, fn: (key: string) => void): void {
    const id = bucketOf(prefix);
    // A prefix inside one resource reads that bucket; a shorter one (a whole API group) every bucket it covers.
    const ids = id ? [id] : [...this.buckets.keys()].filter((b) => b.startsWith(prefix) || b === '').sort();
    for (const b of ids) {
      const keys = this.buckets.get(b);
      if (!keys) continue;
      for (let i = lowerBound(keys, prefix); i < keys.length && keys[i]!.startsWith(prefix); i++) fn(keys[i]!);
    }
  }
}
