// Derives apiserver/openapi/schemas.json from upstream's generated
// OpenAPI v2 document, api/openapi-spec/swagger.json of the release the
// fixtures build (`go mod download k8s.io/kubernetes@v1.37.2` puts it in the
// module cache):
//
//   node --import tsx scripts/gen-openapi.ts path/to/swagger.json v1.37.2
//
// It keeps the definitions reachable from the kinds tskube serves, and of
// each only the facts the apiserver acts on: types, formats, references,
// required fields, defaults, enums and the x-kubernetes-* extensions (list
// types and map keys for server-side apply, patch merge keys for kubectl's
// strategic merge patch, group-version-kind). Descriptions are left out.
import { readFileSync, writeFileSync } from 'node:fs';

import { RESOURCES } from '../apiserver/resources.js';

type Schema = Record<string, unknown>;
const KEEP = new Set([
  'type',
  'format',
  '$ref',
  'items',
  'additionalProperties',
  'properties',
  'required',
  'default',
  'enum',
]);
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const EXTRA_ROOTS = [
  `${META}DeleteOptions`,
  `${META}Status`,
  `${META}Patch`,
  `${META}WatchEvent`,
  `${META}APIResourceList`,
  'io.k8s.api.core.v1.Binding',
  'io.k8s.api.autoscaling.v1.Scale',
  'io.k8s.api.authentication.v1.TokenRequest',
  'io.k8s.api.policy.v1.Eviction',
];

function prune(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(prune);
  if (!s || typeof s !== 'object') return s;
  const out: Schema = {};
  for (const [k, v] of Object.entries(s as Schema)) {
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as Schema).map(([p, ps]) => [p, prune(ps)]));
    else if (k === 'items' || k === 'additionalProperties') out[k] = prune(v);
    else if (KEEP.has(k) || k.startsWith('x-kubernetes-')) out[k] = v;
  }
  return out;
}

function refsOf(s: unknown, into: Set<string>): void {
  if (Array.isArray(s)) return s.forEach((x) => refsOf(x, into));
  if (!s || typeof s !== 'object') return;
  for (const [k, v] of Object.entries(s as Schema)) {
    if (k === '$ref' && typeof v === 'string') into.add(v.replace('#/definitions/', ''));
    else refsOf(v, into);
  }
}

const [src, release] = process.argv.slice(2);
if (!src || !release) throw new Error('usage: gen-openapi.ts <swagger.json> <release, e.g. v1.37.2>');
const defs = (JSON.parse(readFileSync(src, 'utf8')) as { definitions: Record<string, Schema> }).definitions;
const served = new Set(
  RESOURCES.flatMap((r) => [`${r.group}/${r.version}/${r.kind}`, `${r.group}/${r.version}/${r.listKind}`]),
);
const roots = new Set(EXTRA_ROOTS);
for (const [name, d] of Object.entries(defs)) {
  const gvks = (d['x-kubernetes-group-version-kind'] ?? []) as { group: string; version: string; kind: string }[];
  if (gvks.some((g) => served.has(`${g.group}/${g.version}/${g.kind}`))) roots.add(name);
}
const out: Record<string, unknown> = {};
const todo = [...roots];
while (todo.length) {
  const name = todo.pop()!;
  if (out[name]) continue;
  if (!defs[name]) throw new Error(`definition ${name} is not in ${src}`);
  out[name] = prune(defs[name]);
  const refs = new Set<string>();
  refsOf(out[name], refs);
  todo.push(...refs);
}
const sorted = Object.fromEntries(
  Object.keys(out)
    .sort()
    .map((k) => [k, out[k]]),
);
writeFileSync(
  new URL('../apiserver/openapi/schemas.json', import.meta.url),
  `${JSON.stringify({ source: `kubernetes ${release} api/openapi-spec/swagger.json`, definitions: sorted })}\n`,
);
console.log(`${Object.keys(sorted).length} definitions from ${roots.size} roots`);
