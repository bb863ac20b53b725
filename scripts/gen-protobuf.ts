// Derives apiserver/protobuf/schema.json, the protobuf schema of the kinds
// tskube serves, from upstream's k8s.io/api and k8s.io/apimachinery v0.37
// sources (their generated.proto files and the Go types they come from):
//
//   node --import tsx scripts/gen-protobuf.ts <dir holding k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver>
//
// It keeps the messages reachable from the served kinds (field names,
// numbers and types), and from the Go types the facts the JSON form needs
// that the .proto files do not carry: which fields are pointers (an explicit
// false or 0 is kept), which are embedded inline, and JSON names that differ
// from the protobuf ones.
import fs from 'node:fs';
import path from 'node:path';

import protobuf from 'protobufjs';

import { protoFile, protoPackage } from '../apiserver/protobuf/package.js';
import { RESOURCES } from '../apiserver/resources.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: gen-protobuf.ts <dir>');

/** API group → package directory under k8s.io/api. */
const pkgOf = protoPackage;
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const EXTRA = [
  `${META}.DeleteOptions`,
  `${META}.Status`,
  `${META}.WatchEvent`,
  'k8s.io.apimachinery.pkg.runtime.Unknown',
  'k8s.io.api.autoscaling.v1.Scale',
  'k8s.io.api.authentication.v1.TokenRequest',
  'k8s.io.api.core.v1.Binding',
  'k8s.io.api.policy.v1.Eviction',
];

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => path.join(dir, target);
const files = new Set<string>();
const protoOf = (r: { group: string; version: string }): string => protoFile(r.group, r.version);
const served = RESOURCES.filter((r) => fs.existsSync(path.join(dir, protoOf(r))));
for (const r of [...served, { group: 'autoscaling', version: 'v1' }]) files.add(protoOf(r));
root.loadSync([...files], { keepCase: true });
root.resolveAll();

// Review kinds (TokenReview, SubjectAccessReview) have no List.
const roots = [
  ...served.flatMap((r) => [
    `${pkgOf(r.group, r.version)}.${r.kind}`,
    ...(r.review ? [] : [`${pkgOf(r.group, r.version)}.${r.listKind}`]),
  ]),
  ...EXTRA,
];
const keep = new Set<protobuf.Type>();
const todo = roots.map((n) => root.lookupType(n));
while (todo.length) {
  const t = todo.pop()!;
  if (keep.has(t)) continue;
  keep.add(t);
  for (const f of t.fieldsArray) if (f.resolvedType instanceof protobuf.Type) todo.push(f.resolvedType);
}

// The kept messages, nested by package as protobufjs' JSON descriptors are, with fully qualified field types.
const nested: Record<string, unknown> = {};
for (const t of [...keep].sort((a, b) => a.fullName.localeCompare(b.fullName))) {
  let ns = nested;
  for (const part of t.fullName.slice(1).split('.').slice(0, -1))
    ns = ((ns[part] ??= { nested: {} }) as { nested: Record<string, unknown> }).nested;
  const fields: Record<string, unknown> = {};
  for (const f of t.fieldsArray) {
    const type = f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type;
    fields[f.name] = f.map
      ? { keyType: (f as unknown as protobuf.MapField).keyType, type, id: f.id }
      : {
          ...(f.repeated ? { rule: 'repeated' } : {}),
          type,
          id: f.id,
          // The files are proto2: repeated numbers go unpacked (protobufjs reads JSON descriptors as proto3, packed).
          ...(f.repeated && !f.resolvedType && f.type !== 'string' && f.type !== 'bytes'
            ? { options: { packed: false } }
            : {}),
        };
  }
  ns[t.name] = { fields };
}

// Go struct facts, from the types.go next to each generated.proto.
const pointer: string[] = [];
const inline: string[] = [];
/** Number and bool fields Go writes even when zero (no omitempty): `sleep: {seconds: 0}`, a CRD version's `served`. */
const zero: string[] = [];
const jsonNames: Record<string, string> = {};
const kept = new Set([...keep].map((t) => t.fullName.slice(1)));
for (const file of new Set([...keep].map((t) => t.filename).filter((f): f is string => !!f))) {
  const pkg = root.lookupType([...keep].find((t) => t.filename === file)!.fullName).parent!.fullName.slice(1);
  const goDir = path.dirname(file);
  for (const goFile of fs
    .readdirSync(goDir)
    .filter(
      (f) =>
        f === 'types.go' ||
        /^types_.*\.go$/.test(f) ||
        f === 'meta.go' ||
        f === 'fieldsv1_byte.go' ||
        f === 'time_proto.go' ||
        f === 'micro_time_proto.go',
    )) {
    let struct = '';
    for (const line of fs.readFileSync(path.join(goDir, goFile), 'utf8').split('\n')) {
      const open = /^type (\w+) struct \{/.exec(line);
      if (open) struct = open[1]!;
      else if (/^\}/.test(line)) struct = '';
      if (!struct || !kept.has(`${pkg}.${struct}`)) continue;
      // A field and its struct tag; the tag's keys come in any order (json, patchStrategy, protobuf, …).
      const f = /^\s+(?:(\w+)\s+)?(\*?)([\w.[\]*]+)\s+`([^`]*)`/.exec(line);
      const jsonTag = f && /(?:^|\s)json:"([^"]*)"/.exec(f[4]!)?.[1];
      const protoTag = f && /(?:^|\s)protobuf:"([^"]*)"/.exec(f[4]!)?.[1];
      if (!f || jsonTag === undefined || jsonTag === null || !protoTag) continue;
      const m = [f[0], f[1], f[2], f[3], jsonTag, protoTag];
      // An embedded struct's tag may leave the name out (EphemeralContainerCommon `protobuf:"bytes,1,req"`); its
      // generated.proto field is the type's name with a lower-case first letter.
      const embedded = !f[1] ? f[3]!.replace(/^.*\./, '') : undefined;
      const protoName =
        /name=(\w+)/.exec(protoTag)?.[1] ?? (embedded ? embedded[0]!.toLowerCase() + embedded.slice(1) : undefined);
      if (!protoName) continue;
      const key = `${pkg}.${struct}.${protoName}`;
      const [json] = m[4]!.split(',');
      // Embedded structs are inlined: tagged `json:",inline"` (v0.32) or `json:""` with no field name (v0.37).
      if (m[4]!.split(',').includes('inline') || (!m[1] && json === '')) inline.push(key);
      else if (json && json !== protoName) jsonNames[key] = json;
      if (m[2] === '*') pointer.push(key);
      else if (!m[4]!.split(',').includes('omitempty') && /^(bool|u?int(8|16|32|64)?|float(32|64))$/.test(m[3]!))
        zero.push(key);
    }
  }
}

fs.mkdirSync(new URL('../apiserver/protobuf/', import.meta.url), { recursive: true });
fs.writeFileSync(
  new URL('../apiserver/protobuf/schema.json', import.meta.url),
  `${JSON.stringify({ source: 'k8s.io/api and k8s.io/apimachinery v0.37.2 (generated.proto, types.go)', nested, pointer: pointer.sort(), inline: inline.sort(), zero: zero.sort(), jsonNames })}\n`,
);
console.log(
  `${keep.size} messages, ${pointer.length} pointer fields, ${zero.length} zero kept, ${inline.length} inline, ${Object.keys(jsonNames).length} renamed`,
);
