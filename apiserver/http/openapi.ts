// A minimal /openapi/v3: one document per group-version listing each
// resource's paths, with the `fieldValidation` query parameter on PATCH.
// That is what kubectl's QueryParamVerifierV3 looks for before it leaves
// validation to the server; no schemas are published (kubectl then uses
// its built-in types for apply's strategic merge patches).
import { createHash } from 'node:crypto';
import { RESOURCES, type ResourceDef } from '../resources.js';

const gvPath = (r: ResourceDef): string => (r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`);

function docFor(gv: string): object {
  const paths: Record<string, object> = {};
  const param = (name: string) => ({ name, in: 'query', schema: { type: 'string', uniqueItems: true } });
  for (const r of RESOURCES.filter((x) => gvPath(x) === gv)) {
    const gvk = { group: r.group, version: r.version, kind: r.kind };
    const base = `/${gv}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
    const op = (id: string) => ({ operationId: `${id}${r.kind}`, 'x-kubernetes-group-version-kind': gvk, parameters: [param('dryRun'), param('fieldManager'), param('fieldValidation')], responses: { '200': { description: 'OK' } } });
    paths[base] = { get: op('list'), post: op('create') };
    paths[`${base}/{name}`] = { get: op('read'), put: op('replace'), patch: op('patch'), delete: op('delete') };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0-tskube' }, paths, components: { schemas: {} } };
}

const DOCS = new Map<string, { body: string; hash: string }>();
for (const gv of new Set(RESOURCES.map(gvPath))) {
  const body = JSON.stringify(docFor(gv));
  DOCS.set(gv, { body, hash: createHash('sha512').update(body).digest('hex').slice(0, 64).toUpperCase() });
}

export function openapiV3Root(): object {
  return { paths: Object.fromEntries([...DOCS].map(([gv, d]) => [gv, { serverRelativeURL: `/openapi/v3/${gv}?hash=${d.hash}` }])) };
}

export function openapiV3Doc(gv: string): string | undefined {
  return DOCS.get(gv)?.body;
}
