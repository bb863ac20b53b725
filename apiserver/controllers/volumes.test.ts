import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { LocalPathProvisioner } from './local-path-provisioner.js';
import { PersistentVolumeBinder } from './persistentvolume-binder.js';
import { Scheduler } from './scheduler.js';
import {
  bestVolume,
  localPathVolume,
  volumeAdmitsNode,
  volumeFits,
  volumeNodeReason,
  volumePreFilter,
} from './volume-binding-model.js';

const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
const PVS = '/api/v1/persistentvolumes';
const PODS = '/api/v1/namespaces/default/pods';

const claim = (name: string, spec: KObj = {}): KObj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', uid: `u-${name}` },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});
const volume = (name: string, size: string, spec: KObj = {}): KObj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name },
  spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` }, ...spec },
});
const node = (name: string): KObj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name } },
  status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '4', memory: '8Gi', pods: '110' } },
});
const onlyOn = (n: string): KObj => ({
  required: {
    nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [n] }] }],
  },
});

test("volume binding model: fit, the smallest volume, pre-binding, node affinity, the scheduler's filters, the local-path volume", () => {
  const c = claim('data', { storageClassName: 'manual' });
  assert.equal(volumeFits(volume('small', '500Mi', { storageClassName: 'manual' }), c), false, 'too small');
  assert.equal(
    volumeFits(volume('rox', '5Gi', { storageClassName: 'manual', accessModes: ['ReadOnlyMany'] }), c),
    false,
    'access modes',
  );
  assert.equal(volumeFits(volume('other', '5Gi', { storageClassName: 'fast' }), c), false, 'class');
  const pvs = [
    volume('big', '10Gi', { storageClassName: 'manual' }),
    volume('mid', '2Gi', { storageClassName: 'manual' }),
    volume('taken', '1Gi', { storageClassName: 'manual', claimRef: { namespace: 'default', name: 'x', uid: 'ux' } }),
  ];
  assert.equal(bestVolume(c, pvs)?.metadata.name, 'mid', 'the smallest that fits, not one claimed by another');
  assert.equal(
    bestVolume(c, [
      ...pvs,
      volume('mine', '50Gi', { storageClassName: 'manual', claimRef: { namespace: 'default', name: 'data' } }),
    ])?.metadata.name,
    'mine',
    'pre-bound to it',
  );
  const a = node('a');
  assert.equal(volumeAdmitsNode(volume('v', '1Gi', { nodeAffinity: onlyOn('a') }), a), true);
  assert.equal(volumeAdmitsNode(volume('v', '1Gi', { nodeAffinity: onlyOn('b') }), a), false);
  const wffc = {
    metadata: { name: 'local-path' },
    provisioner: 'rancher.io/local-path',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
  assert.equal(
    volumePreFilter({ claims: new Map([['gone', undefined]]), classes: new Map(), pvs: [] }),
    'persistentvolumeclaim "gone" not found',
  );
  assert.equal(
    volumePreFilter({ claims: new Map([['data', c]]), classes: new Map(), pvs: [] }),
    'pod has unbound immediate PersistentVolumeClaims',
  );
  const delayed = claim('d', { storageClassName: 'local-path' });
  assert.equal(
    volumePreFilter({ claims: new Map([['d', delayed]]), classes: new Map([['local-path', wffc]]), pvs: [] }),
    undefined,
  );
  const boundToB = claim('b', { volumeName: 'pb' });
  assert.equal(
    volumeNodeReason(
      {
        claims: new Map([['b', boundToB]]),
        classes: new Map(),
        pvs: [volume('pb', '1Gi', { nodeAffinity: onlyOn('b') })],
      },
      a,
    ),
    'node(s) had volume node affinity conflict',
  );
  assert.equal(
    volumeNodeReason(
      {
        claims: new Map([['d', delayed]]),
        classes: new Map([['local-path', { ...wffc, provisioner: 'kubernetes.io/no-provisioner' }]]),
        pvs: [],
      },
      a,
    ),
    "node(s) didn't find available persistent volumes to bind",
  );
  const pv = localPathVolume(
    { ...delayed, metadata: { ...delayed.metadata, resourceVersion: '7' } },
    { ...wffc, reclaimPolicy: 'Delete' },
    'a',
    '/var/lib/tskube/storage/',
  );
  assert.equal(pv.metadata.name, 'pvc-u-d');
  assert.deepEqual(pv.spec.hostPath, { path: '/var/lib/tskube/storage/pvc-u-d_default_d', type: 'DirectoryOrCreate' });
  assert.deepEqual(
    [
      pv.spec.claimRef.name,
      pv.spec.claimRef.uid,
      pv.spec.storageClassName,
      pv.spec.persistentVolumeReclaimPolicy,
      pv.spec.capacity.storage,
    ],
    ['d', 'u-d', 'local-path', 'Delete', '1Gi'],
  );
  assert.equal(volumeAdmitsNode(pv, a), true);
});

async function cluster() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const ev = (component: string) => new ApiEventRecorder(client, { component }, log);
  for (const n of ['a', 'b']) await client.create('/api/v1/nodes', node(n));
  const parts = [
    new PersistentVolumeBinder(client, log, ev('persistentvolume-controller')),
    new LocalPathProvisioner(client, log, ev('rancher.io/local-path'), '/srv/lp'),
    new Scheduler(client, log, ev('default-scheduler'), { retryMs: 300 }),
  ];
  for (const p of parts) await p.start();
  return { client, stop: () => Promise.all(parts.map((p) => p.stop())) };
}

const pod = (name: string, claimName: string): KObj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }] },
});
const events = async (client: LocalClient, name: string): Promise<string> =>
  ((await client.get('/api/v1/namespaces/default/events')).items as KObj[])
    .filter((e) => e.involvedObject.name === name)
    .map((e) => `${e.reason}: ${e.message}`)
    .join('\n');

test('storage against the dev apiserver: the default local-path class, delayed binding through the scheduler, static volumes, reclaim', async () => {
  const { client, stop } = await cluster();
  try {
    const sc = await client.get('/apis/storage.k8s.io/v1/storageclasses/local-path');
    assert.deepEqual(
      [
        sc.provisioner,
        sc.volumeBindingMode,
        sc.reclaimPolicy,
        sc.metadata.annotations['storageclass.kubernetes.io/is-default-class'],
      ],
      ['rancher.io/local-path', 'WaitForFirstConsumer', 'Delete', 'true'],
    );
    const { metadata: _m, ...body } = claim('data');
    const made = await client.create(PVCS, { ...body, metadata: { name: 'data' } });
    assert.equal(made.spec.storageClassName, 'local-path', 'DefaultStorageClass admission');
    await waitFor(
      async () =>
        /WaitForFirstConsumer: waiting for first consumer to be created before binding/.test(
          await events(client, 'data'),
        ),
      3000,
      20,
      'waits for a consumer',
    );
    assert.equal((await client.get(`${PVCS}/data`)).status.phase, 'Pending');

    await client.create(PODS, pod('user', 'data'));
    const bound = await waitFor(
      async () => {
        const p = await client.get(`${PODS}/user`);
        return p.spec.nodeName as string | undefined;
      },
      5000,
      20,
      'the pod bound once its claim is',
    );
    const pvc = await client.get(`${PVCS}/data`);
    assert.equal(pvc.status.phase, 'Bound');
    assert.equal(pvc.metadata.annotations['volume.kubernetes.io/selected-node'], bound);
    assert.equal(pvc.metadata.annotations['volume.kubernetes.io/storage-provisioner'], 'rancher.io/local-path');
    assert.equal(pvc.metadata.annotations['pv.kubernetes.io/bind-completed'], 'yes');
    const pv = await client.get(`${PVS}/${pvc.spec.volumeName}`);
    assert.equal(pv.status.phase, 'Bound');
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values, [bound]);
    assert.match(pv.spec.hostPath.path, /^\/srv\/lp\/pvc-[\w-]+_default_data$/);
    assert.match(await events(client, 'data'), /ProvisioningSucceeded: Successfully provisioned volume pvc-/);

    // A second pod of that claim goes where the volume is.
    await client.create(PODS, pod('again', 'data'));
    await waitFor(async () => (await client.get(`${PODS}/again`)).spec.nodeName === bound, 5000, 20, 'same node');

    // A static volume on node b, and a claim of its class (no StorageClass object: bound at once).
    await client.create(PVS, volume('static', '5Gi', { storageClassName: 'manual', nodeAffinity: onlyOn('b') }));
    const { metadata: _n, ...sbody } = claim('manual', { storageClassName: 'manual' });
    await client.create(PVCS, { ...sbody, metadata: { name: 'manual' } });
    await waitFor(
      async () => (await client.get(`${PVCS}/manual`)).status?.phase === 'Bound',
      5000,
      20,
      'static binding',
    );
    assert.deepEqual(
      [
        (await client.get(`${PVCS}/manual`)).spec.volumeName,
        (await client.get(`${PVCS}/manual`)).status.capacity.storage,
      ],
      ['static', '5Gi'],
    );
    await client.create(PODS, pod('pinned', 'manual'));
    await waitFor(
      async () => (await client.get(`${PODS}/pinned`)).spec.nodeName === 'b',
      5000,
      20,
      'scheduled where the volume is',
    );

    await client.create(PODS, pod('orphan', 'nope'));
    await waitFor(
      async () =>
        /persistentvolumeclaim "nope" not found/.test(
          (await client.get(`${PODS}/orphan`)).status?.conditions?.[0]?.message ?? '',
        ),
      5000,
      20,
      'unschedulable without its claim',
    );

    // Claims deleted: the provisioned volume goes (Delete), the static one is Released (Retain).
    for (const p of ['user', 'again', 'pinned', 'orphan'])
      await client.delete(`${PODS}/${p}`, { gracePeriodSeconds: 0 });
    await client.delete(`${PVCS}/data`);
    await client.delete(`${PVCS}/manual`);
    await waitFor(
      async () => !((await client.get(PVS)).items as KObj[]).some((v) => v.metadata.name === pv.metadata.name),
      5000,
      20,
      'provisioned volume deleted',
    );
    await waitFor(
      async () => (await client.get(`${PVS}/static`)).status?.phase === 'Released',
      5000,
      20,
      'static volume released',
    );
  } finally {
    await stop();
  }
});
