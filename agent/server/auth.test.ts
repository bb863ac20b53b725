import assert from 'node:assert/strict';
import { test } from 'node:test';

import { KubeApiError } from '../../kube/client.js';
import { withWebhookRetry } from './auth.js';

const failing = (errors: unknown[]) => {
  let calls = 0;
  return {
    call: async () => {
      const e = errors[calls++];
      if (e) throw e;
      return 'ok';
    },
    calls: () => calls,
  };
};

test("a review that fails on a closed connection (a rotated client certificate) or a 5xx is retried with upstream's growing backoff", async () => {
  const slept: number[] = [];
  const sleep = async (ms: number) => void slept.push(ms);
  const f = failing([
    Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    new KubeApiError(503, 'ServiceUnavailable', 'unavailable'),
  ]);
  assert.equal(await withWebhookRetry(f.call, sleep), 'ok');
  assert.equal(f.calls(), 3);
  assert.equal(slept.length, 2);
  assert.ok(slept[0]! >= 500 && slept[0]! <= 600 && slept[1]! >= 750 && slept[1]! <= 900, String(slept));
});

test('webhook retries stop after 5 attempts, and a refusal (4xx) is never retried', async () => {
  const sleep = async () => undefined;
  const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const always = failing([reset(), reset(), reset(), reset(), reset(), reset()]);
  await assert.rejects(withWebhookRetry(always.call, sleep), /ECONNRESET/);
  assert.equal(always.calls(), 5);
  const forbidden = failing([new KubeApiError(403, 'Forbidden', 'no')]);
  await assert.rejects(withWebhookRetry(forbidden.call, sleep), /no/);
  assert.equal(forbidden.calls(), 1);
});
