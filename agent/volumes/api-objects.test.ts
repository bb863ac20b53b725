import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiObjects } from './api-objects.js';
import { KubeApiError, type KubeApi, type KObj } from '../../kube/client.js';

test('ConfigMaps and Secrets: the last copy read serves while the apiserver is away; a 404 forgets it (issue 16)', async () => {
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
