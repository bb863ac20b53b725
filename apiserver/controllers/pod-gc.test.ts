import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import type { KObj } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { PodGarbageCollector, podGcActions, QUARANTINE_MS } from './pod-gc.js';

const pod = (
  name: string,
  extra: Partial<Pod['spec']> = {},
  meta: Partial<Pod['metadata']> = {},
  phase?: string,
): Pod => ({
  metadata: { name, namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z', ...meta },
  spec: { containers: [{ name: 'c' }], ...extra },
  ...(phase ? { status: { phase } } : {}),
});
const node = (name: string, ready = true, taints: KObj[] = []): KObj => ({
  metadata: { name },
  spec: { taints },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

test('orphaned pods go once their node has been missing for the quarantine; a node coming back clears it', () => {
  const missing = new Map<string, number>();
  const pods = [pod('on-gone', { nodeName: 'gone' }), pod('on-n1', { nodeName: 'n1' })];
  assert.deepEqual(podGcActions(pods, [node('n1')], 0, missing), []);
  assert.deepEqual(podGcActions(pods, [node('n1')], QUARANTINE_MS - 1, missing), []);
  assert.deepEqual(
    podGcActions(pods, [node('n1')], QUARANTINE_MS, missing).map((a) => [a.pod.metadata?.name, a.reason]),
    [['on-gone', 'orphaned']],
  );
  const back = new Map<string, number>();
  podGcActions(pods, [node('n1')], 0, back);
  podGcActions(pods, [node('n1'), node('gone')], 1, back);
  assert.equal(back.size, 0, 'a node seen again is no longer missing');
});

test('unscheduled terminating pods, terminating pods on out-of-service nodes, finished pods over the threshold', () => {
  const now = '2026-01-01T00:00:00Z';
  const pods = [
    pod('unscheduled', {}, { deletionTimestamp: now }),
    pod('unscheduled-live'),
    pod('oos', { nodeName: 'down' }, { deletionTimestamp: now }),
    pod('oos-live', { nodeName: 'down' }),
    pod('old', { nodeName: 'n1' }, { creationTimestamp: '2025-01-01T00:00:00Z' }, 'Succeeded'),
    pod('new', { nodeName: 'n1' }, { creationTimestamp: '2026-06-01T00:00:00Z' }, 'Failed'),
  ];
  const nodes = [node('n1'), node('down', false, [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }])];
  assert.deepEqual(
    podGcActions(pods, nodes, 0, new Map(), 1).map((a) => [a.pod.metadata?.name, a.reason]),
    [
      ['unscheduled', 'unscheduled-terminating'],
      ['oos', 'out-of-service'],
      ['old', 'terminated'],
    ],
  );
});

test('the collector marks an orphaned pod Failed (DisruptionTarget) and deletes it', async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  let now = 0;
  const gc = new PodGarbageCollector(client, memoryLogger(), { periodMs: 3_600_000, now: () => now });
  await client.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'lost' },
    spec: { nodeName: 'gone', containers: [{ name: 'c', image: 'i' }] },
  });
  await gc.start();
  try {
    assert.deepEqual(await gc.gc(), []);
    now = QUARANTINE_MS;
    const done = await gc.gc();
    assert.deepEqual(
      done.map((a) => a.reason),
      ['orphaned'],
    );
    await assert.rejects(client.get('/api/v1/namespaces/default/pods/lost'), /not found/);
  } finally {
    await gc.stop();
  }
});
