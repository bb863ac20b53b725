import assert from 'node:assert/strict';
import { test } from 'node:test';

import { KubeClient } from './client.js';
import { Informer } from './informer.js';

type WatchFake<T> = (path: string, query: unknown, signal: AbortSignal) => AsyncGenerator<T>;

/** Resolves when the informer aborts the watch, as the real client's stream ends then. */
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve())));

// A faked apiserver whose list is slow: stop() lands while the informer is listing.
test('stop() during a list does not leave a watch running', async () => {
  let watches = 0;
  const client = new KubeClient({ server: 'https://127.0.0.1:1' });
  (client as unknown as { get: () => Promise<object> }).get = () =>
    new Promise((r) => setTimeout(() => r({ items: [], metadata: { resourceVersion: '5' } }), 200));
  (client as unknown as { watch: WatchFake<never> }).watch = async function* (_path, _query, signal) {
    watches++;
    await aborted(signal); // a watch that sends nothing until stopped
    yield* [];
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

test('a transform shapes what is cached and handed on, from the list and from the watch', async () => {
  const client = new KubeClient({ server: 'https://127.0.0.1:1' });
  const big = (name: string, rv: string) => ({
    metadata: { name, namespace: 'd', resourceVersion: rv, managedFields: [{ manager: 'x' }] },
    spec: { clusterIP: '10.96.0.5' },
  });
  (client as unknown as { get: () => Promise<object> }).get = async () => ({
    items: [big('a', '1')],
    metadata: { resourceVersion: '1' },
  });
  (client as unknown as { watch: WatchFake<object> }).watch = async function* (_path, _query, signal) {
    yield { type: 'ADDED', object: big('b', '2') };
    await aborted(signal); // then nothing more
  };
  const seen: unknown[] = [];
  const inf = new Informer(client, {
    path: '/api/v1/services',
    transform: (o) => ({
      metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion },
    }),
    onAdd: (o) => seen.push(o),
  });
  await inf.start();
  for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  await inf.stop();
  assert.deepEqual(seen, [
    { metadata: { name: 'a', namespace: 'd', resourceVersion: '1' } },
    { metadata: { name: 'b', namespace: 'd', resourceVersion: '2' } },
  ]);
  assert.deepEqual(
    inf.list().map((o) => Object.keys(o)),
    [['metadata'], ['metadata']],
  );
  client.close();
});
