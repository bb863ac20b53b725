// Decoding of Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf),
// which typed clients such as `kubectl create namespace` send. The envelope is
// the "k8s\0" magic plus runtime.Unknown; only the kinds listed here are
// understood, the rest get 415. Field numbers follow the upstream generated.proto files.
import protobuf from 'protobufjs';
import { errors } from '../api/errors.js';

const SCHEMA = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message OwnerReference { optional string kind = 1; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional bool controller = 6; optional bool blockOwnerDeletion = 7; }
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3;
  optional string uid = 5; optional string resourceVersion = 6; optional int64 generation = 7;
  map<string, string> labels = 11; map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14;
}
message NamespaceSpec { repeated string finalizers = 1; }
message NamespaceStatus { optional string phase = 1; }
message Namespace { optional ObjectMeta metadata = 1; optional NamespaceSpec spec = 2; optional NamespaceStatus status = 3; }
message ConfigMap { optional ObjectMeta metadata = 1; map<string, string> data = 2; map<string, bytes> binaryData = 3; optional bool immutable = 4; }
message Secret { optional ObjectMeta metadata = 1; map<string, bytes> data = 2; optional string type = 3; map<string, string> stringData = 4; optional bool immutable = 5; }
message ServiceAccount { optional ObjectMeta metadata = 1; }
`;

const root = protobuf.parse(SCHEMA, { keepCase: true }).root;
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const KINDS: Record<string, string> = { 'v1/Namespace': 'Namespace', 'v1/ConfigMap': 'ConfigMap', 'v1/Secret': 'Secret', 'v1/ServiceAccount': 'ServiceAccount' };

export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC)) throw errors.badRequest('protobuf body does not start with the k8s magic prefix');
  let env: Record<string, any>;
  try {
    env = root.lookupType('k8s.Unknown').toObject(root.lookupType('k8s.Unknown').decode(body.subarray(4)), { bytes: Buffer as unknown as ArrayConstructor }) as Record<string, any>;
  } catch (e) {
    throw errors.badRequest(`cannot decode protobuf envelope: ${(e as Error).message}`);
  }
  const apiVersion = env.typeMeta?.apiVersion ?? '';
  const kind = env.typeMeta?.kind ?? '';
  const type = KINDS[`${apiVersion}/${kind}`];
  if (!type) throw errors.unsupportedMediaType(`application/vnd.kubernetes.protobuf for ${apiVersion} ${kind}; send JSON`);
  const t = root.lookupType(`k8s.${type}`);
  const obj = t.toObject(t.decode(env.raw ?? Buffer.alloc(0)), { longs: Number, defaults: false }) as Record<string, any>;
  for (const f of ['data', 'binaryData']) {
    if (type === 'Secret' || f === 'binaryData') {
      const m = obj[f] as Record<string, Uint8Array> | undefined;
      if (m) obj[f] = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    }
  }
  return { apiVersion, kind, ...obj };
}
