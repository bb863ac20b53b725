// kubectl get pods columns as upstream's printer computes them (pkg/printers/internalversion printPod).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { podStatus } from './table.js';

const running = { running: { startedAt: '2026-12-03T10:00:00Z' } };

test('plain pods: ready count, the waiting reason of a container, Init:i/n while init containers run', () => {
  const pod = {
    spec: { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'a' }] },
    status: {
      phase: 'Pending',
      initContainerStatuses: [
        { name: 'i1', state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        { name: 'i2', state: running },
      ],
      containerStatuses: [{ name: 'a', state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
  assert.deepEqual(podStatus(pod), { ready: '0/1', status: 'Init:1/2', restarts: '0' });
});

test('native sidecars count among the containers: 2/2 once started and ready; their restarts show after initialization; one not started yet is Init:0/1', () => {
  const spec = { initContainers: [{ name: 'proxy', restartPolicy: 'Always' }], containers: [{ name: 'app' }] };
  const up = {
    spec,
    status: {
      phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }],
      initContainerStatuses: [
        {
          name: 'proxy',
          started: true,
          ready: true,
          restartCount: 1,
          state: running,
          lastState: { terminated: { exitCode: 0, finishedAt: '2026-12-03T10:00:00Z' } },
        },
      ],
      containerStatuses: [{ name: 'app', ready: true, restartCount: 0, state: running }],
    },
  };
  assert.deepEqual(podStatus(up, Date.parse('2026-12-03T10:00:07Z')), {
    ready: '2/2',
    status: 'Running',
    restarts: '1 (7s ago)',
  });
  const starting = {
    spec,
    status: {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'proxy', started: false, ready: false, state: running }],
      containerStatuses: [{ name: 'app', state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
  assert.deepEqual(podStatus(starting), { ready: '0/2', status: 'Init:0/1', restarts: '0' });
});
