import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { Store, StoreError, type StoreEvent } from './store.js';

const obj = (name: string, extra = {}) => ({ metadata: { name, namespace: 'ns' }, ...extra });

test('one monotonic resourceVersion across all objects; optimistic concurrency', () => {
  const s = new Store();
  const a = s.create('/pods/ns/a', obj('a'));
  const b = s.create('/cms/ns/b', obj('b'));
  assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
  const a2 = s.update('/pods/ns/a', { ...a, x: 1 }, a.metadata.resourceVersion);
  assert.throws(
    () => s.update('/pods/ns/a', { ...a, x: 2 }, a.metadata.resourceVersion),
    (e: unknown) => e instanceof StoreError && e.reason === 'Conflict',
  );
  assert.throws(
    () => s.create('/pods/ns/a', obj('a')),
    (e: unknown) => e instanceof StoreError && e.reason === 'AlreadyExists',
  );
  assert.equal(s.get('/pods/ns/a')!.metadata.resourceVersion, a2.metadata.resourceVersion);
});

test('watch replays history after an RV, then follows; too old is Expired', () => {
  const s = new Store({ historySize: 3 });
  const first = s.create('/p/ns/a', obj('a'));
  s.create('/p/ns/b', obj('b'));
  const seen: StoreEvent[] = [];
  const stop = s.watch('/p/', Number(first.metadata.resourceVersion), (e) => seen.push(e));
  s.delete('/p/ns/a');
  s.create('/q/ns/other', obj('other'));
  stop();
  s.create('/p/ns/c', obj('c'));
  assert.deepEqual(
    seen.map((e) => [e.type, e.object.metadata.name]),
    [
      ['ADDED', 'b'],
      ['DELETED', 'a'],
    ],
  );
  for (let i = 0; i < 5; i++) s.create(`/p/ns/x${i}`, obj(`x${i}`));
  assert.throws(
    () => s.watch('/p/', Number(first.metadata.resourceVersion), () => {}),
    (e: unknown) => e instanceof StoreError && e.reason === 'Expired',
  );
});

test('with a data dir, every acknowledged write survives a restart; a torn last line is ignored', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-store-'));
  const s1 = new Store({ dataDir: dir });
  s1.create('/p/ns/a', obj('a'));
  const b = s1.create('/p/ns/b', obj('b'));
  s1.update('/p/ns/b', { ...b, v: 2 });
  s1.delete('/p/ns/a');
  const rv = s1.resourceVersion;
  s1.close();
  fs.appendFileSync(path.join(dir, 'objects.log'), '{"t":"put","k":"/p/ns/torn"');
  const s2 = new Store({ dataDir: dir });
  assert.equal(s2.resourceVersion, rv);
  assert.equal(s2.get('/p/ns/a'), undefined);
  assert.equal(s2.get('/p/ns/b')!.v, 2);
  assert.equal(s2.get('/p/ns/torn'), undefined);
  const c = s2.create('/p/ns/c', obj('c'));
  assert.ok(Number(c.metadata.resourceVersion) > rv, 'RVs keep growing across restarts');
  s2.close();
  fs.rmSync(dir, { recursive: true });
});

test('compaction keeps objects and the resourceVersion', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-store-'));
  const s1 = new Store({ dataDir: dir, compactAfter: 5 });
  for (let i = 0; i < 12; i++) s1.create(`/p/ns/o${i}`, obj(`o${i}`));
  for (let i = 0; i < 10; i++) s1.delete(`/p/ns/o${i}`);
  const rv = s1.resourceVersion;
  s1.close();
  assert.ok(fs.readFileSync(path.join(dir, 'objects.log'), 'utf8').split('\n').length < 22);
  const s2 = new Store({ dataDir: dir });
  assert.equal(s2.resourceVersion, rv);
  assert.deepEqual(
    s2.list('/p/').items.map((o) => o.metadata.name),
    ['o10', 'o11'],
  );
  s2.close();
  fs.rmSync(dir, { recursive: true });
});

test('a store with more objects than compactAfter compacts once its log holds twice them, not on every write', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-store-'));
  const s = new Store({ dataDir: dir, compactAfter: 5 });
  const lines = (): number => fs.readFileSync(path.join(dir, 'objects.log'), 'utf8').split('\n').filter(Boolean).length;
  for (let i = 0; i < 12; i++) s.create(`/p/ns/o${i}`, obj(`o${i}`));
  // Only creates: the log is all live objects, nothing to compact.
  assert.equal(lines(), 12);
  const update = (i: number): void =>
    void s.update(`/p/ns/o${i % 12}`, { ...s.get(`/p/ns/o${i % 12}`)!, data: { n: String(i) } });
  for (let i = 0; i < 12; i++) update(i);
  assert.equal(lines(), 24);
  update(12);
  // Past twice the live objects: rewritten as one record per object and the resourceVersion.
  assert.equal(lines(), 13);
  for (let i = 13; i < 18; i++) update(i);
  assert.equal(lines(), 18, 'each write after a compaction appends to the log');
  s.close();
  const again = new Store({ dataDir: dir });
  assert.equal(again.list('/p/').items.length, 12);
  assert.equal(again.get('/p/ns/o5')!.data!.n, '17');
  again.close();
  fs.rmSync(dir, { recursive: true });
});
