import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { FirstSeen } from './first-seen.js';

test('FirstSeen gives an unchanged source object the same copy back, and a changed one a new copy with the same config.seen', () => {
  const seen = new FirstSeen();
  const a: Pod = { metadata: { uid: 'u1', name: 'a', annotations: { x: '1' } }, spec: { containers: [] } };
  const [first] = seen.stamp([a], { 'kubernetes.io/config.source': 'api' });
  const [again] = seen.stamp([a], { 'kubernetes.io/config.source': 'api' });
  assert.equal(again, first, 'same object, same copy');
  assert.notEqual(first, a, 'never the source object itself');
  assert.equal(a.metadata!.annotations!['kubernetes.io/config.seen'], undefined, 'the source object is not touched');
  const changed: Pod = { ...a, spec: { containers: [{ name: 'c' }] } };
  const [next] = seen.stamp([changed], { 'kubernetes.io/config.source': 'api' });
  assert.notEqual(next, first);
  assert.equal(
    next!.metadata!.annotations!['kubernetes.io/config.seen'],
    first!.metadata!.annotations!['kubernetes.io/config.seen'],
  );
  const [other] = seen.stamp([a], { 'kubernetes.io/config.source': 'file' });
  assert.notEqual(other, first, 'other extra annotations, another copy');
  assert.equal(other!.metadata!.annotations!['kubernetes.io/config.source'], 'file');
});
