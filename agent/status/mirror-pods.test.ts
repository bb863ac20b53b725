import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
// Test-only: the dev apiserver stands in for a real one.
import { useTestApiServer } from '../../testing/apiserver.js';
import { waitFor } from '../../testing/wait.js';
import { toStaticPod } from '../sources/manifest.js';
import { MirrorPods } from './mirror-pods.js';

const t = useTestApiServer('n1');

const staticPod = (cmd: string) =>
  toStaticPod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'i:1', command: [cmd] }] },
    },
    '/m/web.yaml',
    'file',
    'n1',
  );
const mirrors = async (): Promise<KObj[]> =>
  (await t.node.get('/api/v1/namespaces/default/pods')).items.filter(
    (p: KObj) => p.metadata.annotations?.['kubernetes.io/config.mirror'],
  );

test('mirror pods follow static pods: created owned by the Node, replaced when outdated or deleted, removed when orphaned', async () => {
  let uid = '';
  const m = new MirrorPods(t.node, 'n1', () => uid, memoryLogger());
  const v1 = staticPod('v1');
  m.reconcile([v1], []);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await mirrors()).length, 0, 'nothing before the Node is registered');
  uid = 'node-uid-1';
  m.reconcile([v1], []);
  const [mp] = await waitFor(async () => ((await mirrors()).length === 1 ? mirrors() : undefined), 5000, 20);
  assert.equal(mp!.metadata.name, 'web-n1');
  assert.equal(mp!.metadata.annotations['kubernetes.io/config.mirror'], v1.metadata!.uid);
  assert.deepEqual(mp!.metadata.ownerReferences, [
    { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid-1', controller: true },
  ]);
  assert.deepEqual(mp!.metadata.labels, { app: 'web' });
  assert.equal(mp!.spec.nodeName, 'n1');

  // The static pod changed: the outdated mirror goes, and the next reconcile makes the new one.
  const v2 = staticPod('v2');
  m.reconcile([v2], await mirrors());
  await waitFor(async () => (await mirrors()).length === 0, 5000, 20);
  m.reconcile([v2], []);
  const [mp2] = await waitFor(async () => ((await mirrors()).length === 1 ? mirrors() : undefined), 5000, 20);
  assert.equal(mp2!.metadata.annotations['kubernetes.io/config.mirror'], v2.metadata!.uid);

  // A user deleted it (bound pods are only marked): deleted for good, then recreated.
  await t.node.delete('/api/v1/namespaces/default/pods/web-n1');
  const marked = await mirrors();
  assert.ok(marked[0]!.metadata.deletionTimestamp);
  m.reconcile([v2], marked);
  await waitFor(async () => (await mirrors()).length === 0, 5000, 20);

  // No static pod any more: its mirror is removed.
  m.reconcile([v2], []);
  await waitFor(async () => (await mirrors()).length === 1, 5000, 20);
  m.reconcile([], await mirrors());
  await waitFor(async () => (await mirrors()).length === 0, 5000, 20);
  assert.equal(m.creates, 3);
});
