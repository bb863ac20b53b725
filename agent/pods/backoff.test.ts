import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Backoff } from './backoff.js';

test('crash-loop backoff: 10s doubling to 300s, reset after 10 min without failures', () => {
  let now = 0;
  const b = new Backoff(10_000, 300_000, () => now);
  const delays = [];
  for (let i = 0; i < 8; i++) delays.push(b.next('k', now));
  assert.deepEqual(delays, [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  now += 600_001; // 2 x max untouched
  assert.equal(b.next('k', now), 10_000);
});

test('in backoff while within the delay since the finish time', () => {
  let now = 100_000;
  const b = new Backoff(10_000, 300_000, () => now);
  assert.equal(b.inBackoffSince('k', now), false, 'no failure recorded yet');
  b.next('k', now);
  assert.equal(b.inBackoffSince('k', now - 1000), true);
  assert.equal(b.remaining('k', now - 1000), 9000);
  now += 9_500;
  assert.equal(b.inBackoffSince('k', 100_000), true);
  now += 600;
  assert.equal(b.inBackoffSince('k', 100_000), false);
  assert.equal(b.inBackoffSinceUpdate('k'), false);
});

test("forgetPrefix drops a pod's entries only", () => {
  const b = new Backoff();
  b.next('u1/a');
  b.next('u2/a');
  b.forgetPrefix('u1/');
  assert.equal(b.get('u1/a'), 0);
  assert.equal(b.get('u2/a'), 10_000);
});
