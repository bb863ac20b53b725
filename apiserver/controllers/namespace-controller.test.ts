import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type KObj, KubeApiError } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { deletionConditions, NamespaceController } from './namespace-controller.js';

test('deletion conditions name what remains, as upstream', () => {
  const c = deletionConditions(
    new Map([
      ['pods', 2],
      ['configmaps', 1],
    ]),
    new Map([['batch.kubernetes.io/job-tracking', 1]]),
    'T',
  );
  assert.deepEqual(
    c.find((x) => x.type === 'NamespaceContentRemaining'),
    {
      type: 'NamespaceContentRemaining',
      status: 'True',
      lastTransitionTime: 'T',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps has 1 resource instances, pods has 2 resource instances',
    },
  );
  assert.equal(
    c.find((x) => x.type === 'NamespaceFinalizersRemaining')!.message,
    'Some content in the namespace has finalizers remaining: batch.kubernetes.io/job-tracking in 1 resource instances',
  );
  assert.equal(
    deletionConditions(new Map(), new Map(), 'T').find((x) => x.type === 'NamespaceContentRemaining')!.reason,
    'ContentRemoved',
  );
});

test('the namespace controller empties a Terminating namespace, waits for content with finalizers, then finalizes it', async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const nc = new NamespaceController(client, memoryLogger());
  await nc.start();
  try {
    await client.create('/api/v1/namespaces', { metadata: { name: 'team' } });
    await client.create('/api/v1/namespaces/team/configmaps', { metadata: { name: 'cm' }, data: { a: 'b' } });
    await client.create('/api/v1/namespaces/team/configmaps', {
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
    });
    await client.delete('/api/v1/namespaces/team');
    const ns = await waitFor(
      async () => {
        const n = await client.get('/api/v1/namespaces/team');
        return n.status.conditions?.find((c: KObj) => c.type === 'NamespaceFinalizersRemaining' && c.status === 'True')
          ? n
          : undefined;
      },
      5000,
      20,
    );
    assert.equal(ns.status.phase, 'Terminating');
    assert.equal(
      (await client.get('/api/v1/namespaces/team/configmaps')).items.length,
      1,
      'only the one with a finalizer is left',
    );
    await client.patch('/api/v1/namespaces/team/configmaps/held', { metadata: { finalizers: null } }, 'merge');
    await waitFor(
      async () =>
        client.get('/api/v1/namespaces/team').then(
          () => false,
          (e) => e instanceof KubeApiError && e.code === 404,
        ),
      5000,
      20,
    );
  } finally {
    await nc.stop();
  }
});

test('pods go first: the rest of a namespace is deleted only once no pod is left (OrderedNamespaceDeletion)', async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const nc = new NamespaceController(client, memoryLogger());
  await nc.start();
  try {
    await client.create('/api/v1/namespaces', { metadata: { name: 'ordered' } });
    await client.create('/api/v1/namespaces/ordered/configmaps', { metadata: { name: 'cm' }, data: { a: 'b' } });
    await client.create('/api/v1/namespaces/ordered/pods', {
      metadata: { name: 'p', finalizers: ['example.com/hold'] },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    await client.delete('/api/v1/namespaces/ordered');
    await waitFor(
      async () => !!(await client.get('/api/v1/namespaces/ordered/pods/p')).metadata.deletionTimestamp,
      5000,
      20,
      'the pod is being deleted',
    );
    assert.equal((await client.get('/api/v1/namespaces/ordered/configmaps/cm')).metadata.name, 'cm', 'kept meanwhile');
    await client.patch('/api/v1/namespaces/ordered/pods/p', { metadata: { finalizers: null } }, 'merge');
    await waitFor(
      async () =>
        client.get('/api/v1/namespaces/ordered').then(
          () => false,
          (e) => e instanceof KubeApiError && e.code === 404,
        ),
      5000,
      20,
      'the namespace is gone',
    );
  } finally {
    await nc.stop();
  }
});
