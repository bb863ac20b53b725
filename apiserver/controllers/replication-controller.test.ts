// ReplicationControllers: served with their defaults and scale subresource, kept by the replica controller, which
// releases pods that stop matching and reports a quota refusal as the ReplicaFailure condition.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { getScale } from '../api/scale.js';
import { Store } from '../storage/store.js';
import { replicaFailure, ReplicaSetController, REPLICATION_CONTROLLER } from './replicaset-controller.js';

const RC = '/api/v1/namespaces/default/replicationcontrollers';
const PODS = '/api/v1/namespaces/default/pods';

async function cluster() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const rcc = new ReplicaSetController(
    client,
    log,
    new ApiEventRecorder(client, { component: 'replication-controller' }, log),
    REPLICATION_CONTROLLER,
  );
  await rcc.start();
  return { api, client, stop: () => rcc.stop() };
}

const live = async (client: LocalClient, sel: string): Promise<KObj[]> =>
  ((await client.get(PODS, { labelSelector: sel })).items as KObj[]).filter((p) => !p.metadata.deletionTimestamp);

test('a ReplicationController is defaulted from its template, keeps its replicas and scales', async () => {
  const c = await cluster();
  try {
    const rc = await c.client.create(RC, {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    assert.deepEqual(rc.spec.selector, { app: 'web' }, 'selector defaulted to the template labels');
    assert.deepEqual(rc.metadata.labels, { app: 'web' });
    await waitFor(async () => (await live(c.client, 'app=web')).length === 2, 3000, 20, '2 pods');
    const pod = (await live(c.client, 'app=web'))[0]!;
    assert.deepEqual(
      [pod.metadata.ownerReferences[0].kind, pod.metadata.ownerReferences[0].apiVersion],
      ['ReplicationController', 'v1'],
    );
    await waitFor(async () => (await c.client.get(`${RC}/web`)).status?.replicas === 2, 3000, 20, 'status');
    const scale = getScale(c.api, c.api.res('', 'replicationcontrollers'), 'default', 'web');
    assert.deepEqual(scale.status, { replicas: 2, selector: 'app=web' });

    // A pod relabelled out of the selector is released and replaced.
    await c.client.patch(`${PODS}/${pod.metadata.name}`, { metadata: { labels: { app: 'gone' } } }, 'merge');
    await waitFor(
      async () => !(await c.client.get(`${PODS}/${pod.metadata.name}`)).metadata.ownerReferences?.length,
      3000,
      20,
      'released',
    );
    await waitFor(async () => (await live(c.client, 'app=web')).length === 2, 3000, 20, 'replaced');
  } finally {
    await c.stop();
  }
});

test('an RC without a selector or template labels is invalid', async () => {
  const c = await cluster();
  try {
    await assert.rejects(
      c.client.create(RC, { metadata: { name: 'bad' }, spec: { template: { spec: { containers: [] } } } }),
      /spec.selector: Required value/,
    );
  } finally {
    await c.stop();
  }
});

test('a quota that refuses pods sets ReplicaFailure, and scaling within it removes it', async () => {
  const c = await cluster();
  try {
    await c.client.create('/api/v1/namespaces/default/resourcequotas', {
      metadata: { name: 'q' },
      spec: { hard: { pods: '1' } },
    });
    await c.client.create(RC, {
      metadata: { name: 'q' },
      spec: {
        replicas: 2,
        template: { metadata: { labels: { app: 'q' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    const failure = async (): Promise<KObj | undefined> =>
      ((await c.client.get(`${RC}/q`)).status?.conditions as KObj[] | undefined)?.find(
        (x) => x.type === 'ReplicaFailure',
      );
    await waitFor(async () => (await failure())?.status === 'True', 8000, 50, 'ReplicaFailure');
    assert.equal((await failure())?.reason, 'FailedCreate');
    await c.client.patch(`${RC}/q`, { spec: { replicas: 1 } }, 'merge');
    await waitFor(async () => (await failure()) === undefined, 8000, 50, 'ReplicaFailure removed');
  } finally {
    await c.stop();
  }
});

test('replicaFailure keeps the condition as first set while creation still fails', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const first = replicaFailure(undefined, 'exceeded quota', t0);
  assert.deepEqual(first, [
    {
      type: 'ReplicaFailure',
      status: 'True',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'FailedCreate',
      message: 'exceeded quota',
    },
  ]);
  assert.deepEqual(replicaFailure(first, 'pods "x-2" is forbidden', new Date('2026-01-02T00:00:00Z')), first);
  assert.deepEqual(replicaFailure(first, undefined), []);
});
