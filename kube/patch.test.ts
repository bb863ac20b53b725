import assert from 'node:assert/strict';
import { test } from 'node:test';

import { jsonPatch, mergePatch, strategicMerge } from './patch.js';

test('merge patch (RFC 7386): null deletes, lists replace', () => {
  assert.deepEqual(mergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { b: { c: null, e: 4 }, l: [3] }), {
    a: 1,
    b: { d: 3, e: 4 },
    l: [3],
  });
});

test('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { a: '1' } }, spec: { list: [1, 2] } };
  assert.deepEqual(
    jsonPatch(doc, [
      { op: 'add', path: '/metadata/labels/b~1c', value: '2' },
      { op: 'replace', path: '/spec/list/0', value: 9 },
      { op: 'add', path: '/spec/list/-', value: 3 },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'test', path: '/spec/list/1', value: 2 },
    ]),
    { metadata: { labels: { 'b/c': '2' } }, spec: { list: [9, 2, 3] } },
  );
  assert.throws(() => jsonPatch(doc, [{ op: 'test', path: '/spec/list/0', value: 5 }]), /test operation failed/);
  assert.throws(() => jsonPatch(doc, [{ op: 'replace', path: '/nope', value: 1 }]), /missing key/);
});

test('strategic merge: lists merge by key (containers, conditions, env, ports, volumes)', () => {
  const pod = {
    spec: {
      containers: [
        { name: 'a', image: 'x:1', env: [{ name: 'E', value: '1' }], ports: [{ containerPort: 80 }] },
        { name: 'b', image: 'y:1' },
      ],
      volumes: [{ name: 'v', emptyDir: {} }],
    },
    status: {
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'PodScheduled', status: 'True' },
      ],
    },
  };
  const out = strategicMerge(pod, {
    spec: {
      containers: [
        { name: 'a', image: 'x:2', env: [{ name: 'F', value: '2' }], ports: [{ containerPort: 80, name: 'http' }] },
      ],
      volumes: [{ name: 'w', emptyDir: {} }],
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }) as any;
  assert.deepEqual(
    out.spec.containers.map((c: any) => [c.name, c.image]),
    [
      ['a', 'x:2'],
      ['b', 'y:1'],
    ],
  );
  assert.deepEqual(out.spec.containers[0].env, [
    { name: 'E', value: '1' },
    { name: 'F', value: '2' },
  ]);
  assert.deepEqual(out.spec.containers[0].ports, [{ containerPort: 80, name: 'http' }]);
  assert.deepEqual(
    out.spec.volumes.map((v: any) => v.name),
    ['v', 'w'],
  );
  assert.deepEqual(out.status.conditions, [
    { type: 'Ready', status: 'True' },
    { type: 'PodScheduled', status: 'True' },
  ]);
  const del = strategicMerge(pod, { spec: { containers: [{ name: 'b', $patch: 'delete' }] } }) as any;
  assert.deepEqual(
    del.spec.containers.map((c: any) => c.name),
    ['a'],
  );
  const ips = strategicMerge(
    { status: { podIPs: [{ ip: '10.0.0.1' }] } },
    { status: { podIPs: [{ ip: '10.0.0.2' }, { $patch: 'replace' }] } },
  ) as any;
  assert.deepEqual(ips.status.podIPs, [{ ip: '10.0.0.2' }], 'a $patch: replace element replaces the list');
  const st = strategicMerge(
    { s: { running: { startedAt: 'x' } } },
    { s: { running: null, terminated: { exitCode: 0 } } },
  ) as any;
  assert.deepEqual(st.s, { terminated: { exitCode: 0 } });
  const repl = strategicMerge(pod, { status: { $patch: 'replace', phase: 'Running' } }) as any;
  assert.deepEqual(repl.status, { phase: 'Running' });
});
