import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { getScale, updateScale } from '../api/scale.js';
import { apiGroup, apiResourceList } from '../http/discovery.js';
import { toTable } from '../http/table.js';
import { openapiV3Doc } from '../openapi/documents.js';
import { Store } from '../storage/store.js';
import { evalJsonPath, parseJsonPath } from './columns.js';
import { compareVersions, defaultCrd, servedResources, validateCrd } from './definition.js';
import { structuralErrors } from './structural.js';
import { applySchemaDefaults, validateCustom } from './validation.js';

const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['cronSpec'],
      properties: {
        cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
        image: { type: 'string', default: 'busybox' },
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        color: { type: 'string', enum: ['red', 'green'] },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        size: { 'x-kubernetes-int-or-string': true },
      },
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
  },
};

export const crontabCrd = (extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'crontabs.stable.example.com' },
  spec: {
    group: 'stable.example.com',
    scope: 'Namespaced',
    names: {
      plural: 'crontabs',
      singular: 'crontab',
      kind: 'CronTab',
      shortNames: ['ct'],
      categories: ['all', 'examples'],
    },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: SCHEMA },
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.replicas',
            statusReplicasPath: '.status.replicas',
            labelSelectorPath: '.status.selector',
          },
        },
        additionalPrinterColumns: [
          { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        selectableFields: [{ jsonPath: '.spec.color' }],
      },
      { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: SCHEMA } },
    ],
    ...extra,
  },
});

const apiErr = (code: number, re: RegExp) => (e: unknown) =>
  e instanceof ApiError && e.code === code && re.test(e.message);

function withCrd(): { api: Api; crontabs: (v?: string) => ReturnType<Api['res']> } {
  const api = new Api(new Store());
  api.create(api.res('apiextensions.k8s.io', 'customresourcedefinitions'), '', crontabCrd());
  return { api, crontabs: (v = 'v1') => api.resources.find('stable.example.com', v, 'crontabs')! };
}

const tab = (name: string, spec: Record<string, unknown>, apiVersion = 'stable.example.com/v1') => ({
  apiVersion,
  kind: 'CronTab',
  metadata: { name },
  spec,
});

test('a definition is validated as upstream: name, group, scope, one storage version, structural schema, conversion None only', () => {
  const good = crontabCrd();
  defaultCrd(good);
  assert.deepEqual(validateCrd(good), []);
  const bad = validateCrd({
    metadata: { name: 'x' },
    spec: {
      group: 'nodot',
      scope: 'Global',
      names: { plural: 'Xs', kind: 'X', listKind: 'X' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: false,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { properties: {} } } } },
        },
      ],
      conversion: { strategy: 'Webhook' },
    },
  });
  const text = bad.map((c) => `${c.field}: ${c.message}`);
  for (const want of [
    'metadata.name: Invalid value: "x": must be spec.names.plural+"."+spec.group',
    'spec.group: Invalid value: "nodot": should be a domain with at least one dot',
    'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"',
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    'spec.versions: Invalid value: "": must have exactly one version marked as storage version',
    'spec.names.singular: Required value',
    'spec.names.listKind: Invalid value: "X": kind and listKind may not be the same',
  ])
    assert.ok(text.includes(want), `${want}\nin:\n${text.join('\n')}`);
  assert.ok(text.some((t) => t.startsWith('spec.names.plural: Invalid value: "Xs": a DNS-1035 label')));
  assert.ok(text.some((t) => t.startsWith('spec.conversion.strategy: Unsupported value: "Webhook"')));
  assert.deepEqual(
    structuralErrors(
      {
        type: 'object',
        properties: {
          a: { type: 'array', items: {} },
          b: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: { type: 'string' } },
        },
      },
      's',
      false,
    ).map((c) => c.field),
    ['s.properties[a].items.type', 's.properties[b].additionalProperties'],
  );
});

test('creating a definition sets its finalizer, conditions, accepted names and stored versions, and serves its versions at once', () => {
  const { api, crontabs } = withCrd();
  const crd = api.get(api.res('apiextensions.k8s.io', 'customresourcedefinitions'), '', 'crontabs.stable.example.com');
  assert.deepEqual(crd.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
  assert.deepEqual(
    crd.status.conditions.map((c: any) => [c.type, c.status, c.reason]),
    [
      ['NamesAccepted', 'True', 'NoConflicts'],
      ['Established', 'True', 'InitialNamesAccepted'],
    ],
  );
  assert.deepEqual(crd.status.storedVersions, ['v1']);
  assert.equal(crd.status.acceptedNames.kind, 'CronTab');
  assert.equal(crd.spec.names.listKind, 'CronTabList', 'listKind defaulted');
  assert.equal(crd.spec.conversion.strategy, 'None');
  assert.ok(crontabs('v1') && crontabs('v1beta1'));
  const group = apiGroup(api.resources.all(), 'stable.example.com') as any;
  assert.deepEqual(
    group.versions.map((v: any) => v.version),
    ['v1', 'v1beta1'],
    'preferred version first',
  );
  const list = apiResourceList(api.resources.all(), 'stable.example.com', 'v1') as any;
  assert.deepEqual(
    list.resources.map((r: any) => r.name),
    ['crontabs', 'crontabs/status', 'crontabs/scale'],
  );
  assert.deepEqual(list.resources[0].shortNames, ['ct']);
  assert.deepEqual(list.resources[0].categories, ['all', 'examples']);
  assert.equal(list.resources[2].kind, 'Scale');
  // A second definition may not take names the first one holds in the group.
  const clash = api.create(api.res('apiextensions.k8s.io', 'customresourcedefinitions'), '', {
    ...crontabCrd(),
    metadata: { name: 'crontabz.stable.example.com' },
    spec: { ...crontabCrd().spec, names: { plural: 'crontabz', singular: 'crontabz', kind: 'CronTab' } },
  });
  assert.deepEqual(
    clash.status.conditions.map((c: any) => [c.type, c.status]),
    [
      ['NamesAccepted', 'False'],
      ['Established', 'False'],
    ],
  );
  assert.equal(
    api.resources.find('stable.example.com', 'v1', 'crontabz'),
    undefined,
    'not served while its names are not accepted',
  );
});

test('custom resources: defaulting, pruning, schema validation with upstream texts, field validation Strict', () => {
  const { api, crontabs } = withCrd();
  const o = api.create(
    crontabs(),
    'default',
    tab('a', {
      cronSpec: '* * * * */5',
      unknown: 1,
      free: { any: { thing: 1 } },
      size: '50%',
      ports: [{ name: 'x', port: 1, extra: true }],
    }),
  );
  assert.equal(o.spec.image, 'busybox');
  assert.equal(o.spec.replicas, 1);
  assert.equal(o.spec.unknown, undefined, 'unknown fields pruned');
  assert.deepEqual(o.spec.ports, [{ name: 'x', port: 1 }], 'pruned inside lists too');
  assert.deepEqual(o.spec.free, { any: { thing: 1 } }, 'x-kubernetes-preserve-unknown-fields keeps them');
  assert.throws(
    () => api.create(crontabs(), 'default', tab('b', { cronSpec: 'bad', replicas: 'three', color: 'blue' })),
    (e: unknown) => {
      assert.ok(e instanceof ApiError && e.code === 422, String(e));
      assert.match(e.message, /^CronTab\.stable\.example\.com "b" is invalid: /);
      assert.match(
        e.message,
        /spec\.replicas: Invalid value: "string": spec\.replicas in body must be of type integer: "string"/,
      );
      assert.match(e.message, /spec\.color: Unsupported value: "blue": supported values: "red", "green"/);
      assert.match(e.message, /spec\.cronSpec: Invalid value: "bad": spec\.cronSpec in body should match '\^/);
      return true;
    },
  );
  assert.throws(
    () => api.create(crontabs(), 'default', tab('c', { replicas: 11 })),
    apiErr(
      422,
      /spec\.cronSpec: Required value.*spec\.replicas: Invalid value: 11: spec\.replicas in body should be less than or equal to 10|spec\.replicas.*spec\.cronSpec: Required value/,
    ),
  );
  assert.throws(
    () =>
      api.runAs(
        api['user' as never],
        () => api.create(crontabs(), 'default', tab('d', { cronSpec: '* * * * *', nope: 1 })),
        { fields: { mode: 'Strict' } },
      ),
    apiErr(400, /strict decoding error: unknown field "spec\.nope"/),
  );
  assert.deepEqual(
    validateCustom(
      { spec: { size: 3 } },
      {
        type: 'object',
        properties: { spec: { type: 'object', properties: { size: { 'x-kubernetes-int-or-string': true } } } },
      },
    ),
    [],
  );
  const d: any = { spec: { items: [{}] } };
  applySchemaDefaults(d, {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer', default: 3 } } } },
        },
      },
    },
  });
  assert.deepEqual(d.spec.items, [{ n: 3 }]);
});

test('status and scale subresources, generation, versions served over one storage, selectors, strategic merge refused', () => {
  const { api, crontabs } = withCrd();
  const o = api.create(crontabs(), 'default', {
    ...tab('a', { cronSpec: '* * * * *', color: 'red' }),
    status: { replicas: 9 },
  });
  assert.equal(o.status, undefined, 'status dropped on create');
  const st = api.update(
    crontabs(),
    'default',
    'a',
    { ...o, status: { replicas: 2, selector: 'app=a' }, spec: { ...o.spec, replicas: 5 } },
    'status',
  );
  assert.equal(st.status.replicas, 2);
  assert.equal(st.spec.replicas, 1, 'the status subresource changes only status');
  assert.equal(st.metadata.generation, 1);
  const up = api.update(crontabs(), 'default', 'a', {
    ...st,
    spec: { ...st.spec, replicas: 3 },
    status: { replicas: 0 },
  });
  assert.equal(up.status.replicas, 2, 'the main resource does not change status');
  assert.equal(up.metadata.generation, 2);
  assert.deepEqual(getScale(api, crontabs(), 'default', 'a').spec, { replicas: 3 });
  assert.deepEqual(getScale(api, crontabs(), 'default', 'a').status, { replicas: 2, selector: 'app=a' });
  const scaled = updateScale(api, crontabs(), 'default', 'a', {
    patch: { type: 'merge', body: { spec: { replicas: 4 } } },
  });
  assert.equal(scaled.spec.replicas, 4);
  assert.equal(api.get(crontabs(), 'default', 'a').spec.replicas, 4);
  // v1beta1 reads and writes the same objects, under its own apiVersion.
  assert.equal(api.get(crontabs('v1beta1'), 'default', 'a').apiVersion, 'stable.example.com/v1beta1');
  api.create(
    crontabs('v1beta1'),
    'default',
    tab('b', { cronSpec: '* * * * *', color: 'green' }, 'stable.example.com/v1beta1'),
  );
  assert.equal(
    api.store.get('stable.example.com/crontabs/default/b')!.apiVersion,
    'stable.example.com/v1',
    'stored in the storage version',
  );
  assert.deepEqual(
    api.list(crontabs(), 'default', { fieldSelector: 'spec.color=green' }).items.map((x: any) => x.metadata.name),
    ['b'],
  );
  assert.throws(
    () => api.list(crontabs(), 'default', { fieldSelector: 'spec.image=x' }),
    apiErr(400, /field label not supported: spec\.image/),
  );
  assert.throws(
    () => api.patch(crontabs(), 'default', 'a', 'strategic', { spec: { replicas: 2 } }),
    apiErr(415, /application\/merge-patch\+json/),
  );
  assert.equal(api.patch(crontabs(), 'default', 'a', 'merge', { spec: { replicas: 2 } }).spec.replicas, 2);
  const table = toTable(crontabs(), [api.get(crontabs(), 'default', 'a')], {}) as any;
  assert.deepEqual(
    table.columnDefinitions.map((c: any) => c.name),
    ['Name', 'Spec', 'Replicas', 'Age'],
  );
  assert.deepEqual(table.rows[0].cells.slice(0, 3), ['a', '* * * * *', 2]);
  const schemas = JSON.parse(openapiV3Doc(api.resources, 'apis/stable.example.com/v1')!.body).components.schemas;
  assert.ok(schemas['com.example.stable.v1.CronTab'].properties.spec.properties.cronSpec);
  assert.ok(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']);
});

test('a definition being deleted refuses new objects; when it goes, its resources stop being served', () => {
  const { api, crontabs } = withCrd();
  api.create(crontabs(), 'default', tab('a', { cronSpec: '* * * * *' }));
  const crds = api.res('apiextensions.k8s.io', 'customresourcedefinitions');
  const { deleted } = api.delete(crds, '', 'crontabs.stable.example.com');
  assert.equal(deleted, false, 'the cleanup finalizer holds it');
  assert.throws(
    () => api.create(crontabs(), 'default', tab('b', { cronSpec: '* * * * *' })),
    apiErr(405, /create not allowed while custom resource definition is terminating/),
  );
  api.delete(crontabs(), 'default', 'a');
  const cur = api.get(crds, '', 'crontabs.stable.example.com');
  api.update(crds, '', cur.metadata.name, { ...cur, metadata: { ...cur.metadata, finalizers: [] } });
  assert.equal(api.find(crds, '', 'crontabs.stable.example.com'), undefined);
  assert.equal(api.resources.find('stable.example.com', 'v1', 'crontabs'), undefined);
});

test('a restarted apiserver serves the definitions it stored', () => {
  const store = new Store();
  const api = new Api(store);
  api.create(api.res('apiextensions.k8s.io', 'customresourcedefinitions'), '', crontabCrd());
  const again = new Api(store);
  assert.ok(again.resources.find('stable.example.com', 'v1', 'crontabs'));
});

test('version priority, JSONPath subset and served resources', () => {
  assert.deepEqual(['v1alpha1', 'foo', 'v1beta2', 'v2', 'v1', 'v11alpha2', 'bar', 'v1beta1'].sort(compareVersions), [
    'v2',
    'v1',
    'v1beta2',
    'v1beta1',
    'v11alpha2',
    'v1alpha1',
    'bar',
    'foo',
  ]);
  const o = {
    status: {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'Synced', status: 'False' },
      ],
    },
    spec: { list: [1, 2] },
  };
  assert.deepEqual(evalJsonPath(o, parseJsonPath('.status.conditions[?(@.type=="Ready")].status')!), ['True']);
  assert.deepEqual(evalJsonPath(o, parseJsonPath('.spec.list[1]')!), [2]);
  assert.deepEqual(evalJsonPath(o, parseJsonPath('.spec.list[*]')!), [1, 2]);
  assert.equal(parseJsonPath('spec'), undefined);
  const defs = servedResources({
    metadata: { name: 'crontabs.stable.example.com' },
    spec: crontabCrd().spec,
    status: { conditions: [{ type: 'Established', status: 'True' }] },
  });
  assert.deepEqual(
    defs.map((d) => [d.version, d.custom!.priority, d.custom!.storageVersion]),
    [
      ['v1', 0, 'v1'],
      ['v1beta1', 1, 'v1'],
    ],
  );
  assert.deepEqual(defs[0]!.fields, ['spec.color']);
});

test('a cluster-scoped definition: objects without a namespace, listed by label', () => {
  const api = new Api(new Store());
  const crd = crontabCrd();
  crd.metadata.name = 'clustertabs.stable.example.com';
  Object.assign(crd.spec, {
    scope: 'Cluster',
    names: { plural: 'clustertabs', kind: 'ClusterTab' },
    versions: [crd.spec.versions[0]],
  });
  api.create(api.res('apiextensions.k8s.io', 'customresourcedefinitions'), '', crd);
  const r = api.resources.find('stable.example.com', 'v1', 'clustertabs')!;
  assert.equal(r.namespaced, false);
  assert.equal(r.singular, 'clustertab', 'singular defaulted from the kind');
  const o = api.create(r, '', {
    apiVersion: 'stable.example.com/v1',
    kind: 'ClusterTab',
    metadata: { name: 'x', namespace: 'ignored', labels: { a: 'b' } },
    spec: { cronSpec: '* * * * *' },
  });
  assert.equal(o.metadata.namespace, undefined);
  api.create(r, '', {
    apiVersion: 'stable.example.com/v1',
    kind: 'ClusterTab',
    metadata: { name: 'y' },
    spec: { cronSpec: '* * * * *' },
  });
  assert.deepEqual(
    api.list(r, undefined, { labelSelector: 'a=b' }).items.map((i: any) => i.metadata.name),
    ['x'],
  );
  assert.throws(
    () => api.create(r, '', { apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'z' }, spec: {} }),
    apiErr(400, /do not match/),
  );
});

test('a default added to the schema later applies when stored objects are read (get and list, every version)', () => {
  const { api, crontabs } = withCrd();
  api.create(crontabs(), 'default', tab('old', { cronSpec: '* * * * */5' }));
  const crds = api.res('apiextensions.k8s.io', 'customresourcedefinitions');
  const crd = api.get(crds, '', 'crontabs.stable.example.com');
  const withColor = structuredClone(SCHEMA);
  (withColor.properties.spec.properties.color as Record<string, unknown>).default = 'green';
  for (const v of crd.spec.versions) v.schema = { openAPIV3Schema: withColor };
  api.update(crds, '', crd.metadata.name, crd);
  assert.equal(api.get(crontabs(), 'default', 'old').spec.color, 'green');
  assert.equal(api.get(crontabs('v1beta1'), 'default', 'old').spec.color, 'green');
  assert.equal(api.list(crontabs(), 'default').items[0].spec.color, 'green');
});
