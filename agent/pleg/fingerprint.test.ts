import assert from 'node:assert/strict';
import { test } from 'node:test';

import { L_POD_UID } from '../pods/labels.js';
import { fingerprintsByPod, podFingerprint } from './fingerprint.js';

const sb = (id: string, uid: string, state = 'SANDBOX_READY') => ({ id, state, labels: { [L_POD_UID]: uid } });
const c = (id: string, uid: string, state = 'CONTAINER_RUNNING') => ({ id, state, labels: { [L_POD_UID]: uid } });

test("a pod's fingerprint is its sandboxes' and containers' IDs and states, in any order; none is ''", () => {
  assert.equal(podFingerprint([], []), '');
  assert.equal(
    podFingerprint([sb('s1', 'u')], [c('c1', 'u'), c('c2', 'u')]),
    podFingerprint([sb('s1', 'u')], [c('c2', 'u'), c('c1', 'u')]),
  );
  assert.notEqual(
    podFingerprint([sb('s1', 'u')], [c('c1', 'u')]),
    podFingerprint([sb('s1', 'u')], [c('c1', 'u', 'CONTAINER_EXITED')]),
  );
  assert.notEqual(podFingerprint([sb('s1', 'u')], [c('c1', 'u')]), podFingerprint([sb('s1', 'u')], [c('c9', 'u')]));
  assert.notEqual(
    podFingerprint([sb('x', 'u')], []),
    podFingerprint([], [c('x', 'u', 'SANDBOX_READY')]),
    'a sandbox is not a container of the same ID',
  );
});

test('a relist of the node: one fingerprint per pod UID, each equal to that pod read on its own; unlabelled objects are no pod', () => {
  const sandboxes = [
    sb('s1', 'a'),
    sb('s2', 'b', 'SANDBOX_NOTREADY'),
    { id: 's3', state: 'SANDBOX_READY', labels: {} },
  ];
  const containers = [c('c1', 'a'), c('c2', 'b', 'CONTAINER_EXITED'), c('c3', 'a', 'CONTAINER_CREATED')];
  const fps = fingerprintsByPod(sandboxes, containers);
  assert.deepEqual([...fps.keys()].sort(), ['a', 'b']);
  assert.equal(fps.get('a'), podFingerprint([sb('s1', 'a')], [c('c3', 'a', 'CONTAINER_CREATED'), c('c1', 'a')]));
  assert.equal(fps.get('b'), podFingerprint([sb('s2', 'b', 'SANDBOX_NOTREADY')], [c('c2', 'b', 'CONTAINER_EXITED')]));
});
