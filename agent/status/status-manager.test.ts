import assert from 'node:assert/strict';
import { mock, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { type KubeApi, KubeApiError } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import { StatusManager } from './status-manager.js';

const quiet: Logger = { info() {}, warn() {}, error() {}, debug() {} };

const pod = (qosClass?: string): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { containers: [{ name: 'c', image: 'i' }] },
  status: { phase: 'Pending', ...(qosClass ? { qosClass } : {}) },
});

/** Lets the manager's promise chains run (the fake client answers at once). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

test('a refused status is retried after a doubling wait, not at once; the next success resets the wait', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const bodies: unknown[] = [];
    let refuse = true;
    const client = {
      patch: async (_path: string, body: unknown) => {
        bodies.push(body);
        if (refuse) throw new KubeApiError(422, 'Invalid', 'Pod "p" is invalid: status.qosClass: field is immutable');
        return {};
      },
    } as unknown as KubeApi;
    const warnings: string[] = [];
    const sm = new StatusManager(client, { ...quiet, warn: (m) => warnings.push(m) }, '192.0.2.2');
    sm.update(pod(), { uid: 'u1', sandboxes: [], containers: [] }, new Map());
    await settle();
    assert.equal(bodies.length, 1, 'one attempt, no retry loop');
    mock.timers.tick(1999);
    await settle();
    assert.equal(bodies.length, 1);
    mock.timers.tick(1);
    await settle();
    assert.equal(bodies.length, 2, 'retried after 2 s');
    mock.timers.tick(3999);
    await settle();
    assert.equal(bodies.length, 2, 'then after 4 s');
    mock.timers.tick(1);
    await settle();
    assert.equal(bodies.length, 3);
    assert.match(warnings[0]!, /status update for pod ns\/p failed, will retry in 2 s: Pod "p" is invalid/);
    assert.match(warnings[1]!, /will retry in 4 s/);
    refuse = false;
    mock.timers.tick(8000);
    await settle();
    assert.equal(bodies.length, 4);
    assert.equal(sm.patches, 1);
  } finally {
    mock.timers.reset();
  }
});

test('the status keeps the qosClass the apiserver stored (it is immutable), computing one only when unset', async () => {
  const sent: { status: { qosClass?: string } }[] = [];
  const client = {
    patch: async (_path: string, body: { status: { qosClass?: string } }) => {
      sent.push(body);
      return {};
    },
  } as unknown as KubeApi;
  const sm = new StatusManager(client, quiet, '192.0.2.2');
  sm.update(pod('Burstable'), { uid: 'u1', sandboxes: [], containers: [] }, new Map());
  await settle();
  assert.equal(sent[0]!.status.qosClass, 'Burstable', 'no container resources, but the stored class is kept');
  sm.forget('u1');
  sm.update(pod(), { uid: 'u1', sandboxes: [], containers: [] }, new Map());
  await settle();
  assert.equal(sent[1]!.status.qosClass, 'BestEffort');
});

test('updateAndWait resolves once the status is written, and at once when there is nothing to write', async () => {
  let release!: () => void;
  const written: unknown[] = [];
  const client = {
    patch: (_path: string, body: unknown) =>
      new Promise((resolve) => {
        release = () => {
          written.push(body);
          resolve({});
        };
      }),
  } as unknown as KubeApi;
  const sm = new StatusManager(client, quiet, '192.0.2.2');
  let done = false;
  const waiting = sm
    .updateAndWait(pod(), { uid: 'u1', sandboxes: [], containers: [] }, new Map())
    .then(() => (done = true));
  await settle();
  assert.equal(done, false, 'the PATCH is still in flight');
  release();
  await waiting;
  assert.equal(written.length, 1);
  await sm.updateAndWait(pod(), { uid: 'u1', sandboxes: [], containers: [] }, new Map());
  assert.equal(written.length, 1, 'unchanged: nothing written, no wait');
});
