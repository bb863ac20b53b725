import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LabelIndex, SelectorIndex } from './label-index.js';

test('LabelIndex: a selector picks the objects of its namespace carrying all its pairs; updates and deletes are followed', () => {
  const i = new LabelIndex();
  i.set('a/p1', 'a', { app: 'web', tier: 'front' });
  i.set('a/p2', 'a', { app: 'web' });
  i.set('b/p3', 'b', { app: 'web', tier: 'front' });
  assert.deepEqual(i.select('a', { app: 'web' }).sort(), ['a/p1', 'a/p2']);
  assert.deepEqual(i.select('a', { app: 'web', tier: 'front' }), ['a/p1']);
  assert.deepEqual(i.select('a', { app: 'db' }), []);
  assert.deepEqual(i.select('a', {}).sort(), ['a/p1', 'a/p2'], 'an empty selector is the whole namespace');
  i.set('a/p1', 'a', { app: 'db' });
  assert.deepEqual(i.select('a', { app: 'web', tier: 'front' }), []);
  assert.deepEqual(i.select('a', { app: 'db' }), ['a/p1']);
  i.delete('a/p2');
  assert.deepEqual(i.select('a', { app: 'web' }), []);
});

test("SelectorIndex: the selectors an object's labels satisfy, each once; empty selectors pick nothing", () => {
  const s = new SelectorIndex();
  s.set('a/web', 'a', { app: 'web' });
  s.set('a/front', 'a', { app: 'web', tier: 'front' });
  s.set('a/none', 'a', {});
  s.set('b/web', 'b', { app: 'web' });
  assert.deepEqual(s.matching('a', { app: 'web', tier: 'front', x: 'y' }).sort(), ['a/front', 'a/web']);
  assert.deepEqual(s.matching('a', { app: 'web' }), ['a/web']);
  assert.deepEqual(s.matching('a', undefined), []);
  s.set('a/web', 'a', { app: 'api' });
  assert.deepEqual(s.matching('a', { app: 'web' }), []);
  s.delete('a/front');
  assert.deepEqual(s.matching('a', { app: 'web', tier: 'front' }), []);
});

test('indexes scale: 10,000 selectors and 100,000 labelled objects in one namespace answer a query by touching its matches only', () => {
  const l = new LabelIndex();
  const s = new SelectorIndex();
  for (let i = 0; i < 10_000; i++) s.set(`ns/svc${i}`, 'ns', { app: `app${i}` });
  for (let i = 0; i < 100_000; i++) l.set(`ns/pod${i}`, 'ns', { app: `app${i % 10_000}`, 'pod-template-hash': 'abc' });
  assert.equal(l.select('ns', { app: 'app42', 'pod-template-hash': 'abc' }).length, 10);
  assert.deepEqual(s.matching('ns', { app: 'app42', 'pod-template-hash': 'abc' }), ['ns/svc42']);
});
