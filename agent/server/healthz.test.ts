import assert from 'node:assert/strict';
import { test } from 'node:test';

import { alwaysOk, healthz, syncLoopCheck } from './healthz.js';

test('healthz: "ok" when all pass, a 500 naming the failed check (reason withheld) when one fails, and single checks by path', () => {
  let entered = Date.now();
  const checks = [alwaysOk('ping'), alwaysOk('log'), syncLoopCheck(() => entered, 60_000)];
  assert.deepEqual(healthz(checks, '/healthz', false), { code: 200, body: 'ok', failures: [] });
  assert.equal(
    healthz(checks, '/healthz', true)!.body,
    '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n',
  );
  // syncFrequency 1m: the limit is max(2 × 1m, 5m) = 5m.
  entered = Date.now() - 4 * 60_000;
  assert.equal(healthz(checks, '/healthz', false)!.code, 200, 'four minutes is within the limit');
  entered = Date.now() - 5 * 60_000 - 1000;
  assert.deepEqual(healthz(checks, '/healthz', false), {
    code: 500,
    body: '[+]ping ok\n[+]log ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n',
    failures: ['syncloop: sync Loop took longer than expected'],
  });
  assert.deepEqual(healthz(checks, '/healthz/syncloop', false), {
    code: 500,
    body: 'internal server error: sync Loop took longer than expected\n',
    failures: ['syncloop: sync Loop took longer than expected'],
  });
  assert.deepEqual(healthz(checks, '/healthz/ping', false), { code: 200, body: 'ok', failures: [] });
  assert.equal(healthz(checks, '/healthz/nope', false), undefined);
  // A long syncFrequency stretches the limit; a loop that never ran is not stuck.
  assert.equal(syncLoopCheck(() => Date.now() - 7 * 60_000, 4 * 60_000).check(), undefined);
  assert.equal(syncLoopCheck(() => 0, 60_000).check(), undefined);
});
