// Protobuf messages to and from plain objects in one pass, with the
// conversions of @grpc/proto-loader (longs and enums as strings, defaults
// filled in), byte for byte what protobufjs's fromObject+encode and
// decode+toObject give (message-codec.test.ts holds it to that). protobufjs
// reads the schema and does the wire work (its Reader and Writer); what this
// does not do is build a message instance between the object and the wire,
// nor generate code per type at first use (which a starting kubelet would run
// in the interpreter: `npm run bench:cri-codec`, docs/benchmarks.md).
import protobuf from 'protobufjs';

export interface MessageCodec {
  encode(o: object): Buffer;
  decode(b: Uint8Array): object;
}

const { Long } = protobuf.util as unknown as { Long: typeof import('long').default };
const PACKED = protobuf.types.packed as Record<string, number | undefined>;
const LIMIT = protobuf.util.recursionLimit;
type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => !!v && typeof v === 'object';
/** An enum name the schema does not know: protobufjs leaves such a field unset. */
const UNSET = Symbol('unset');

/** What is written for a plain value (protobufjs fromObject's conversions), and how it is read back (toObject's). */
interface Scalar {
  convert(v: unknown): unknown;
  write(w: protobuf.Writer, v: unknown): void;
  read(r: protobuf.Reader): unknown;
  wireType: number;
  dflt(): unknown;
}

type LongT = import('long').default;

/** A 64-bit value in decimal, as Long's toString gives it (its arithmetic in JavaScript was a sixth of a list's decode). */
function decimal(l: LongT, unsigned: boolean): string {
  const hi = l.high;
  const lo = l.low >>> 0;
  if (hi >= 0 && hi < 0x200000) return String(hi * 4294967296 + lo); // below 2^53: exact as a number
  const v = (BigInt(hi >>> 0) << 32n) | BigInt(lo);
  return (unsigned ? v : BigInt.asIntN(64, v)).toString();
}

const long = (
  unsigned: boolean,
  write: (w: protobuf.Writer, v: LongT) => void,
  read: (r: protobuf.Reader) => LongT,
): Scalar => ({
  convert: (v) => Long.fromValue(v as string, unsigned),
  write: (w, v) => write(w, v as LongT),
  read: (r) => decimal(read(r), unsigned),
  wireType: 0,
  dflt: () => '0',
});

const SCALARS: Record<string, Scalar> = {
  string: {
    convert: String,
    write: (w, v) => void w.string(v as string),
    read: (r) => r.string(),
    wireType: 2,
    dflt: () => '',
  },
  bool: {
    convert: Boolean,
    write: (w, v) => void w.bool(v as boolean),
    read: (r) => r.bool(),
    wireType: 0,
    dflt: () => false,
  },
  int32: {
    convert: (v) => (v as number) | 0,
    write: (w, v) => void w.int32(v as number),
    read: (r) => r.int32(),
    wireType: 0,
    dflt: () => 0,
  },
  sint32: {
    convert: (v) => (v as number) | 0,
    write: (w, v) => void w.sint32(v as number),
    read: (r) => r.sint32(),
    wireType: 0,
    dflt: () => 0,
  },
  sfixed32: {
    convert: (v) => (v as number) | 0,
    write: (w, v) => void w.sfixed32(v as number),
    read: (r) => r.sfixed32(),
    wireType: 5,
    dflt: () => 0,
  },
  uint32: {
    convert: (v) => (v as number) >>> 0,
    write: (w, v) => void w.uint32(v as number),
    read: (r) => r.uint32(),
    wireType: 0,
    dflt: () => 0,
  },
  fixed32: {
    convert: (v) => (v as number) >>> 0,
    write: (w, v) => void w.fixed32(v as number),
    read: (r) => r.fixed32(),
    wireType: 5,
    dflt: () => 0,
  },
  double: {
    convert: Number,
    write: (w, v) => void w.double(v as number),
    read: (r) => r.double(),
    wireType: 1,
    dflt: () => 0,
  },
  float: {
    convert: Number,
    write: (w, v) => void w.float(v as number),
    read: (r) => r.float(),
    wireType: 5,
    dflt: () => 0,
  },
  int64: long(
    false,
    (w, v) => void w.int64(v),
    (r) => r.int64() as unknown as LongT,
  ),
  sint64: long(
    false,
    (w, v) => void w.sint64(v),
    (r) => r.sint64() as unknown as LongT,
  ),
  sfixed64: {
    ...long(
      false,
      (w, v) => void w.sfixed64(v),
      (r) => r.sfixed64() as unknown as LongT,
    ),
    wireType: 1,
  },
  uint64: long(
    true,
    (w, v) => void w.uint64(v),
    (r) => r.uint64() as unknown as LongT,
  ),
  fixed64: {
    ...long(
      true,
      (w, v) => void w.fixed64(v),
      (r) => r.fixed64() as unknown as LongT,
    ),
    wireType: 1,
  },
  bytes: {
    convert: (v) =>
      typeof v === 'string' ? Buffer.from(v, 'base64') : (v as { length?: number }).length! >= 0 ? v : UNSET,
    write: (w, v) => void w.bytes(v as Uint8Array),
    read: (r) => r.bytes(),
    wireType: 2,
    dflt: () => Buffer.alloc(0),
  },
};

const enumScalar = (e: protobuf.Enum, dflt: number, repeated: boolean): Scalar => ({
  // A known name or any number; an unknown name leaves a field unset and an array element at the default.
  convert: (v) =>
    typeof v === 'number'
      ? v
      : typeof v === 'string' && Object.prototype.hasOwnProperty.call(e.values, v)
        ? e.values[v]
        : repeated
          ? dflt
          : UNSET,
  write: (w, v) => void w.int32(v as number),
  read: (r) => {
    const n = r.int32();
    return e.valuesById[n] ?? n;
  },
  wireType: 0,
  dflt: () => e.valuesById[dflt] ?? dflt,
});

interface Field {
  name: string;
  fullName: string;
  id: number;
  kind: 'scalar' | 'message' | 'repeated' | 'map';
  scalar?: Scalar;
  message?: () => Plan;
  /** Repeated numeric fields are written packed and read either way. */
  packed: boolean;
  /** map<string, V>: the value's scalar or message. */
  mapValue?: { scalar?: Scalar; message?: () => Plan };
}

interface Plan {
  fullName: string;
  /** By field number, for reading. */
  byId: (Field | undefined)[];
  /** In field-number order, as protobufjs writes them. */
  fields: Field[];
  /** An object with every field at its default, keys in protobufjs's toObject order. */
  defaults(): Obj;
}

const plans = new WeakMap<protobuf.Type, Plan | null>();

/** The type's plan, or null when it (or a type it holds) uses what this codec does not do: oneofs, maps keyed by other than strings. */
function planOf(type: protobuf.Type): Plan | null {
  const known = plans.get(type);
  if (known !== undefined) return known;
  const plan: Plan = { fullName: type.fullName.slice(1), byId: [], fields: [], defaults: () => ({}) };
  plans.set(type, plan); // before the fields: types may hold themselves
  const unsupported = (): null => {
    plans.set(type, null);
    return null;
  };
  if (type.oneofsArray.length) return unsupported();
  const nested: protobuf.Type[] = [];
  const scalarOf = (f: protobuf.Field, repeated: boolean): Scalar | undefined => {
    if (f.resolvedType instanceof protobuf.Enum) return enumScalar(f.resolvedType, f.typeDefault as number, repeated);
    return f.resolvedType ? undefined : SCALARS[f.type];
  };
  const messageOf = (f: protobuf.Field): (() => Plan) | undefined => {
    if (!(f.resolvedType instanceof protobuf.Type)) return undefined;
    const t = f.resolvedType;
    nested.push(t);
    return () => plans.get(t)!;
  };
  for (const f of [...type.fieldsArray].sort((a, b) => a.id - b.id)) {
    f.resolve();
    const base = { name: f.name, fullName: f.fullName.slice(1), id: f.id, packed: false };
    let field: Field;
    if (f.map) {
      if ((f as unknown as protobuf.MapField).keyType !== 'string') return unsupported();
      field = { ...base, kind: 'map', mapValue: { scalar: scalarOf(f, false), message: messageOf(f) } };
    } else if (f.repeated) {
      const scalar = scalarOf(f, true);
      const wire = f.resolvedType instanceof protobuf.Enum ? 'int32' : f.type;
      field = {
        ...base,
        kind: 'repeated',
        scalar,
        message: messageOf(f),
        packed: f.packed && PACKED[wire] !== undefined,
      };
    } else {
      const message = messageOf(f);
      field = { ...base, kind: message ? 'message' : 'scalar', scalar: scalarOf(f, false), message };
    }
    if (!field.scalar && !field.message && !field.mapValue?.scalar && !field.mapValue?.message)
      throw new Error(`${field.fullName}: type ${f.type} not supported`);
    plan.fields.push(field);
    plan.byId[f.id] = field;
  }
  for (const t of nested) if (planOf(t) === null) return unsupported();
  // toObject's order: repeated fields, then maps, then the rest (each by field number).
  const order = [
    ...plan.fields.filter((f) => f.kind === 'repeated'),
    ...plan.fields.filter((f) => f.kind === 'map'),
    ...plan.fields.filter((f) => f.kind === 'scalar' || f.kind === 'message'),
  ];
  plan.defaults = () => {
    const d: Obj = {};
    for (const f of order)
      d[f.name] = f.kind === 'repeated' ? [] : f.kind === 'map' ? {} : f.kind === 'message' ? null : f.scalar!.dflt();
    return d;
  };
  return plan;
}

const tag = (id: number, wireType: number): number => ((id << 3) | wireType) >>> 0;

function setKey(d: Obj, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(d, k, { value: v, enumerable: true, writable: true, configurable: true });
  else d[k] = v;
}

function writeMessage(plan: Plan, o: unknown, w: protobuf.Writer, depth: number): void {
  if (!isObject(o)) throw TypeError(`.${plan.fullName}: object expected`);
  if (depth > LIMIT) throw Error('maximum nesting depth exceeded');
  for (const f of plan.fields) {
    const v = o[f.name];
    if (v == null) continue;
    if (f.kind === 'scalar') {
      const x = f.scalar!.convert(v);
      if (x === UNSET) continue;
      w.uint32(tag(f.id, f.scalar!.wireType));
      f.scalar!.write(w, x);
    } else if (f.kind === 'message') {
      if (!isObject(v)) throw TypeError(`.${f.fullName}: object expected`);
      writeMessage(f.message!(), v, w.uint32(tag(f.id, 2)).fork(), depth + 1);
      w.ldelim();
    } else if (f.kind === 'repeated') {
      if (!v) continue;
      if (!Array.isArray(v)) throw TypeError(`.${f.fullName}: array expected`);
      if (!v.length) continue;
      if (f.message) {
        for (const e of v) {
          if (!isObject(e)) throw TypeError(`.${f.fullName}: object expected`);
          writeMessage(f.message(), e, w.uint32(tag(f.id, 2)).fork(), depth + 1);
          w.ldelim();
        }
      } else if (f.packed) {
        w.uint32(tag(f.id, 2)).fork();
        for (const e of v) f.scalar!.write(w, f.scalar!.convert(e));
        w.ldelim();
      } else {
        for (const e of v) {
          const x = f.scalar!.convert(e);
          if (x === UNSET) continue;
          w.uint32(tag(f.id, f.scalar!.wireType));
          f.scalar!.write(w, x);
        }
      }
    } else {
      if (!v) continue;
      if (!isObject(v)) throw TypeError(`.${f.fullName}: object expected`);
      const { scalar, message } = f.mapValue!;
      for (const k of Object.keys(v)) {
        const e = v[k];
        if (message) {
          if (!isObject(e)) throw TypeError(`.${f.fullName}: object expected`);
          w.uint32(tag(f.id, 2)).fork().uint32(10).string(k);
          writeMessage(message(), e, w.uint32(18).fork(), depth + 1);
          w.ldelim().ldelim();
        } else {
          const x = scalar!.convert(e);
          if (x === UNSET) continue;
          w.uint32(tag(f.id, 2)).fork().uint32(10).string(k).uint32(tag(2, scalar!.wireType));
          scalar!.write(w, x);
          w.ldelim();
        }
      }
    }
  }
}

function readMessage(plan: Plan, r: protobuf.Reader, end: number, depth: number): Obj {
  if (depth > LIMIT) throw Error('maximum nesting depth exceeded');
  const d = plan.defaults();
  while (r.pos < end) {
    const t = r.uint32();
    const f = plan.byId[t >>> 3];
    if (!f) {
      r.skipType(t & 7);
      continue;
    }
    if (f.kind === 'scalar') d[f.name] = f.scalar!.read(r);
    else if (f.kind === 'message') d[f.name] = readMessage(f.message!(), r, r.uint32() + r.pos, depth + 1);
    else if (f.kind === 'repeated') {
      const a = d[f.name] as unknown[];
      if (f.message) a.push(readMessage(f.message(), r, r.uint32() + r.pos, depth + 1));
      else if ((t & 7) === 2 && f.scalar!.wireType !== 2) {
        // Packed (numbers written one after another in one length-delimited field), whichever way the field says.
        for (const stop = r.uint32() + r.pos; r.pos < stop;) a.push(f.scalar!.read(r));
      } else a.push(f.scalar!.read(r));
    } else {
      const { scalar, message } = f.mapValue!;
      const stop = r.uint32() + r.pos;
      let k = '';
      let v: unknown = message ? null : scalar!.dflt();
      while (r.pos < stop) {
        const t2 = r.uint32();
        if (t2 >>> 3 === 1) k = r.string();
        else if (t2 >>> 3 === 2)
          v = message ? readMessage(message(), r, r.uint32() + r.pos, depth + 1) : scalar!.read(r);
        else r.skipType(t2 & 7);
      }
      setKey(d[f.name] as Obj, k, v);
    }
  }
  return d;
}

/** The codec of a resolved protobufjs type; protobufjs's own conversions for a type this one does not do (oneofs). */
export function messageCodec(type: protobuf.Type): MessageCodec {
  const plan = planOf(type);
  if (!plan) {
    const options: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };
    return {
      encode: (o) => Buffer.from(type.encode(type.fromObject(o)).finish()),
      decode: (b) => type.toObject(type.decode(b), options),
    };
  }
  return {
    encode: (o) => {
      const w = protobuf.Writer.create();
      writeMessage(plan, o, w, 0);
      const out = w.finish();
      return Buffer.isBuffer(out) ? out : Buffer.from(out);
    },
    decode: (b) => {
      const r = protobuf.Reader.create(b);
      return readMessage(plan, r, r.len, 0);
    },
  };
}
