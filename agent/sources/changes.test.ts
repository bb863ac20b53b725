import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { podNames, sourceChanges } from './changes.js';

const pod = (name: string, extra: Pod['metadata'] = {}): Pod => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...extra },
});

test('a SET is split into the pods it added, updated, deleted and removed; unchanged objects are none of them', () => {
  const a = pod('a');
  const b = pod('b');
  const c = pod('c');
  const d = pod('d');
  const b2 = { ...b, spec: { containers: [] } };
  const c2 = pod('c', { deletionTimestamp: '2026-12-05T00:00:00Z' });
  const e = pod('e');
  const ch = sourceChanges([a, b, c, d], [a, b2, c2, e]);
  assert.deepEqual(podNames(ch.add), ['ns/e']);
  assert.deepEqual(podNames(ch.update), ['ns/b']);
  assert.deepEqual(podNames(ch.delete), ['ns/c']);
  assert.deepEqual(podNames(ch.remove), ['ns/d']);
});

test('a pod already being deleted that changes again is an UPDATE; the first SET adds everything', () => {
  const c = pod('c', { deletionTimestamp: '2026-12-05T00:00:00Z' });
  const c2 = pod('c', { deletionTimestamp: '2026-12-05T00:00:00Z', deletionGracePeriodSeconds: 0 });
  assert.deepEqual(podNames(sourceChanges([c], [c2]).update), ['ns/c']);
  const first = sourceChanges([], [pod('x'), pod('y')]);
  assert.deepEqual(podNames(first.add), ['ns/x', 'ns/y']);
  assert.equal(first.update.length + first.delete.length + first.remove.length, 0);
});
