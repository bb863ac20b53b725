// Sets of field paths, as server-side apply tracks ownership, with their
// FieldsV1 form (metadata.managedFields[].fieldsV1). A path is a list of
// elements spelled as in FieldsV1: `f:<field>`, `k:<json of key fields>`
// (an item of a list keyed by name, port…), `v:<json value>` (an item of a
// set), `i:<index>`. A path is a member when it is owned itself (a leaf,
// a list item, a map entry); `children` hold what is owned below it.
export type PathElement = string;
export type Path = PathElement[];

export class FieldSet {
  readonly members = new Set<PathElement>();
  readonly children = new Map<PathElement, FieldSet>();

  insert(path: Path): void {
    if (!path.length) return;
    const parent = path.slice(0, -1).reduce<FieldSet>((s, pe) => s.child(pe), this);
    parent.members.add(path[path.length - 1]!);
  }

  private child(pe: PathElement): FieldSet {
    let c = this.children.get(pe);
    if (!c) this.children.set(pe, (c = new FieldSet()));
    return c;
  }

  has(path: Path): boolean {
    if (!path.length) return false;
    const parent = path.slice(0, -1).reduce<FieldSet | undefined>((s, pe) => s?.children.get(pe), this);
    return !!parent?.members.has(path[path.length - 1]!);
  }

  /** The set below `path` (empty when nothing is). */
  at(path: Path): FieldSet {
    return path.reduce<FieldSet | undefined>((s, pe) => s?.children.get(pe), this) ?? new FieldSet();
  }

  isEmpty(): boolean {
    if (this.members.size) return false;
    for (const c of this.children.values()) if (!c.isEmpty()) return false;
    return true;
  }

  private combine(
    o: FieldSet,
    member: (inThis: boolean, inOther: boolean) => boolean,
    childOnlyHere: boolean,
    childOnlyThere: boolean,
  ): FieldSet {
    const out = new FieldSet();
    for (const pe of new Set([...this.members, ...o.members]))
      if (member(this.members.has(pe), o.members.has(pe))) out.members.add(pe);
    for (const pe of new Set([...this.children.keys(), ...o.children.keys()])) {
      const a = this.children.get(pe);
      const b = o.children.get(pe);
      const c =
        a && b
          ? a.combine(b, member, childOnlyHere, childOnlyThere)
          : a
            ? childOnlyHere
              ? a.clone()
              : undefined
            : childOnlyThere
              ? b!.clone()
              : undefined;
      if (c && !c.isEmpty()) out.children.set(pe, c);
    }
    return out;
  }

  union(o: FieldSet): FieldSet {
    return this.combine(o, (a, b) => a || b, true, true);
  }

  difference(o: FieldSet): FieldSet {
    return this.combine(o, (a, b) => a && !b, true, false);
  }

  intersection(o: FieldSet): FieldSet {
    return this.combine(o, (a, b) => a && b, false, false);
  }

  clone(): FieldSet {
    return this.union(new FieldSet());
  }

  /** Every member path, depth first in FieldsV1 order. */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = [];
    for (const pe of sortElements(new Set([...this.members, ...this.children.keys()]))) {
      if (this.members.has(pe)) out.push([...prefix, pe]);
      const c = this.children.get(pe);
      if (c) out.push(...c.paths([...prefix, pe]));
    }
    return out;
  }

  equals(o: FieldSet): boolean {
    return this.difference(o).isEmpty() && o.difference(this).isEmpty();
  }

  /** Whether this set and a FieldsV1 object share a member path; walks only this set (cheap when it is small). */
  touchesFieldsV1(raw: unknown): boolean {
    if (!raw || typeof raw !== 'object') return false;
    const r = raw as Record<string, unknown>;
    for (const pe of this.members) {
      const v = r[pe];
      if (v && typeof v === 'object' && (!Object.keys(v).length || '.' in v)) return true;
    }
    for (const [pe, c] of this.children) if (r[pe] !== undefined && c.touchesFieldsV1(r[pe])) return true;
    return false;
  }

  toFieldsV1(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const pe of sortElements(new Set([...this.members, ...this.children.keys()]))) {
      const c = this.children.get(pe);
      if (c && !c.isEmpty()) out[pe] = this.members.has(pe) ? { '.': {}, ...c.toFieldsV1() } : c.toFieldsV1();
      else if (this.members.has(pe)) out[pe] = {};
    }
    return out;
  }

  static fromFieldsV1(v: unknown): FieldSet {
    const s = new FieldSet();
    if (!v || typeof v !== 'object') return s;
    for (const [pe, sub] of Object.entries(v as Record<string, unknown>)) {
      if (pe === '.') continue;
      const keys = sub && typeof sub === 'object' ? Object.keys(sub) : [];
      if (!keys.length || keys.includes('.')) s.members.add(pe);
      if (keys.some((k) => k !== '.')) s.children.set(pe, FieldSet.fromFieldsV1(sub));
    }
    return s;
  }
}

const sortElements = (pes: Set<PathElement>): PathElement[] => [...pes].sort();

export const fieldPE = (name: string): PathElement => `f:${name}`;
export const valuePE = (v: unknown): PathElement => `v:${JSON.stringify(v)}`;
export const indexPE = (i: number): PathElement => `i:${i}`;
/** A keyed list item: its key fields as JSON, fields in name order. */
export const keyPE = (item: Record<string, unknown>, keys: string[]): PathElement =>
  `k:${JSON.stringify(
    Object.fromEntries(
      [...keys]
        .sort()
        .filter((k) => item[k] !== undefined)
        .map((k) => [k, item[k]]),
    ),
  )}`;

/** A path as upstream prints it in conflicts: .spec.containers[name="c"].image, .metadata.finalizers[="x"]. */
export function pathString(path: Path): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      if (pe.startsWith('f:')) return `.${body}`;
      if (pe.startsWith('i:')) return `[${body}]`;
      if (pe.startsWith('v:')) return `[=${body}]`;
      const key = JSON.parse(body) as Record<string, unknown>;
      return `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}]`;
    })
    .join('');
}
