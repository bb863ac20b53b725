import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { newRevision } from './controller-history.js';
import { GarbageCollector } from './garbage-collector.js';
import { StatefulSetController } from './statefulset-controller.js';
import { claimsFor, ordinalOf, planStatefulSet, statefulPod } from './statefulset-model.js';

const STS = '/apis/apps/v1/namespaces/default/statefulsets';
const PODS = '/api/v1/namespaces/default/pods';
const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';

const set = (spec: KObj = {}): KObj => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'default', uid: 'u1', generation: 1 },
  spec: {
    replicas: 3,
    serviceName: 'nginx',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    volumeClaimTemplates: [
      {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ],
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
    ...spec,
  },
});
const ago = new Date(Date.now() - 60_000).toISOString();
const pod = (ordinal: number, rev: string, state: 'ready' | 'pending' | 'failed' = 'ready'): KObj => ({
  metadata: { name: `web-${ordinal}`, labels: { 'controller-revision-hash': rev } },
  status:
    state === 'ready'
      ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: ago }] }
      : { phase: state === 'failed' ? 'Failed' : 'Pending' },
});

test('StatefulSet model: identity and claims per ordinal, ordered start, scale down from the top, rolling update with a partition', () => {
  const s = set();
  const rev = newRevision(s, s.spec.template, 1, 0);
  const p = statefulPod(s, 2, rev);
  assert.equal(p.metadata.name, 'web-2');
  assert.deepEqual([p.spec.hostname, p.spec.subdomain], ['web-2', 'nginx']);
  assert.deepEqual(p.spec.volumes, [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-2' } }]);
  assert.deepEqual(p.metadata.labels, {
    app: 'web',
    'statefulset.kubernetes.io/pod-name': 'web-2',
    'apps.kubernetes.io/pod-index': '2',
    'controller-revision-hash': rev.metadata.name,
  });
  assert.deepEqual(claimsFor(s, 0)[0]!.metadata, { name: 'data-web-0', namespace: 'default', labels: { app: 'web' } });
  assert.equal(ordinalOf(s, { metadata: { name: 'web-10' } }), 10);
  assert.equal(ordinalOf(s, { metadata: { name: 'webby-1' } }), -1);

  assert.deepEqual(
    planStatefulSet(s, [], 'r1', 'r1').create,
    [{ ordinal: 0, revision: 'update' }],
    'OrderedReady: one at a time',
  );
  assert.deepEqual(
    planStatefulSet(s, [pod(0, 'r1', 'pending')], 'r1', 'r1').create,
    [],
    'waits for web-0 to be Running and Ready',
  );
  assert.deepEqual(planStatefulSet(s, [pod(0, 'r1')], 'r1', 'r1').create, [{ ordinal: 1, revision: 'update' }]);
  assert.deepEqual(
    planStatefulSet(set({ podManagementPolicy: 'Parallel' }), [], 'r1', 'r1').create.map((c) => c.ordinal),
    [0, 1, 2],
  );
  const three = [pod(0, 'r1'), pod(1, 'r1'), pod(2, 'r1'), pod(3, 'r1'), pod(4, 'r1')];
  assert.deepEqual(
    planStatefulSet(s, three, 'r1', 'r1').delete,
    [{ name: 'web-4', why: 'condemned' }],
    'the highest ordinal goes first, alone',
  );
  assert.deepEqual(planStatefulSet(s, [pod(0, 'r1', 'failed')], 'r1', 'r1').delete, [{ name: 'web-0', why: 'failed' }]);

  const up = planStatefulSet(s, [pod(0, 'r1'), pod(1, 'r1'), pod(2, 'r1')], 'r1', 'r2');
  assert.deepEqual(up.delete, [{ name: 'web-2', why: 'update' }], 'rolling update from the top');
  assert.deepEqual(
    [up.status.currentRevision, up.status.updateRevision, up.status.currentReplicas, up.status.updatedReplicas],
    ['r1', 'r2', 3, undefined],
  );
  assert.deepEqual(
    planStatefulSet(s, [pod(0, 'r1'), pod(1, 'r1'), pod(2, 'r2', 'pending')], 'r1', 'r2').delete,
    [],
    'waits for web-2 to be healthy',
  );
  assert.deepEqual(planStatefulSet(s, [pod(0, 'r1'), pod(1, 'r1'), pod(2, 'r2')], 'r1', 'r2').delete, [
    { name: 'web-1', why: 'update' },
  ]);
  const part = set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } });
  assert.deepEqual(
    planStatefulSet(part, [pod(0, 'r1'), pod(1, 'r1'), pod(2, 'r2')], 'r1', 'r2').delete,
    [],
    'ordinals below the partition stay',
  );
  assert.deepEqual(
    planStatefulSet(part, [pod(0, 'r1'), pod(2, 'r2')], 'r1', 'r2').create,
    [{ ordinal: 1, revision: 'current' }],
    'and are made again at the current revision',
  );
  const done = planStatefulSet(s, [pod(0, 'r2'), pod(1, 'r2'), pod(2, 'r2')], 'r1', 'r2').status;
  assert.deepEqual(
    [done.currentRevision, done.currentReplicas, done.updatedReplicas, done.readyReplicas],
    ['r2', 3, 3, 3],
    'rollout complete: current becomes update',
  );
  assert.deepEqual(
    planStatefulSet(
      set({ updateStrategy: { type: 'OnDelete' } }),
      [pod(0, 'r1'), pod(1, 'r1'), pod(2, 'r1')],
      'r1',
      'r2',
    ).delete,
    [],
    'OnDelete',
  );
});

async function cluster() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const c = new StatefulSetController(
    client,
    log,
    new ApiEventRecorder(client, { component: 'statefulset-controller' }, log),
  );
  const gc = new GarbageCollector(client, log, 60_000);
  await Promise.all([c.start(), gc.start()]);
  return { client, stop: () => Promise.all([c.stop(), gc.stop()]) };
}

const names = async (client: LocalClient): Promise<string[]> =>
  ((await client.get(PODS, { labelSelector: 'app=web' })).items as KObj[]).map((p) => p.metadata.name).sort();
async function readyAll(client: LocalClient): Promise<void> {
  for (const p of (await client.get(PODS, { labelSelector: 'app=web' })).items as KObj[]) {
    if (p.status?.phase === 'Running') continue;
    await client.update(`${PODS}/${p.metadata.name}/status`, {
      ...p,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
      },
    });
  }
}

test('StatefulSet controller against the dev apiserver: ordered creation with claims, scale down, rolling update, whenDeleted Delete', async () => {
  const { client, stop } = await cluster();
  try {
    const { metadata: _m, ...body } = set({
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    await client.create(STS, { ...body, metadata: { name: 'web' } });
    await waitFor(async () => (await names(client)).length === 1, 5000, 20, 'web-0');
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(await names(client), ['web-0'], 'web-1 waits for web-0');
    for (let i = 0; i < 3; i++) {
      await waitFor(async () => (await names(client)).length === i + 1, 5000, 20, `web-${i}`);
      await readyAll(client);
    }
    assert.deepEqual(await names(client), ['web-0', 'web-1', 'web-2']);
    const claims = ((await client.get(PVCS)).items as KObj[]).map((c) => c.metadata.name).sort();
    assert.deepEqual(claims, ['data-web-0', 'data-web-1', 'data-web-2']);
    await waitFor(async () => (await client.get(`${STS}/web`)).status?.readyReplicas === 3, 5000, 20, 'ready 3');
    const st = (await client.get(`${STS}/web`)).status;
    assert.equal(st.currentRevision, st.updateRevision);

    await client.patch(`${STS}/web`, { spec: { replicas: 2 } }, 'merge');
    await waitFor(async () => (await names(client)).join() === 'web-0,web-1', 5000, 20, 'scaled to 2');
    assert.equal(((await client.get(PVCS)).items as KObj[]).length, 3, 'whenScaled Retain keeps data-web-2');

    await client.patch(
      `${STS}/web`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'i2' }] } } } },
      'strategic',
    );
    const image = async (n: string): Promise<string | undefined> =>
      (await client.get(`${PODS}/${n}`).catch(() => undefined))?.spec?.containers?.[0]?.image;
    await waitFor(async () => (await image('web-1')) === 'i2', 5000, 20, 'web-1 updated first');
    assert.equal(await image('web-0'), 'i', 'web-0 waits for web-1');
    await readyAll(client);
    await waitFor(async () => (await image('web-0')) === 'i2', 5000, 20, 'web-0 updated');
    await readyAll(client);
    await waitFor(
      async () => {
        const s = (await client.get(`${STS}/web`)).status;
        return s.currentRevision === s.updateRevision && s.updatedReplicas === 2;
      },
      5000,
      20,
      'rollout complete',
    );

    await client.delete(`${STS}/web`);
    await waitFor(
      async () => ((await client.get(PVCS)).items as KObj[]).length === 0,
      10_000,
      50,
      'claims go with the set (whenDeleted Delete)',
    );
  } finally {
    await stop();
  }
});
