import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type KObj, type KubeApi, KubeApiError } from '../../kube/client.js';
import { ApiObjects } from './api-objects.js';

test('ConfigMaps and Secrets: the last copy read serves while the apiserver is away; a 404 forgets it', async () => {
  let mode: 'ok' | 'down' | 'gone' = 'ok';
  const api = {
    get: async (path: string): Promise<KObj> => {
      if (mode === 'down') throw new Error('connect ECONNREFUSED');
      if (mode === 'gone') throw new KubeApiError(404, 'NotFound', `${path} not found`);
      return { metadata: { name: 'cfg' }, data: { k: 'v' } };
    },
  } as unknown as KubeApi;
  const o = new ApiObjects(api);
  assert.equal((await o.configMap('ns', 'cfg'))!.data.k, 'v');
  mode = 'down';
  assert.equal((await o.configMap('ns', 'cfg'))!.data.k, 'v', 'served from the last copy');
  await assert.rejects(o.secret('ns', 'never-read'), /ECONNREFUSED/);
  mode = 'gone';
  assert.equal(await o.configMap('ns', 'cfg'), undefined);
  mode = 'down';
  await assert.rejects(o.configMap('ns', 'cfg'), /ECONNREFUSED/, 'a deleted object is not served from the cache');
});

test('one read per object for requests made meanwhile, and per resync pass; a pass ends with its reads', async () => {
  let gets = 0;
  let version = 1;
  const api = {
    get: async (): Promise<KObj> => {
      gets++;
      await new Promise((r) => setTimeout(r, 5));
      return { metadata: { name: 'kube-root-ca.crt' }, data: { v: String(version) } };
    },
  } as unknown as KubeApi;
  const o = new ApiObjects(api);
  const many = await Promise.all(Array.from({ length: 30 }, () => o.configMap('ns', 'kube-root-ca.crt')));
  assert.equal(gets, 1, '30 pods starting at once: one read');
  assert.ok(many.every((c) => c!.data.v === '1'));
  assert.equal((await o.configMap('other', 'kube-root-ca.crt'))!.data.v, '1');
  assert.equal(gets, 2, 'another path is another read');
  await o.configMap('ns', 'kube-root-ca.crt');
  assert.equal(gets, 3, 'a read after the last one ended is a new read (no cache by time)');
  version = 2;
  const seen = await o.inPass(async () => {
    const out: string[] = [];
    for (let i = 0; i < 110; i++) out.push((await o.configMap('ns', 'kube-root-ca.crt'))!.data.v);
    return out;
  });
  assert.equal(gets, 4, 'a resync pass over 110 pods: one read');
  assert.deepEqual(new Set(seen), new Set(['2']));
  version = 3;
  assert.equal((await o.configMap('ns', 'kube-root-ca.crt'))!.data.v, '3', 'after the pass, reads are fresh again');
});
