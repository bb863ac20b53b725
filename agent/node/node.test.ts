import assert from 'node:assert/strict';
import { test } from 'node:test';

import { KubeClient } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
// Test-only: the dev apiserver stands in for a real one.
import { startTestApiServer, useTestApiServer } from '../../testing/apiserver.js';
import { LEASE_DURATION_SEC, LeaseHeartbeat } from './lease.js';
import type { NodeFacts } from './node-object.js';
import { NodeStatusManager } from './node-status.js';

const t = useTestApiServer('n1');

test('registers the Node with upstream labels, capacity, nodeInfo, endpoint and conditions; posts only on change', async () => {
  const facts: NodeFacts = {
    nodeName: 'n1',
    nodeIP: '10.1.2.3',
    runtimeName: 'containerd',
    runtimeVersion: '1.6.20',
    runtimeReady: true,
  };
  const m = new NodeStatusManager(t.node, async () => ({ ...facts }), memoryLogger());
  const node = await m.register();
  assert.equal(node.metadata.labels['kubernetes.io/hostname'], 'n1');
  assert.equal(node.metadata.labels['kubernetes.io/os'], 'linux');
  assert.ok(node.metadata.labels['kubernetes.io/arch']);
  const got = await t.node.get('/api/v1/nodes/n1');
  assert.equal(got.status.capacity.pods, '110');
  assert.match(got.status.capacity.memory, /^\d+Ki$/);
  assert.equal(got.status.allocatable.cpu, got.status.capacity.cpu);
  assert.deepEqual(got.status.addresses, [
    { type: 'InternalIP', address: '10.1.2.3' },
    { type: 'Hostname', address: 'n1' },
  ]);
  assert.equal(got.status.daemonEndpoints.kubeletEndpoint.Port, 10250);
  assert.equal(got.status.nodeInfo.containerRuntimeVersion, 'containerd://1.6.20');
  // The features the scheduler and apiserver ask of a node before they give it pods that need them.
  assert.deepEqual(got.status.declaredFeatures, [
    'InPlacePodLevelResourcesVerticalScaling',
    'InPlacePodVerticalScalingInitContainers',
    'RestartAllContainersOnContainerExits',
  ]);
  const cond = Object.fromEntries(got.status.conditions.map((c: any) => [c.type, `${c.status} ${c.reason}`]));
  assert.deepEqual(cond, {
    MemoryPressure: 'False KubeletHasSufficientMemory',
    DiskPressure: 'False KubeletHasNoDiskPressure',
    PIDPressure: 'False KubeletHasSufficientPID',
    Ready: 'True KubeletReady',
  });
  const readyAt = got.status.conditions.find((c: any) => c.type === 'Ready').lastTransitionTime;

  assert.equal(await m.sync(), false, 'nothing changed: no post');
  await new Promise((r) => setTimeout(r, 1100));
  facts.runtimeReady = false;
  facts.runtimeMessage = 'container runtime network not ready: NetworkReady=false';
  assert.equal(await m.sync(), true);
  const ready = (await t.node.get('/api/v1/nodes/n1')).status.conditions.find((c: any) => c.type === 'Ready');
  assert.equal(ready.status, 'False');
  assert.equal(ready.reason, 'KubeletNotReady');
  assert.equal(ready.message, facts.runtimeMessage);
  assert.notEqual(ready.lastTransitionTime, readyAt, 'a flip moves lastTransitionTime');

  // A restarted kubelet adopts the existing Node.
  const again = new NodeStatusManager(t.node, async () => ({ ...facts, runtimeReady: true }), memoryLogger());
  const n2 = await again.register();
  assert.equal(n2.metadata.uid, node.metadata.uid);
  assert.equal(
    (await t.node.get('/api/v1/nodes/n1')).status.conditions.find((c: any) => c.type === 'Ready').status,
    'True',
  );
});

test("a dual-stack --node-ip: one InternalIP per family in the Node's addresses, kept apart through status patches (they share the merge key)", async () => {
  const facts: NodeFacts = {
    nodeName: 'n1',
    nodeIP: '10.1.2.3',
    nodeIPs: ['10.1.2.3', 'fd00::3'],
    runtimeName: 'containerd',
    runtimeVersion: '1.6.20',
    runtimeReady: true,
  };
  const m = new NodeStatusManager(t.node, async () => ({ ...facts }), memoryLogger());
  await m.register();
  const addrs = async () => (await t.node.get('/api/v1/nodes/n1')).status.addresses;
  assert.deepEqual(await addrs(), [
    { type: 'InternalIP', address: '10.1.2.3' },
    { type: 'InternalIP', address: 'fd00::3' },
    { type: 'Hostname', address: 'n1' },
  ]);
  facts.nodeIPs = ['10.1.2.3', 'fd00::4'];
  assert.equal(await m.sync(), true);
  assert.deepEqual(await addrs(), [
    { type: 'InternalIP', address: '10.1.2.3' },
    { type: 'InternalIP', address: 'fd00::4' },
    { type: 'Hostname', address: 'n1' },
  ]);
});

test('a node registered NotReady (no CNI config yet) is posted Ready within moments of its network coming up, not an update period later', async () => {
  const facts: NodeFacts = {
    nodeName: 'n1',
    nodeIP: '10.1.2.3',
    runtimeName: 'containerd',
    runtimeVersion: '1.6.20',
    runtimeReady: false,
    runtimeMessage: 'container runtime network not ready: NetworkReady=false',
  };
  const m = new NodeStatusManager(t.node, async () => ({ ...facts }), memoryLogger(), { updateMs: 3600_000 });
  await m.register();
  const ready = async () =>
    (await t.node.get('/api/v1/nodes/n1')).status.conditions.find((c: any) => c.type === 'Ready').status;
  assert.equal(await ready(), 'False');
  m.start();
  try {
    await new Promise((r) => setTimeout(r, 300));
    const posts = m.posts;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(m.posts, posts, 'unchanged facts are not posted again');
    facts.runtimeReady = true;
    facts.runtimeMessage = undefined;
    let status = '';
    for (let i = 0; i < 40 && status !== 'True'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = await ready();
    }
    assert.equal(status, 'True');
  } finally {
    m.stop();
  }
});

test('the Lease kube-node-lease/<node> is created, then renewed, owned by the Node', async () => {
  const nodeUid = (await t.node.get('/api/v1/nodes/n1')).metadata.uid;
  const hb = new LeaseHeartbeat(t.node, 'n1', memoryLogger());
  hb.setNodeUid(nodeUid);
  const l1 = await hb.renew();
  assert.equal(l1.spec.holderIdentity, 'n1');
  assert.equal(l1.spec.leaseDurationSeconds, LEASE_DURATION_SEC);
  assert.match(l1.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.deepEqual(l1.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid }]);
  await new Promise((r) => setTimeout(r, 5));
  const l2 = await hb.renew();
  assert.equal(l2.metadata.uid, l1.metadata.uid);
  assert.ok(l2.spec.renewTime > l1.spec.renewTime);
});

test('lease renewal failures back off instead of spinning', async () => {
  const dead = new KubeClient({ server: 'https://127.0.0.1:1' });
  const log = memoryLogger();
  const hb = new LeaseHeartbeat(dead, 'n1', log, { backoffInitialMs: 50, backoffMaxMs: 200 });
  hb.start();
  await new Promise((r) => setTimeout(r, 700));
  hb.stop();
  dead.close();
  assert.ok(hb.failures >= 3, `retried (${hb.failures})`);
  assert.ok(hb.failures <= 8, `but with growing delays, not in a tight loop (${hb.failures})`);
  assert.match(log.lines.join('\n'), /failed to renew lease kube-node-lease\/n1, will retry in 50 ms/);
  assert.match(log.lines.join('\n'), /will retry in 200 ms/);
});

test('status the node controller changed (Unknown) is put right on the next sync; a deleted Node is registered again', async () => {
  const facts: NodeFacts = {
    nodeName: 'n1',
    nodeIP: '10.1.2.3',
    runtimeName: 'containerd',
    runtimeVersion: '1.6.20',
    runtimeReady: true,
  };
  const m = new NodeStatusManager(t.node, async () => ({ ...facts }), memoryLogger());
  await m.register();
  assert.equal(await m.sync(), false);
  await t.api.admin.patch('/api/v1/nodes/n1/status', {
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'NodeStatusUnknown',
          message: 'Kubelet stopped posting node status.',
        },
      ],
    },
  });
  assert.equal(await m.sync(), true, 'the server copy differs from ours: post');
  const ready = (await t.node.get('/api/v1/nodes/n1')).status.conditions.find((c: any) => c.type === 'Ready');
  assert.equal(`${ready.status} ${ready.reason}`, 'True KubeletReady');
  const uid = m.uid;
  await t.api.admin.delete('/api/v1/nodes/n1');
  assert.equal(await m.sync(), true);
  const again = await t.node.get('/api/v1/nodes/n1');
  assert.notEqual(again.metadata.uid, uid);
  assert.equal(m.uid, again.metadata.uid);
});

test('registration carries --node-labels, registerWithTaints and maxPods', async () => {
  const api2 = await startTestApiServer('n9');
  try {
    const facts: NodeFacts = {
      nodeName: 'n9',
      nodeIP: '10.1.2.9',
      runtimeName: 'containerd',
      runtimeVersion: '1.6.20',
      runtimeReady: true,
      maxPods: 20,
    };
    const m = new NodeStatusManager(api2.node, async () => facts, memoryLogger(), {
      labels: { 'kubelet.kubernetes.io/role': 'edge' },
      taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
    });
    await m.register();
    const n = await api2.admin.get('/api/v1/nodes/n9');
    assert.equal(n.metadata.labels['kubelet.kubernetes.io/role'], 'edge');
    assert.equal(n.metadata.labels['kubernetes.io/hostname'], 'n9');
    assert.deepEqual(n.spec.taints, [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]);
    assert.equal(n.status.capacity.pods, '20');
  } finally {
    await api2.stop();
  }
});
