import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from './informer.js';
import { KubeClient } from './client.js';

// A faked apiserver whose list is slow: stop() lands while the informer is listing.
test('stop() during a list does not leave a watch running', async () => {
  let watches = 0;
  const client = new KubeClient({ server: 'https://127.0.0.1:1' });
  (client as unknown as { get: () => Promise<object> }).get = () => new Promise((r) => setTimeout(() => r({ items: [], metadata: { resourceVersion: '5' } }), 200));
  (client as unknown as { watch: () => AsyncGenerator<never> }).watch = async function* () {
    watches++;
    await new Promise((r) => setTimeout(r, 60_000));
  };
  const inf = new Informer(client, { path: '/api/v1/pods' });
  const started = inf.start();
  await new Promise((r) => setTimeout(r, 50));
  const t0 = Date.now();
  await inf.stop();
  await started;
  assert.ok(Date.now() - t0 < 1000, 'stop returned promptly');
  assert.equal(watches, 0, 'no watch was opened after stop');
  client.close();
});
