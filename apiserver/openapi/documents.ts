// The published OpenAPI documents: /openapi/v2 (one swagger 2.0 document)
// and /openapi/v3/<group-version> (OpenAPI 3.0, one per group-version, with
// the schemas its kinds reach), built once from DEFINITIONS. kubectl's
// explain, its strategic-merge patches (merge keys) and its field-validation
// check read these.
import { createHash } from 'node:crypto';

import { KUBERNETES_VERSION } from '../../kube/version.js';
import { type Registry, type ResourceDef, RESOURCES } from '../resources.js';
import { apiVersionOf } from '../resources.js';
import { definitionOf, DEFINITIONS, type Schema } from './schema.js';
import { encodeV2Document } from './v2-protobuf.js';

const INFO = { title: 'Kubernetes', version: KUBERNETES_VERSION };
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

const gvPath = (r: ResourceDef): string => (r.group ? `apis/${r.group}/${r.version}` : `api/${r.version}`);

type Ref = (name: string) => { $ref: string };
type Defs = Record<string, Schema>;

/** The definition names of a resource's kind and list kind (custom kinds are published under their reversed-domain names). */
function kindDefs(r: ResourceDef): { kind?: string; list?: string } {
  if (r.custom) return { kind: r.custom.definition, list: `${r.custom.definition}List` };
  return { kind: definitionOf(apiVersionOf(r), r.kind), list: definitionOf(apiVersionOf(r), r.listKind) };
}

/** The definitions of the custom kinds (and their lists) the registry serves. */
function customDefinitions(rs: ResourceDef[]): Defs {
  const out: Defs = {};
  for (const r of rs) {
    const c = r.custom;
    if (!c) continue;
    out[c.definition] = c.schema;
    out[`${c.definition}List`] = {
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { $ref: `#/definitions/${META}ListMeta` },
        items: { type: 'array', items: { $ref: `#/definitions/${c.definition}` } },
      },
      'x-kubernetes-group-version-kind': [{ group: r.group, version: r.version, kind: r.listKind }],
    };
  }
  return out;
}

/** The operations of one resource, in either document's form. */
function pathsOf(r: ResourceDef, ref: Ref, v3: boolean): Record<string, object> {
  const gvk = { group: r.group, version: r.version, kind: r.kind };
  const { kind: kindDef, list: listDef } = kindDefs(r);
  const query = (name: string, type = 'string') =>
    v3 ? { name, in: 'query', schema: { type, uniqueItems: true } } : { name, in: 'query', type, uniqueItems: true };
  const body = (def: string | undefined) =>
    v3
      ? { requestBody: { content: { '*/*': { schema: def ? ref(def) : {} } }, required: true } }
      : { parameters: [{ name: 'body', in: 'body', required: true, schema: def ? ref(def) : {} }] };
  const reply = (def: string | undefined) =>
    v3
      ? { content: { 'application/json': { schema: def ? ref(def) : {} } }, description: 'OK' }
      : { description: 'OK', schema: def ? ref(def) : {} };
  const writeParams = [query('dryRun'), query('fieldManager'), query('fieldValidation')];
  const op = (
    id: string,
    action: string,
    extra: { params?: object[]; body?: string | undefined; reply?: string | undefined } = {},
  ) => {
    const b = extra.body !== undefined || id === 'create' || id === 'replace' || id === 'patch' ? body(extra.body) : {};
    const params = [...(extra.params ?? []), ...(((b as { parameters?: object[] }).parameters ?? []) as object[])];
    return {
      operationId: `${id}${r.kind}`,
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
      ...b,
      parameters: params,
      responses: { '200': reply(extra.reply ?? kindDef) },
    };
  };
  const base = `/${gvPath(r)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
  const paths: Record<string, object> = {};
  if (r.review) {
    paths[base] = { post: op('create', 'post', { params: writeParams, body: kindDef }) };
    return paths;
  }
  paths[base] = {
    get: op('list', 'list', {
      params: [
        query('labelSelector'),
        query('fieldSelector'),
        query('watch', 'boolean'),
        query('resourceVersion'),
        query('limit', 'integer'),
        query('continue'),
      ],
      reply: listDef,
    }),
    post: op('create', 'post', { params: writeParams, body: kindDef }),
    delete: op('deletecollection', 'deletecollection', {
      params: [query('labelSelector'), query('fieldSelector'), query('dryRun')],
      reply: `${META}Status`,
    }),
  };
  paths[`${base}/{name}`] = {
    get: op('read', 'get'),
    put: op('replace', 'put', { params: writeParams, body: kindDef }),
    patch: op('patch', 'patch', { params: [...writeParams, query('force', 'boolean')], body: `${META}Patch` }),
    delete: op('delete', 'delete', {
      params: [query('dryRun'), query('gracePeriodSeconds', 'integer'), query('propagationPolicy')],
      reply: `${META}Status`,
    }),
  };
  if (r.subresources.includes('scale'))
    paths[`${base}/{name}/scale`] = {
      get: op('read', 'get', { reply: 'io.k8s.api.autoscaling.v1.Scale' }),
      put: op('replace', 'put', {
        params: writeParams,
        body: 'io.k8s.api.autoscaling.v1.Scale',
        reply: 'io.k8s.api.autoscaling.v1.Scale',
      }),
      patch: op('patch', 'patch', {
        params: writeParams,
        body: `${META}Patch`,
        reply: 'io.k8s.api.autoscaling.v1.Scale',
      }),
    };
  if (r.subresources.includes('status'))
    paths[`${base}/{name}/status`] = {
      get: op('read', 'get'),
      put: op('replace', 'put', { params: writeParams, body: kindDef }),
      patch: op('patch', 'patch', { params: writeParams, body: `${META}Patch` }),
    };
  return paths;
}

/** The definitions `roots` reach through $refs. */
function closure(roots: string[], defs: Defs): string[] {
  const seen = new Set<string>();
  const todo = [...roots];
  while (todo.length) {
    const n = todo.pop()!;
    if (seen.has(n) || !defs[n]) continue;
    seen.add(n);
    JSON.stringify(defs[n], (k, v: unknown) => {
      if (k === '$ref' && typeof v === 'string') todo.push(v.replace('#/definitions/', ''));
      return v;
    });
  }
  return [...seen].sort();
}

// OpenAPI v3 can say what v2 could not: IntOrString and Quantity are one of two types (kubectl explain then names them).
const V3_ONLY: Record<string, Schema> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': {
    'x-kubernetes-int-or-string': true,
    oneOf: [{ type: 'integer' }, { type: 'string' }],
  },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { oneOf: [{ type: 'string' }, { type: 'number' }] },
};
const toV3 = (name: string, s: Schema): Schema =>
  V3_ONLY[name] ?? (JSON.parse(JSON.stringify(s).replaceAll('"#/definitions/', '"#/components/schemas/')) as Schema);
const rootsOf = (rs: ResourceDef[]): string[] => {
  const scale = rs.some((r) => r.subresources.includes('scale')) ? ['io.k8s.api.autoscaling.v1.Scale'] : [];
  return [
    ...rs.flatMap((r) => Object.values(kindDefs(r))).filter((x): x is string => !!x),
    ...scale,
    `${META}DeleteOptions`,
    `${META}Status`,
    `${META}Patch`,
    `${META}WatchEvent`,
  ];
};

function v3Doc(all: ResourceDef[], defs: Defs, gv: string): string {
  const rs = all.filter((r) => gvPath(r) === gv);
  const ref: Ref = (n) => ({ $ref: `#/components/schemas/${n}` });
  const paths = Object.assign({}, ...rs.map((r) => pathsOf(r, ref, true))) as Record<string, object>;
  const schemas = Object.fromEntries(closure(rootsOf(rs), defs).map((n) => [n, toV3(n, defs[n] ?? {})]));
  return JSON.stringify({ openapi: '3.0.0', info: INFO, paths, components: { schemas } });
}

function v2Doc(
  all: ResourceDef[],
  defs: Defs,
): { swagger: string; info: typeof INFO; paths: object; definitions: Record<string, Schema> } {
  const ref: Ref = (n) => ({ $ref: `#/definitions/${n}` });
  const paths = Object.assign({}, ...all.map((r) => pathsOf(r, ref, false))) as Record<string, object>;
  return {
    swagger: '2.0',
    info: INFO,
    paths,
    definitions: Object.fromEntries(closure(rootsOf(all), defs).map((n) => [n, defs[n]!])),
  };
}

const etag = (body: string): string => createHash('sha512').update(body).digest('hex').slice(0, 64).toUpperCase();

interface Docs {
  generation: number;
  v3: Map<string, { body: string; hash: string }>;
  v2?: { body: string; hash: string; protobuf: Buffer };
}

// Built on first use and again after the served resources change (a definition came or went):
// an apiserver that nobody asks for schemas pays nothing. The built-ins' documents never change.
const BUILTIN_DOCS: Docs = { generation: 0, v3: new Map() };
const docsByRegistry = new WeakMap<Registry, Docs>();

function docsOf(reg: Registry | undefined): { docs: Docs; all: ResourceDef[]; defs: () => Defs } {
  const all = reg ? reg.all() : RESOURCES;
  const customs = reg ? reg.customs() : [];
  if (!customs.length) return { docs: BUILTIN_DOCS, all: RESOURCES, defs: () => DEFINITIONS };
  let docs = docsByRegistry.get(reg!);
  if (!docs || docs.generation !== reg!.generation) {
    docs = { generation: reg!.generation, v3: new Map() };
    docsByRegistry.set(reg!, docs);
  }
  return { docs, all, defs: () => ({ ...DEFINITIONS, ...customDefinitions(customs) }) };
}

function v3Docs(reg: Registry | undefined): Map<string, { body: string; hash: string }> {
  const { docs, all, defs } = docsOf(reg);
  if (!docs.v3.size) {
    const d = defs();
    for (const gv of new Set(all.map(gvPath))) {
      const body = v3Doc(all, d, gv);
      docs.v3.set(gv, { body, hash: etag(body) });
    }
  }
  return docs.v3;
}

export function openapiV3Root(reg?: Registry): object {
  return {
    paths: Object.fromEntries(
      [...v3Docs(reg)].map(([gv, d]) => [gv, { serverRelativeURL: `/openapi/v3/${gv}?hash=${d.hash}` }]),
    ),
  };
}

export function openapiV3Doc(reg: Registry | undefined, gv: string): { body: string; hash: string } | undefined {
  return v3Docs(reg).get(gv);
}

/** The v2 document as JSON, and in gnostic's protobuf form (without paths: clients read its definitions). */
export function openapiV2Doc(reg?: Registry): { body: string; hash: string; protobuf: Buffer } {
  const { docs, all, defs } = docsOf(reg);
  if (!docs.v2) {
    const doc = v2Doc(all, defs());
    const body = JSON.stringify(doc);
    docs.v2 = { body, hash: etag(body), protobuf: encodeV2Document(doc) };
  }
  return docs.v2;
}
