// Decoding of Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf),
// which typed clients such as `kubectl create deployment` send: the "k8s\0"
// magic plus runtime.Unknown, then the object. The result is the JSON form Go
// would write: zero values of omitempty fields left out, Time as RFC3339,
// IntOrString and Quantity as scalars, embedded structs inlined. A body with
// a field this schema does not know gets 415 rather than silently losing it.
import protobuf from 'protobufjs';
import { errors } from '../api/errors.js';
import { K8S_PROTO, PROTO_KINDS } from './protobuf-schema.js';

const root = protobuf.parse(K8S_PROTO, { keepCase: true }).root;
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** Pointer fields in Go: an explicit false or 0 means something and is kept. */
const KEEP_ZERO = new Set([
  'DeploymentSpec.replicas', 'DeploymentSpec.revisionHistoryLimit', 'DeploymentSpec.progressDeadlineSeconds',
  'PodSpec.terminationGracePeriodSeconds', 'PodSpec.activeDeadlineSeconds', 'PodSpec.automountServiceAccountToken', 'PodSpec.enableServiceLinks',
  'ServiceAccount.automountServiceAccountToken', 'ConfigMap.immutable', 'Secret.immutable', 'ConfigMapKeySelector.optional', 'SecretKeySelector.optional',
  'ServiceSpec.allocateLoadBalancerNodePorts', 'ClientIPConfig.timeoutSeconds', 'TokenRequestSpec.expirationSeconds',
  'ObjectMeta.deletionGracePeriodSeconds', 'OwnerReference.controller', 'OwnerReference.blockOwnerDeletion',
]);

type Json = Record<string, unknown>;

function time(v: Json): string | undefined {
  const s = Number(v.seconds ?? 0);
  if (!s && !v.nanos) return undefined;
  return new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** One decoded value of `field`, in JSON form; undefined to leave it out. */
function convert(field: protobuf.Field, v: unknown): unknown {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) {
    const o = v as Json;
    switch (t.name) {
      case 'Time':
        return time(o);
      case 'IntOrString':
        return Number(o.type ?? 0) === 1 ? (o.strVal ?? '') : Number(o.intVal ?? 0);
      case 'Quantity':
        return o.string || undefined;
      case 'FieldsV1':
        return o.Raw ? JSON.parse(Buffer.from(o.Raw as string, 'base64').toString('utf8')) : undefined;
      default:
        return message(t, o);
    }
  }
  if (v === '' || ((v === false || v === 0) && !KEEP_ZERO.has(`${field.parent!.name}.${field.name}`))) return undefined;
  return v;
}

function message(t: protobuf.Type, o: Json): Json | undefined {
  const out: Json = {};
  for (const [name, value] of Object.entries(o)) {
    const f = t.fields[name]!;
    let v: unknown;
    if (f.map) {
      const m: Json = {};
      for (const [k, x] of Object.entries(value as Json)) {
        const c = convert(f, x);
        m[k] = c === undefined && f.resolvedType ? '' : (c ?? x);
      }
      v = Object.keys(m).length ? m : undefined;
    } else if (f.repeated) {
      const list = (value as unknown[]).map((x) => convert(f, x) ?? (f.resolvedType ? {} : x));
      v = list.length ? list : undefined;
    } else v = convert(f, value);
    if (v === undefined) continue;
    // Go embeds LocalObjectReference: its name sits in the parent's JSON.
    if (name === 'localObjectReference' && typeof v === 'object') Object.assign(out, v);
    else out[name] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw errors.badRequest('protobuf body does not start with the k8s magic prefix');
  const unknownType = root.lookupType('k8s.Unknown');
  let env: Json;
  try {
    env = unknownType.toObject(unknownType.decode(body.subarray(4)), { bytes: Buffer as unknown as ArrayConstructor }) as Json;
  } catch (e) {
    throw errors.badRequest(`cannot decode protobuf envelope: ${(e as Error).message}`);
  }
  const tm = (env.typeMeta ?? {}) as Json;
  const apiVersion = String(tm.apiVersion ?? '');
  const kind = String(tm.kind ?? '');
  const type = PROTO_KINDS[`${apiVersion}/${kind}`];
  if (!type) throw errors.unsupportedMediaType(`application/vnd.kubernetes.protobuf for ${apiVersion} ${kind}; send JSON`);
  const t = root.lookupType(`k8s.${type}`);
  const raw = (env.raw as Buffer | undefined) ?? Buffer.alloc(0);
  let msg: protobuf.Message;
  try {
    msg = t.decode(raw);
  } catch (e) {
    throw errors.badRequest(`cannot decode protobuf ${kind}: ${(e as Error).message}`);
  }
  // Unknown fields are dropped by the decoder: a shorter re-encoding means the body had some.
  if (t.encode(msg).finish().length !== raw.length) throw errors.unsupportedMediaType(`application/vnd.kubernetes.protobuf for ${apiVersion} ${kind} with fields this apiserver does not decode from protobuf; send JSON`);
  const obj = t.toObject(msg, { longs: Number, bytes: String }) as Json;
  return { apiVersion, kind, ...(message(t, obj) ?? {}) };
}
