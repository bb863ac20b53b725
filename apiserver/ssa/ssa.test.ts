// Server-side apply: field sets in FieldsV1 form, merges
// by the schema's list keys, ownership per manager and operation, conflicts
// worded as upstream, force, pruning of fields an applier stopped setting.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';
import { ApiError } from '../api/errors.js';
import { definitionOf, DEFINITIONS } from '../openapi/schema.js';
import { RESOURCES } from '../resources.js';
import type { Obj } from '../storage/store.js';
import { FieldSet, pathString } from './fieldset.js';
import { applyConfig, type ManagedFieldsEntry, trackUpdate } from './managed-fields.js';
import { merge, toFieldSet } from './typed.js';

const DEPLOY = RESOURCES.find((r) => r.kind === 'Deployment')!;
const CM = RESOURCES.find((r) => r.kind === 'ConfigMap')!;
const podSpec = DEFINITIONS[definitionOf('v1', 'Pod')!]!.properties!.spec;
const w = (manager: string, force = false) => ({ manager, subresource: '', now: '2026-12-03T00:00:00Z', force });

const deploy = (spec: Obj, labels: Record<string, string> = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', ...(Object.keys(labels).length ? { labels } : {}) },
  spec,
});
const container = (extra: Obj = {}): Obj => ({ name: 'c', image: 'busybox', ...extra });
const tmpl = (containers: Obj[]): Obj => ({
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers } },
});

test('FieldsV1 round trip; paths print as upstream prints them in conflicts', () => {
  const v1 = {
    'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
    'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } }, 'f:finalizers': { 'v:"x"': {} } },
  };
  const set = FieldSet.fromFieldsV1(v1);
  assert.deepEqual(set.toFieldsV1(), v1);
  assert.deepEqual(set.paths().map(pathString), [
    '.metadata.labels',
    '.metadata.labels.app',
    '.spec.containers[name="c"]',
    '.spec.containers[name="c"].image',
    '.spec.finalizers[="x"]',
  ]);
  assert.equal(
    pathString(['f:spec', 'f:ports', 'k:{"port":80,"protocol":"TCP"}', 'f:targetPort']),
    '.spec.ports[port=80,protocol="TCP"].targetPort',
  );
});

test('an applied configuration owns its leaves, keyed list items (protocol defaulted in keys) and map entries', () => {
  const set = toFieldSet(
    {
      spec: { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80 }], args: ['a'] }] },
      metadata: { labels: { app: 'web' } },
    },
    DEFINITIONS[definitionOf('v1', 'Pod')!],
  );
  assert.deepEqual(set.toFieldsV1(), {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': {
      'f:containers': {
        'k:{"name":"c"}': {
          '.': {},
          'f:args': {},
          'f:image': {},
          'f:name': {},
          'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
        },
      },
    },
  });
});

test('merge: containers by name (live-only ones keep their place), env by name, args atomic, ports matched with the defaulted protocol', () => {
  const live = {
    containers: [
      {
        name: 'a',
        image: 'a1',
        args: ['x', 'y'],
        env: [
          { name: 'E', value: '1' },
          { name: 'F', value: '2' },
        ],
      },
      { name: 'side', image: 's' },
      { name: 'b', image: 'b1', ports: [{ containerPort: 80, protocol: 'TCP' }] },
    ],
  };
  const cfg = {
    containers: [
      { name: 'a', args: ['z'], env: [{ name: 'F', value: '3' }] },
      { name: 'b', ports: [{ containerPort: 80, name: 'http' }] },
      { name: 'new', image: 'n' },
    ],
  };
  assert.deepEqual(merge(live, cfg, podSpec), {
    containers: [
      {
        name: 'a',
        image: 'a1',
        args: ['z'],
        env: [
          { name: 'E', value: '1' },
          { name: 'F', value: '3' },
        ],
      },
      { name: 'side', image: 's' },
      { name: 'b', image: 'b1', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] },
      { name: 'new', image: 'n' },
    ],
  });
});

function conflictOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  assert.fail('expected a conflict');
}

test('apply: another applier changing an owned field is a 409 naming manager and path; the same value is shared; force moves ownership', () => {
  const first = applyConfig(DEPLOY, undefined, deploy({ replicas: 2, ...tmpl([container()]) }), w('alice'));
  const cur: Obj = { ...first.object, metadata: { ...first.object.metadata, managedFields: first.managedFields } };
  // Same values: no conflict, both own them.
  const shared = applyConfig(DEPLOY, cur, deploy({ replicas: 2 }), w('bob'));
  assert.equal(shared.managedFields.length, 2);
  const one = conflictOf(() => applyConfig(DEPLOY, cur, deploy({ replicas: 3 }), w('bob')));
  assert.equal(one.code, 409);
  assert.equal(one.reason, 'Conflict');
  assert.equal(one.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
  assert.deepEqual(one.details?.causes, [
    { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' },
  ]);
  const two = conflictOf(() =>
    applyConfig(
      DEPLOY,
      cur,
      deploy({ replicas: 3, template: { spec: { containers: [container({ image: 'other' })] } } }),
      w('bob'),
    ),
  );
  assert.equal(
    two.message,
    'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n- .spec.template.spec.containers[name="c"].image',
  );
  const forced = applyConfig(DEPLOY, cur, deploy({ replicas: 3 }), w('bob', true));
  assert.equal((forced.object.spec as Obj).replicas, 3);
  const alice = FieldSet.fromFieldsV1(forced.managedFields.find((m) => m.manager === 'alice')!.fieldsV1);
  const bob = FieldSet.fromFieldsV1(forced.managedFields.find((m) => m.manager === 'bob')!.fieldsV1);
  assert.equal(alice.has(['f:spec', 'f:replicas']), false);
  assert.equal(bob.has(['f:spec', 'f:replicas']), true);
});

test('apply: a field the applier stops setting is removed unless another manager holds it; an Update is a conflict for the next apply', () => {
  const a = applyConfig(
    CM,
    undefined,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels: { x: '1', y: '2' } },
      data: { a: '1', b: '2' },
    },
    w('alice'),
  );
  let cur: Obj = { ...a.object, metadata: { ...a.object.metadata, managedFields: a.managedFields } };
  // bob (an ordinary update) changes b and takes it over.
  const next: Obj = { ...cur, data: { a: '1', b: 'bob' } };
  cur = {
    ...next,
    metadata: {
      ...next.metadata,
      managedFields: trackUpdate(CM, cur, next, { manager: 'bob', subresource: '', now: 'later' }),
    },
  };
  const mf = cur.metadata.managedFields as ManagedFieldsEntry[];
  assert.deepEqual(
    mf.find((m) => m.manager === 'bob'),
    {
      manager: 'bob',
      operation: 'Update',
      apiVersion: 'v1',
      time: 'later',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:b': {} } },
    },
  );
  assert.equal(
    conflictOf(() =>
      applyConfig(
        CM,
        cur,
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { b: 'alice' } },
        w('alice'),
      ),
    ).message,
    'Apply failed with 1 conflict: conflict with "bob" using v1: .data.b',
  );
  // alice drops label y and data b: y goes, b stays (bob holds it).
  const pruned = applyConfig(
    CM,
    cur,
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { x: '1' } }, data: { a: '1' } },
    w('alice'),
  );
  assert.deepEqual((pruned.object.metadata as Obj).labels, { x: '1' });
  assert.deepEqual(pruned.object.data, { a: '1', b: 'bob' });
  // An update that changes nothing leaves managedFields as they were.
  assert.equal(
    trackUpdate(CM, cur, structuredClone(cur), { manager: 'carol', subresource: '', now: 'x' }),
    cur.metadata.managedFields,
  );
});

const s = useTestApiServer('n1');
const applyYaml = (path: string, yaml: string, q = 'fieldManager=tester') =>
  rawRequest(s.api, 'PATCH', `${path}?${q}`, { contentType: 'application/apply-patch+yaml', body: yaml });

test('PATCH application/apply-patch+yaml: creates (201), updates (200), no-op keeps the resourceVersion, dry run stores nothing, upstream 422s for bad options', async () => {
  const path = '/api/v1/namespaces/default/configmaps/ssa';
  const doc = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: "1"\n';
  const missing = await applyYaml(path, doc, '');
  assert.equal(missing.code, 422);
  assert.equal(
    JSON.parse(missing.text).message,
    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
  );
  const dry = await applyYaml(path, doc, 'fieldManager=tester&dryRun=All');
  assert.equal(dry.code, 201);
  assert.equal((await rawRequest(s.api, 'GET', path)).code, 404);
  const created = await applyYaml(path, doc);
  assert.equal(created.code, 201);
  const obj = JSON.parse(created.text) as Obj;
  assert.deepEqual(obj.metadata.managedFields, [
    {
      manager: 'tester',
      operation: 'Apply',
      apiVersion: 'v1',
      time: obj.metadata.creationTimestamp,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:a': {} } },
    },
  ]);
  const again = JSON.parse((await applyYaml(path, doc)).text) as Obj;
  assert.equal(again.metadata.resourceVersion, obj.metadata.resourceVersion);
  const other = await applyYaml(path, doc.replace('"1"', '"2"'), 'fieldManager=other');
  assert.equal(other.code, 409);
  assert.equal(JSON.parse(other.text).message, 'Apply failed with 1 conflict: conflict with "tester": .data.a');
  const forced = await applyYaml(path, doc.replace('"1"', '"2"'), 'fieldManager=other&force=true');
  assert.equal(JSON.parse(forced.text).data.a, '2');
  const force = await rawRequest(s.api, 'PATCH', `${path}?force=true`, {
    contentType: 'application/merge-patch+json',
    body: { data: { b: '1' } },
  });
  assert.equal(
    JSON.parse(force.text).message,
    'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
  );
  // An ordinary write is recorded under the user agent's first word when no fieldManager is given.
  const merged = await rawRequest(s.api, 'PATCH', path, {
    contentType: 'application/merge-patch+json',
    body: { data: { b: '1' } },
    headers: { 'User-Agent': 'curl/8.5.0' },
  });
  assert.ok(
    (JSON.parse(merged.text).metadata.managedFields as ManagedFieldsEntry[]).some(
      (m) => m.manager === 'curl' && m.operation === 'Update',
    ),
  );
});
