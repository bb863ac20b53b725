import assert from 'node:assert/strict';
import { test } from 'node:test';

import { seededRandom } from '../../kube/seeded-random.js';
import { bucketOf, KeyIndex, lowerBound } from './key-index.js';

const keysOf = (ix: KeyIndex, prefix: string): string[] => {
  const out: string[] = [];
  ix.forEach(prefix, (k) => out.push(k));
  return out;
};

test('bucketOf: the key up to its second slash', () => {
  assert.equal(bucketOf('/pods/default/web'), '/pods/');
  assert.equal(bucketOf('apps/deployments/ns/d'), 'apps/deployments/');
  assert.equal(bucketOf('/nodes//n1'), '/nodes/');
  assert.equal(bucketOf('rbac.authorization.k8s.io/'), '');
  assert.equal(bucketOf('plain'), '');
});

test('lowerBound: first at or after, or strictly after', () => {
  const xs = ['a', 'b', 'b', 'd'];
  assert.equal(lowerBound(xs, 'b'), 1);
  assert.equal(lowerBound(xs, 'b', true), 3);
  assert.equal(lowerBound(xs, 'c'), 3);
  assert.equal(lowerBound(xs, 'z'), 4);
  assert.equal(lowerBound([], 'a'), 0);
});

test('a namespace prefix reads its range of one resource in byte order; a group prefix every resource of the group', () => {
  const ix = new KeyIndex();
  // Byte order, not the locale's: ':' sorts after '.' and the digits, capitals before small letters.
  for (const k of [
    '/pods/b/x',
    '/pods/a/y',
    '/pods/a/x',
    '/pods/ab/z',
    '/services/a/x',
    'rbac.authorization.k8s.io/clusterroles//system:b',
    'rbac.authorization.k8s.io/clusterroles//system.b',
    'rbac.authorization.k8s.io/clusterroles//system1',
    'rbac.authorization.k8s.io/clusterroles//System',
    'rbac.authorization.k8s.io/roles/a/r',
    'odd',
  ])
    ix.add(k);
  ix.add('/pods/a/x');
  assert.deepEqual(keysOf(ix, '/pods/'), ['/pods/a/x', '/pods/a/y', '/pods/ab/z', '/pods/b/x']);
  assert.deepEqual(keysOf(ix, '/pods/a/'), ['/pods/a/x', '/pods/a/y']);
  assert.deepEqual(keysOf(ix, 'rbac.authorization.k8s.io/clusterroles/'), [
    'rbac.authorization.k8s.io/clusterroles//System',
    'rbac.authorization.k8s.io/clusterroles//system.b',
    'rbac.authorization.k8s.io/clusterroles//system1',
    'rbac.authorization.k8s.io/clusterroles//system:b',
  ]);
  assert.deepEqual(keysOf(ix, 'rbac.authorization.k8s.io/').length, 5);
  assert.deepEqual(keysOf(ix, 'od'), ['odd']);
  assert.deepEqual(keysOf(ix, '/nothing/'), []);
  ix.remove('/pods/a/y');
  ix.remove('/pods/a/missing');
  ix.remove('/services/a/x');
  assert.deepEqual(keysOf(ix, '/pods/a/'), ['/pods/a/x']);
  assert.deepEqual(keysOf(ix, '/services/'), []);
});

test('random adds and removes: every prefix lists exactly the live keys that start with it, sorted', () => {
  const rng = seededRandom(7);
  const ix = new KeyIndex();
  const live = new Set<string>();
  const pick = <T>(xs: T[]): T => xs[Math.floor(rng() * xs.length)]!;
  for (let step = 0; step < 3000; step++) {
    const k = `${pick(['/pods/', '/services/', 'apps/deployments/', 'apps/replicasets/'])}${pick(['', 'a', 'b', 'a-b', 'a.b'])}/${pick(['x', 'y', 'x1', 'x:1', 'X', 'x-1', 'x.1'])}`;
    if (rng() < 0.6) {
      ix.add(k);
      live.add(k);
    } else {
      ix.remove(k);
      live.delete(k);
    }
  }
  for (const prefix of ['/pods/', '/pods/a/', '/pods/a-b/', 'apps/', 'apps/deployments/b/', '/', '']) {
    const want = [...live].filter((k) => k.startsWith(prefix));
    const got = keysOf(ix, prefix);
    assert.deepEqual([...got].sort(), want.sort(), prefix);
    // Sorted within each bucket.
    for (let i = 1; i < got.length; i++)
      if (bucketOf(got[i]!) === bucketOf(got[i - 1]!))
        assert.ok(got[i - 1]! < got[i]!, `${prefix}: ${got[i - 1]} before ${got[i]}`);
  }
});
