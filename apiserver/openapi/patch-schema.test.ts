// Strategic merge patches under the kinds' own schemas: what kubectl sends for taints, tolerations, apply's
// $retainKeys and $setElementOrder, and finalizers.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { strategicMergeBySchema } from '../../kube/strategic-merge.js';
import { patchSchemaOf } from './patch-schema.js';
import { DEFINITIONS } from './schema.js';

const of = (def: string) => patchSchemaOf({ $ref: `#/definitions/${def}` });
const NODE = of('io.k8s.api.core.v1.Node');
const POD = of('io.k8s.api.core.v1.Pod');
const DEPLOYMENT = of('io.k8s.api.apps.v1.Deployment');

test('the schema says how each list merges', () => {
  assert.ok(DEFINITIONS['io.k8s.api.core.v1.Node']);
  assert.equal(POD?.property('spec')?.property('containers')?.mergeKey, 'name');
  assert.equal(POD?.property('spec')?.property('tolerations')?.strategy, undefined);
  assert.equal(NODE?.property('spec')?.property('taints')?.strategy, undefined);
  assert.equal(POD?.property('metadata')?.property('finalizers')?.strategy, 'merge');
});

test('taints and tolerations are replaced whole: a removed taint goes, two tolerations of one key stay two', () => {
  const node = {
    spec: {
      taints: [
        { key: 'k', value: 'v', effect: 'NoSchedule' },
        { key: 'k', value: 'v', effect: 'NoExecute' },
      ],
    },
  };
  const untainted = strategicMergeBySchema(
    node,
    { spec: { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] } },
    NODE,
  );
  assert.deepEqual(untainted, { spec: { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] } });
  const tolerations = [
    { key: 'a', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'a', operator: 'Exists', effect: 'NoExecute' },
  ];
  const pod = strategicMergeBySchema(
    { spec: { tolerations: [{ key: 'old', operator: 'Exists' }] } },
    { spec: { tolerations } },
    POD,
  );
  assert.deepEqual(pod, { spec: { tolerations } });
});

test('containers merge by name, with $patch delete; $setElementOrder puts a new init container first', () => {
  const pod = {
    spec: {
      initContainers: [{ name: 'old', image: 'i:1' }],
      containers: [
        { name: 'a', image: 'a:1', env: [{ name: 'E', value: '1' }] },
        { name: 'b', image: 'b:1' },
      ],
    },
  };
  const out = strategicMergeBySchema(
    pod,
    {
      spec: {
        '$setElementOrder/initContainers': [{ name: 'new' }, { name: 'old' }],
        initContainers: [{ name: 'new', image: 'n:1' }],
        containers: [
          { name: 'a', env: [{ name: 'F', value: '2' }] },
          { name: 'b', $patch: 'delete' },
        ],
      },
    },
    POD,
  ) as { spec: { initContainers: { name: string }[]; containers: unknown[] } };
  assert.deepEqual(
    out.spec.initContainers.map((c) => c.name),
    ['new', 'old'],
  );
  assert.deepEqual(out.spec.containers, [
    {
      name: 'a',
      image: 'a:1',
      env: [
        { name: 'F', value: '2' },
        { name: 'E', value: '1' },
      ],
    },
  ]);
});

test("items a patch adds go before the stored ones, in the patch's order, as upstream orders them", () => {
  // The input and result of apimachinery v0.37.2's StrategicMergePatch(orig, patch, v1.Pod{}), run once.
  const orig = {
    metadata: { finalizers: ['x', 'y'] },
    spec: { containers: [{ name: 'a', image: 'a:1', env: [{ name: 'E', value: '1' }] }] },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
  const patch = {
    metadata: { finalizers: ['z'] },
    spec: {
      containers: [
        { name: 'a', env: [{ name: 'F', value: '2' }] },
        { name: 'new', image: 'n' },
      ],
    },
    status: { conditions: [{ type: 'Initialized', status: 'True' }] },
  };
  assert.deepEqual(strategicMergeBySchema(orig, patch, POD), {
    metadata: { finalizers: ['z', 'x', 'y'] },
    spec: {
      containers: [
        {
          name: 'a',
          image: 'a:1',
          env: [
            { name: 'F', value: '2' },
            { name: 'E', value: '1' },
          ],
        },
        { name: 'new', image: 'n' },
      ],
    },
    status: {
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
      ],
    },
  });
});

test('$retainKeys: switching a Deployment to Recreate drops rollingUpdate', () => {
  const d = { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } };
  const out = strategicMergeBySchema(
    d,
    { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: null } } },
    DEPLOYMENT,
  );
  assert.deepEqual(out, { spec: { strategy: { type: 'Recreate' } } });
});

test('finalizers merge as a set; $deleteFromPrimitiveList removes some', () => {
  const o = { metadata: { finalizers: ['a', 'b'] } };
  assert.deepEqual(strategicMergeBySchema(o, { metadata: { finalizers: ['b', 'c'] } }, POD), {
    metadata: { finalizers: ['a', 'b', 'c'] },
  });
  assert.deepEqual(strategicMergeBySchema(o, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, POD), {
    metadata: { finalizers: ['b'] },
  });
});

test('a merged list item without its merge key is refused', () => {
  assert.throws(
    () => strategicMergeBySchema({ spec: { containers: [] } }, { spec: { containers: [{ image: 'x' }] } }, POD),
    /does not contain declared merge key: name/,
  );
});

test('an atomic list (containerStatuses) is taken whole from the patch, its null fields dropped as typed decoding does', () => {
  const out = strategicMergeBySchema(
    { status: { containerStatuses: [{ name: 'c', state: { waiting: { reason: 'ContainerCreating' } } }] } },
    { status: { containerStatuses: [{ name: 'c', state: { waiting: null, running: { startedAt: 't' } } }] } },
    POD,
  );
  assert.deepEqual(out, { status: { containerStatuses: [{ name: 'c', state: { running: { startedAt: 't' } } }] } });
});
