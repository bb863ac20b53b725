// Input limits and validation with security weight: subPath and
// hostPath escapes, labels and annotations, object and data sizes, nesting
// depth, and one broken watcher never costing the others their events.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { decodeBody, MAX_DEPTH, nestingDepth } from '../http/body.js';
import { MAX_OBJECT_BYTES, Store, StoreError } from '../storage/store.js';
import { Api } from './api.js';
import { ApiError } from './errors.js';

const newApi = (store = new Store()) => new Api(store);
const invalid = (text: string) => (e: unknown) => {
  assert.ok(e instanceof ApiError, String(e));
  assert.equal(e.code, 422, e.message);
  assert.ok(e.message.includes(text), e.message);
  return true;
};
const pod = (name: string, spec: Record<string, unknown>) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'x', ...spec }] },
});

test('subPath must be relative and without ..; hostPath without .. and of a known type (422 as upstream)', () => {
  const api = newApi();
  const pods = api.res('', 'pods');
  const vol = { volumes: [{ name: 'v', emptyDir: {} }] };
  assert.throws(
    () =>
      api.create(pods, 'default', {
        ...pod('a', { volumeMounts: [{ name: 'v', mountPath: '/m', subPath: '../../etc' }] }),
        spec: { ...pod('a', { volumeMounts: [{ name: 'v', mountPath: '/m', subPath: '../../etc' }] }).spec, ...vol },
      }),
    invalid(
      `Pod "a" is invalid: spec.containers[0].volumeMounts[0].subPath: Invalid value: "../../etc": must not contain '..'`,
    ),
  );
  assert.throws(
    () =>
      api.create(pods, 'default', {
        ...pod('b', {}),
        spec: { ...pod('b', { volumeMounts: [{ name: 'v', mountPath: '/m', subPath: '/etc' }] }).spec, ...vol },
      }),
    invalid(`spec.containers[0].volumeMounts[0].subPath: Invalid value: "/etc": must be a relative path`),
  );
  assert.throws(
    () =>
      api.create(pods, 'default', {
        metadata: { name: 'c' },
        spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'h', hostPath: { path: '/var/../etc' } }] },
      }),
    invalid(`spec.volumes[0].hostPath.path: Invalid value: "/var/../etc": must not contain '..'`),
  );
  assert.throws(
    () =>
      api.create(pods, 'default', {
        metadata: { name: 'd' },
        spec: {
          containers: [{ name: 'c', image: 'x' }],
          volumes: [{ name: 'h', hostPath: { path: '/etc', type: 'Symlink' } }],
        },
      }),
    invalid(`spec.volumes[0].hostPath.type: Unsupported value: "Symlink"`),
  );
  // Deployments carry the same pod spec checks.
  const tpl = {
    metadata: { labels: { a: 'b' } },
    spec: {
      containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'v', mountPath: '/m', subPath: 'x/../..' }] }],
      volumes: [{ name: 'v', emptyDir: {} }],
    },
  };
  assert.throws(
    () =>
      api.create(api.res('apps', 'deployments'), 'default', {
        metadata: { name: 'dep' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: tpl },
      }),
    invalid(`spec.template.spec.containers[0].volumeMounts[0].subPath`),
  );
  api.create(pods, 'default', {
    metadata: { name: 'ok' },
    spec: {
      containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'v', mountPath: '/m', subPath: 'a/b..c' }] }],
      volumes: [{ name: 'v', emptyDir: {} }],
    },
  });
});

test('label keys and values, and annotations up to 256 KiB, as upstream', () => {
  const api = newApi();
  const cms = api.res('', 'configmaps');
  assert.throws(
    () => api.create(cms, 'default', { metadata: { name: 'a', labels: { 'bad key': 'v' } } }),
    invalid(`metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters`),
  );
  assert.throws(
    () => api.create(cms, 'default', { metadata: { name: 'b', labels: { k: 'x'.repeat(1_000_000) } } }),
    invalid('metadata.labels: Invalid value: "xxxxx'),
  );
  assert.throws(
    () => api.create(cms, 'default', { metadata: { name: 'b2', labels: { k: 'x'.repeat(64) } } }),
    invalid('must be no more than 63 characters'),
  );
  assert.throws(
    () => api.create(cms, 'default', { metadata: { name: 'c', annotations: { a: 'x'.repeat(256 * 1024) } } }),
    invalid('metadata.annotations: Too long: may not be more than 262144 bytes'),
  );
  api.create(cms, 'default', {
    metadata: { name: 'ok', labels: { 'example.com/a-b_c.d': 'v-1' }, annotations: { 'x/y': 'x'.repeat(200 * 1024) } },
  });
});

test('ConfigMaps and Secrets hold at most 1 MiB; no object over etcd 1.5 MiB is stored', () => {
  const api = newApi();
  assert.throws(
    () =>
      api.create(api.res('', 'configmaps'), 'default', {
        metadata: { name: 'big' },
        data: { a: 'x'.repeat(1024 * 1024 + 1) },
      }),
    invalid('ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'),
  );
  assert.throws(
    () =>
      api.create(api.res('', 'secrets'), 'default', {
        metadata: { name: 'big' },
        data: { a: Buffer.alloc(1024 * 1024 + 8).toString('base64') },
      }),
    invalid('Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes'),
  );
  api.create(api.res('', 'configmaps'), 'default', {
    metadata: { name: 'max' },
    data: { a: 'x'.repeat(1024 * 1024 - 1) },
  });
  const store = new Store();
  assert.throws(
    () => store.create('k', { metadata: { name: 'k' }, blob: 'x'.repeat(MAX_OBJECT_BYTES) }),
    (e: unknown) =>
      e instanceof StoreError && e.reason === 'TooLarge' && e.message === 'etcdserver: request is too large',
  );
  assert.equal(store.resourceVersion, 0, 'a refused write consumes no resourceVersion');
});

test('bodies nested deeper than the limit are refused with 400 at decode time; a body at the limit works everywhere', () => {
  const nest = (d: number): unknown => {
    let o: Record<string, unknown> = {};
    const root = o;
    for (let i = 1; i < d; i++) o = (o.a = {}) as Record<string, unknown>;
    return root;
  };
  assert.equal(nestingDepth(nest(7)), 7);
  assert.throws(
    () =>
      decodeBody(
        Buffer.from(JSON.stringify({ metadata: { name: 'x' }, data: nest(MAX_DEPTH + 5) })),
        'application/json',
        ['application/json'],
      ),
    (e: unknown) => e instanceof ApiError && e.code === 400 && /too deeply nested/.test(e.message),
  );
  const huge = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
  assert.throws(
    () => decodeBody(Buffer.from(huge), 'application/json', ['application/json']),
    (e: unknown) => e instanceof ApiError && e.code === 400,
  );
  assert.throws(
    () =>
      decodeBody(Buffer.from('a:\n' + '  '.repeat(1) + '- '.repeat(3000) + 'x'), 'application/yaml', [
        'application/yaml',
      ]),
    (e: unknown) => e instanceof ApiError && e.code === 400,
  );
  // Just under the limit, the object goes through create, list and a watch.
  const api = newApi();
  const cms = api.res('', 'configmaps');
  const seen: string[] = [];
  const stop = api.watch(cms, 'default', {}, (t) => seen.push(t));
  const body = decodeBody(
    Buffer.from(
      JSON.stringify({ metadata: { name: 'deep' }, binaryData: {}, immutable: false, x: nest(MAX_DEPTH - 2) }),
    ),
    'application/json',
    ['application/json'],
  ) as Record<string, unknown>;
  api.create(cms, 'default', body);
  assert.equal(api.list(cms, undefined).items.length >= 1, true);
  assert.ok(seen.includes('ADDED'));
  stop();
});

test('a watcher that throws does not stop delivery to the others', () => {
  const store = new Store();
  const got: string[] = [];
  const errs: string[] = [];
  store.onWatcherError = (e) => errs.push(e.message);
  store.watch('a/', 0, () => {
    throw new Error('boom');
  });
  store.watch('a/', 0, (e) => got.push(e.key));
  store.create('a/1', { metadata: { name: '1' } });
  store.create('a/2', { metadata: { name: '2' } });
  assert.deepEqual(got, ['a/1', 'a/2']);
  assert.deepEqual(errs, ['boom', 'boom']);
});

test('the watch history is bounded by bytes, and the log is compacted by size', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-store-'));
  try {
    const store = new Store({ dataDir: dir, historyBytes: 1024 * 1024, compactAfterBytes: 4 * 1024 * 1024 });
    const big = 'x'.repeat(100 * 1024);
    store.create('cm/a', { metadata: { name: 'a' }, data: big });
    for (let i = 0; i < 100; i++) store.update('cm/a', { metadata: { name: 'a' }, data: big + i });
    // About ten 200 KiB events fit in 1 MiB: older resourceVersions are expired.
    assert.throws(
      () => store.eventsSince('cm/', 5),
      (e: unknown) => e instanceof StoreError && e.reason === 'Expired',
    );
    assert.ok(store.eventsSince('cm/', 99).length >= 1);
    const size = fs.statSync(path.join(dir, 'objects.log')).size;
    assert.ok(size < 5 * 1024 * 1024, `log is ${size} bytes after 10 MiB of writes`);
    store.close();
    const again = new Store({ dataDir: dir });
    assert.equal(again.get('cm/a')!.data, big + 99);
    again.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
