import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SyncRunner } from './sync-runner.js';

test('bursts of requests coalesce; after the burst, syncs are at least minSyncPeriod apart', async () => {
  const at: number[] = [];
  const r = new SyncRunner(
    async () => {
      at.push(Date.now());
      await new Promise((res) => setTimeout(res, 5));
    },
    200,
    2,
  );
  for (let i = 0; i < 50; i++) r.run();
  await new Promise((res) => setTimeout(res, 50));
  assert.equal(at.length, 1, 'fifty requests at once: one sync');
  r.run();
  await new Promise((res) => setTimeout(res, 20));
  r.run();
  await new Promise((res) => setTimeout(res, 20));
  r.run();
  await new Promise((res) => setTimeout(res, 700));
  r.stop();
  assert.ok(at.length >= 3 && at.length <= 4, `syncs: ${at.length}`);
  // A token bucket: two back to back, then one per 200 ms.
  for (let i = 2; i < at.length; i++)
    assert.ok(
      at[i]! - at[i - 2]! >= 190,
      `no three syncs within one minSyncPeriod: ${at.map((t) => t - at[0]!).join(',')}`,
    );
});

test('a request with tokens left runs at the next turn of the event loop, not after a timer', async () => {
  let calls = 0;
  const r = new SyncRunner(
    async () => {
      calls++;
    },
    1000,
    2,
  );
  r.run();
  await new Promise((res) => setImmediate(res));
  assert.equal(calls, 1, 'the sync ran before the immediate queued after the request');
  r.stop();
});
