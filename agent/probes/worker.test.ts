import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type ProbeResult, type ProbeType, validateProbe, withDefaults } from './types.js';
import { type ContainerView, ProbeWorker } from './worker.js';

function harness(type: ProbeType, probe: Record<string, unknown> = {}) {
  let now = 1_000_000;
  let view: ContainerView | undefined = {
    pod: { metadata: { name: 'p', namespace: 'd', uid: 'u' } },
    container: { name: 'c' },
    id: 'c1',
    running: true,
    startedAt: now,
    podIP: '10.0.0.2',
    started: true,
  };
  const outcomes: ProbeResult[] = [];
  const sets: string[] = [];
  let runs = 0;
  const w = new ProbeWorker(type, withDefaults({ exec: { command: ['x'] }, ...probe }), {
    view: () => view,
    run: async () => {
      runs++;
      return { result: outcomes.shift() ?? 'success', output: '' };
    },
    set: (id, r) => sets.push(`${id}=${r}`),
    observed: () => {},
    now: () => now,
  });
  return {
    w,
    sets,
    outcomes,
    runs: () => runs,
    advance: (ms: number) => (now += ms),
    setView: (v: Partial<ContainerView> | undefined) => (view = v ? { ...view!, ...v } : undefined),
  };
}

test('readiness starts not ready, needs successThreshold successes, and failureThreshold failures to drop', async () => {
  const h = harness('Readiness', { successThreshold: 2, failureThreshold: 2 });
  h.outcomes.push('success', 'success', 'failure', 'success', 'failure', 'failure');
  await h.w.probe();
  assert.deepEqual(h.sets, ['c1=failure'], 'initial value only: one success is below the threshold');
  await h.w.probe();
  assert.deepEqual(h.sets, ['c1=failure', 'c1=success']);
  await h.w.probe(); // failure 1
  await h.w.probe(); // success: the failure run is broken
  await h.w.probe(); // failure 1
  assert.equal(h.sets.length, 2);
  await h.w.probe(); // failure 2
  assert.deepEqual(h.sets.slice(2), ['c1=failure']);
});

test('initialDelaySeconds holds the first probe; a startup probe gates liveness; a new container resets', async () => {
  const h = harness('Liveness', { initialDelaySeconds: 5, failureThreshold: 1 });
  await h.w.probe();
  assert.equal(h.runs(), 0, 'within the initial delay');
  assert.deepEqual(h.sets, ['c1=success'], 'liveness starts as success');
  h.advance(5000);
  h.setView({ started: false });
  await h.w.probe();
  assert.equal(h.runs(), 0, 'startup probe not done yet');
  h.setView({ started: true });
  h.outcomes.push('failure');
  await h.w.probe();
  assert.deepEqual(h.sets, ['c1=success', 'c1=failure']);
  await h.w.probe();
  assert.equal(h.runs(), 1, 'on hold after a liveness failure until the container is replaced');
  h.setView({ id: 'c2', startedAt: 1_000_000 + 5000 });
  await h.w.probe();
  assert.equal(h.runs(), 1, 'the new container gets its own initial delay');
  assert.deepEqual(h.sets.slice(2), ['c2=success']);
  h.advance(5000);
  await h.w.probe();
  assert.equal(h.runs(), 2);
});

test('a startup probe stops once the container has started; a stopped container is not ready', async () => {
  const s = harness('Startup', { failureThreshold: 1 });
  s.setView({ started: true });
  await s.w.probe();
  assert.equal(s.runs(), 0);
  const r = harness('Readiness');
  await r.w.probe();
  await r.w.probe();
  assert.deepEqual(r.sets, ['c1=failure', 'c1=success']);
  r.setView({ running: false });
  await r.w.probe();
  assert.deepEqual(r.sets.slice(2), ['c1=failure']);
});

test('probe validation: one handler, thresholds, successThreshold 1 for liveness, no grace period on readiness', () => {
  assert.deepEqual(validateProbe({}, 'Liveness', 'p'), ['p: Required value: must specify a handler type']);
  assert.deepEqual(validateProbe({ exec: { command: ['a'] }, tcpSocket: { port: 1 } }, 'Liveness', 'p'), [
    'p.tcpSocket: Forbidden: may not specify more than 1 handler type',
  ]);
  assert.deepEqual(validateProbe({ exec: { command: ['a'] }, successThreshold: 2 }, 'Liveness', 'p'), [
    'p.successThreshold: Invalid value: 2: must be 1',
  ]);
  assert.deepEqual(validateProbe({ exec: { command: ['a'] }, successThreshold: 2 }, 'Readiness', 'p'), []);
  assert.deepEqual(validateProbe({ exec: { command: ['a'] }, terminationGracePeriodSeconds: 5 }, 'Readiness', 'p'), [
    'p.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes',
  ]);
  assert.deepEqual(withDefaults({ exec: { command: ['a'] } }), {
    exec: { command: ['a'] },
    initialDelaySeconds: 0,
    periodSeconds: 10,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 3,
  });
});

test('readiness probes at once when the startup probe lets it, not a period later', async () => {
  const h = harness('Readiness', { periodSeconds: 30 });
  h.setView({ started: false });
  await h.w.probe();
  assert.equal(h.runs(), 0, 'gated by the startup probe');
  h.w.poke();
  await new Promise((r) => setImmediate(r));
  assert.equal(h.runs(), 0, 'a poke while still gated does nothing');
  h.setView({ started: true });
  h.w.poke();
  await new Promise((r) => setImmediate(r));
  assert.equal(h.runs(), 1, 'the startup probe succeeded: probed now');
  assert.deepEqual(h.sets, ['c1=failure', 'c1=success']);
  h.w.poke();
  await new Promise((r) => setImmediate(r));
  assert.equal(h.runs(), 1, 'nothing new to learn: the schedule goes on');
});
