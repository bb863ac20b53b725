// Decoding of Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf),
// which typed clients such as kubectl send: the "k8s\0" magic plus
// runtime.Unknown, then the object, for every kind served, from one schema
// derived from upstream's sources (scripts/gen-protobuf.ts). The result is the
// JSON form Go would write: zero values of omitempty fields left out (pointer
// fields keep an explicit false or 0), Time as RFC3339, IntOrString and
// Quantity as scalars, embedded structs inlined. A body with a field the
// schema does not know gets 415 rather than silently losing it.
import fs from 'node:fs';

import protobuf from 'protobufjs';

import { assetPath } from '../../kube/assets.js';
import { errors } from '../api/errors.js';
import { protoPackage } from '../protobuf/package.js';

interface ProtoSchema {
  nested: protobuf.INamespace['nested'];
  pointer: string[];
  inline: string[];
  /** Number and bool fields without omitempty: their zero is written. */
  zero: string[];
  jsonNames: Record<string, string>;
}

const SCHEMA = JSON.parse(fs.readFileSync(assetPath('apiserver/protobuf/schema.json'), 'utf8')) as ProtoSchema;
const root = protobuf.Root.fromJSON({ nested: SCHEMA.nested });
const POINTER = new Set(SCHEMA.pointer);
const INLINE = new Set(SCHEMA.inline);
const ZERO = new Set(SCHEMA.zero);
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** API group → the package of its generated.proto. */
/** The message of apiVersion/kind; meta kinds (DeleteOptions) are the same in every group. */
function messageOf(apiVersion: string, kind: string): protobuf.Type | undefined {
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
  for (const name of [`${protoPackage(group, version)}.${kind}`, `${META}.${kind}`]) {
    const t = root.lookup(name);
    if (t instanceof protobuf.Type) return t;
  }
  return undefined;
}

type Json = Record<string, unknown>;
const APIEXT = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1';

const rfc3339 = (v: Json, micro: boolean): string | undefined => {
  const s = Number(v.seconds ?? 0);
  const n = Number(v.nanos ?? 0);
  if (!s && !n) return undefined;
  const iso = new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  return micro ? `${iso}.${String(Math.floor(n / 1000)).padStart(6, '0')}Z` : `${iso}Z`;
};

const rawJson = (b64: unknown): unknown => {
  if (!b64) return undefined;
  const text = Buffer.from(String(b64), 'base64').toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** One decoded value of `field`, in JSON form; undefined to leave it out. */
function convert(field: protobuf.Field, v: unknown, keepEmpty: boolean): unknown {
  const t = field.resolvedType;
  // Go marshals a pointer only when set, and JSON then shows it even empty (emptyDir: {}).
  const pointer = POINTER.has(`${field.parent!.fullName.slice(1)}.${field.name}`);
  if (t instanceof protobuf.Type) {
    const o = v as Json;
    switch (t.fullName.slice(1)) {
      case `${META}.Time`:
        return rfc3339(o, false);
      case `${META}.MicroTime`:
        return rfc3339(o, true);
      case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
        return Number(o.type ?? 0) === 1 ? (o.strVal ?? '') : Number(o.intVal ?? 0);
      case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
        return o.string || undefined;
      case `${META}.FieldsV1`:
        return rawJson(o.Raw);
      case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
        return rawJson(o.raw);
      // A CRD's schema: JSON values and the schema-or-something unions, marshalled as one or the other.
      case `${APIEXT}.JSON`:
        return rawJson(o.raw);
      case `${APIEXT}.JSONSchemaPropsOrArray`:
      case `${APIEXT}.JSONSchemaPropsOrStringArray`: {
        const props = t.fields.schema!.resolvedType as protobuf.Type;
        if (o.schema) return message(props, o.schema as Json) ?? {};
        const list = (o.jSONSchemas ?? o.property ?? []) as unknown[];
        return list.map((x) => (typeof x === 'string' ? x : (message(props, x as Json) ?? {})));
      }
      case `${APIEXT}.JSONSchemaPropsOrBool`: {
        const props = t.fields.schema!.resolvedType as protobuf.Type;
        return o.schema ? (message(props, o.schema as Json) ?? {}) : o.allows === true;
      }
      default:
        return message(t, o) ?? (keepEmpty || pointer ? {} : undefined);
    }
  }
  const key = `${field.parent!.fullName.slice(1)}.${field.name}`;
  if (!pointer && (v === '' || ((v === false || v === 0) && !ZERO.has(key)))) return undefined;
  return v;
}

function message(t: protobuf.Type, o: Json): Json | undefined {
  const out: Json = {};
  for (const [name, value] of Object.entries(o)) {
    const f = t.fields[name]!;
    const key = `${t.fullName.slice(1)}.${name}`;
    let v: unknown;
    if (f.map) {
      const m: Json = {};
      for (const [k, x] of Object.entries(value as Json)) m[k] = f.resolvedType ? (convert(f, x, true) ?? '') : x;
      v = Object.keys(m).length ? m : undefined;
    } else if (f.repeated) {
      const list = (value as unknown[]).map((x) => (f.resolvedType ? convert(f, x, true) : x));
      v = list.length ? list : undefined;
    } else v = convert(f, value, false);
    if (v === undefined) continue;
    if (INLINE.has(key) && typeof v === 'object') Object.assign(out, v);
    else out[SCHEMA.jsonNames[key] ?? name] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw errors.badRequest('protobuf body does not start with the k8s magic prefix');
  const unknownType = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  let env: Json;
  try {
    env = unknownType.toObject(unknownType.decode(body.subarray(4)), {
      bytes: Buffer as unknown as ArrayConstructor,
    }) as Json;
  } catch (e) {
    throw errors.badRequest(`cannot decode protobuf envelope: ${(e as Error).message}`);
  }
  const tm = (env.typeMeta ?? {}) as Json;
  const apiVersion = String(tm.apiVersion ?? '');
  const kind = String(tm.kind ?? '');
  const t = messageOf(apiVersion, kind);
  if (!t) throw errors.unsupportedMediaType(`application/vnd.kubernetes.protobuf for ${apiVersion} ${kind}; send JSON`);
  const raw = (env.raw as Buffer | undefined) ?? Buffer.alloc(0);
  let msg: protobuf.Message;
  try {
    msg = t.decode(raw);
  } catch (e) {
    throw errors.badRequest(`cannot decode protobuf ${kind}: ${(e as Error).message}`);
  }
  // Unknown fields are dropped by the decoder: a shorter re-encoding means the body had some.
  if (t.encode(msg).finish().length !== raw.length)
    throw errors.unsupportedMediaType(
      `application/vnd.kubernetes.protobuf for ${apiVersion} ${kind} with fields this apiserver does not decode from protobuf; send JSON`,
    );
  const obj = t.toObject(msg, { longs: Number, bytes: String }) as Json;
  return { apiVersion, kind, ...(message(t, obj) ?? {}) };
}
