import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { RetryingQueue } from './key-queue.js';

test('RetryingQueue.later keeps one timer per key, the earliest, and never fires an over-long delay at once', async () => {
  const synced: string[] = [];
  const q = new RetryingQueue('t', { warn: () => undefined }, async (k) => void synced.push(k));
  try {
    q.later('a', 2 ** 40);
    q.later('b', 300);
    q.later('b', 30);
    q.later('b', 200);
    await sleep(120);
    assert.deepEqual(synced, ['b'], 'b once, at the earliest time; a not yet');
    await sleep(350);
    assert.deepEqual(synced, ['b'], 'the later timers for b were dropped');
  } finally {
    q.stop();
  }
});
