import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { evict } from '../api/eviction.js';
import { LocalClient } from '../api/local-client.js';
import type { Obj } from '../storage/store.js';
import { Store } from '../storage/store.js';
import { DisruptionController } from './disruption-controller.js';
import { budget, scaledValue } from './disruption-model.js';

const healthy = (name: string): KObj => ({
  metadata: { name },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

test("PDB arithmetic: minAvailable as a count of matching pods, percentages and maxUnavailable of the controllers' scale", () => {
  assert.equal(scaledValue('50%', 3), 2);
  const pods = [healthy('a'), healthy('b'), { metadata: { name: 'c' }, status: { phase: 'Running', conditions: [] } }];
  assert.deepEqual(budget({ pdb: { spec: { minAvailable: 1 } }, pods, controllerScale: undefined, disrupted: {} }), {
    expectedPods: 3,
    desiredHealthy: 1,
    currentHealthy: 2,
    disruptionsAllowed: 1,
  });
  assert.deepEqual(budget({ pdb: { spec: { maxUnavailable: '34%' } }, pods, controllerScale: 3, disrupted: {} }), {
    expectedPods: 3,
    desiredHealthy: 1,
    currentHealthy: 2,
    disruptionsAllowed: 1,
  });
  assert.deepEqual(
    budget({ pdb: { spec: { minAvailable: 2 } }, pods, controllerScale: 3, disrupted: { a: 'x' } }),
    { expectedPods: 3, desiredHealthy: 2, currentHealthy: 1, disruptionsAllowed: 0 },
    'an evicted pod no longer counts',
  );
  assert.deepEqual(budget({ pdb: { spec: { maxUnavailable: 1 } }, pods, controllerScale: undefined, disrupted: {} }), {
    error: 'found no controllers for some pods',
  });
});

test("eviction honours the budget: allowed evictions decrement it and record the pod; then 429 with upstream's message; pods without a budget just go", async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const dc = new DisruptionController(client, memoryLogger());
  await dc.start();
  try {
    const pods = api.res('', 'pods');
    for (const n of ['w1', 'w2', 'w3']) {
      api.create(pods, 'default', {
        metadata: { name: n, labels: { app: 'web' } },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
      });
      const p = api.get(pods, 'default', n);
      api.update(
        pods,
        'default',
        n,
        { ...p, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
        'status',
      );
    }
    api.create(pods, 'default', {
      metadata: { name: 'lone' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
    });
    await client.create('/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      metadata: { name: 'web' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    });
    const pdb = await waitFor(
      async () => {
        const b = await client.get('/apis/policy/v1/namespaces/default/poddisruptionbudgets/web');
        return b.status?.observedGeneration === 1 ? b : undefined;
      },
      5000,
      20,
    );
    assert.deepEqual(
      [pdb.status.expectedPods, pdb.status.desiredHealthy, pdb.status.currentHealthy, pdb.status.disruptionsAllowed],
      [3, 2, 3, 1],
    );
    assert.equal(pdb.status.conditions[0].reason, 'SufficientPods');
    evict(api, 'default', 'w1', {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'w1', namespace: 'default' },
    });
    assert.ok(api.get(pods, 'default', 'w1').metadata.deletionTimestamp, 'w1 is being deleted');
    const disruption = (api.get(pods, 'default', 'w1').status.conditions as Obj[]).find(
      (c) => c.type === 'DisruptionTarget',
    );
    assert.deepEqual([disruption?.status, disruption?.reason], ['True', 'EvictionByEvictionAPI']);
    const after = api.get(api.res('policy', 'poddisruptionbudgets'), 'default', 'web');
    assert.equal(after.status.disruptionsAllowed, 0);
    assert.ok(after.status.disruptedPods.w1);
    assert.throws(
      () => evict(api, 'default', 'w2', {}),
      (e: unknown) =>
        e instanceof ApiError &&
        e.code === 429 &&
        e.message === "Cannot evict pod as it would violate the pod's disruption budget." &&
        /^The disruption budget web needs 2 healthy pods and has [23] currently$/.test(
          e.details?.causes?.[0]?.message ?? '',
        ),
    );
    evict(api, 'default', 'lone', {});
    assert.ok(api.get(pods, 'default', 'lone').metadata.deletionTimestamp, 'no budget: deleted');
  } finally {
    await dc.stop();
  }
});
