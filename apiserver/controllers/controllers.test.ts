import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { microTime, rfc3339 } from '../../kube/time.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { NodeLifecycle } from './node-lifecycle.js';
import { Scheduler } from './scheduler.js';

const readyNode = (name: string, cpu = '2') => ({
  metadata: { name },
  status: {
    allocatable: { cpu, memory: '4Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: rfc3339() }],
  },
});
const podBody = (name: string, cpu?: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i:1', ...(cpu ? { resources: { requests: { cpu } } } : {}) }], ...extra },
});

function setup() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  return { api, client, log };
}

const events = async (
  client: LocalClient,
  name: string,
): Promise<{ reason: string; message: string; source: { component: string } }[]> =>
  (await client.get('/api/v1/namespaces/default/events', { fieldSelector: `involvedObject.name=${name}` })).items;

test('the scheduler binds pending pods through pods/binding to the least requested Ready node, with a Scheduled event', async () => {
  const { client, log } = setup();
  await client.create('/api/v1/nodes', readyNode('big', '4'));
  await client.create('/api/v1/nodes', readyNode('small', '1'));
  await client.create('/api/v1/nodes', {
    ...readyNode('down'),
    status: { ...readyNode('down').status, conditions: [{ type: 'Ready', status: 'Unknown' }] },
  });
  const s = new Scheduler(client, log, new ApiEventRecorder(client, { component: 'default-scheduler' }, log));
  await s.start();
  try {
    await client.create('/api/v1/namespaces/default/pods', podBody('a', '500m'));
    const a = await waitFor(
      async () => (await client.get('/api/v1/namespaces/default/pods/a')).spec.nodeName,
      3000,
      20,
      'pod a bound',
    );
    assert.equal(a, 'big', 'the node with most room left wins');
    const p = await client.get('/api/v1/namespaces/default/pods/a');
    assert.equal(p.status.conditions.find((c: any) => c.type === 'PodScheduled').status, 'True');
    const ev = await waitFor(
      async () => (await events(client, 'a')).find((e) => e.reason === 'Scheduled'),
      3000,
      20,
      'Scheduled event',
    );
    assert.equal(ev.message, 'Successfully assigned default/a to big');
    assert.equal(ev.source.component, 'default-scheduler');
    // Pods already bound are not ours; ones for another scheduler are left alone.
    await client.create('/api/v1/namespaces/default/pods', podBody('pinned', undefined, { nodeName: 'small' }));
    await client.create(
      '/api/v1/namespaces/default/pods',
      podBody('other', undefined, { schedulerName: 'my-scheduler' }),
    );
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await client.get('/api/v1/namespaces/default/pods/pinned')).spec.nodeName, 'small');
    assert.equal((await client.get('/api/v1/namespaces/default/pods/other')).spec.nodeName, undefined);
  } finally {
    await s.stop();
  }
});

test('a pod that fits nowhere stays Pending with Unschedulable and FailedScheduling, and is bound once a node fits', async () => {
  const { client, log } = setup();
  await client.create('/api/v1/nodes', readyNode('n1', '1'));
  const s = new Scheduler(client, log, new ApiEventRecorder(client, { component: 'default-scheduler' }, log), {
    retryMs: 60_000,
  });
  await s.start();
  try {
    await client.create('/api/v1/namespaces/default/pods', podBody('huge', '3'));
    const cond = await waitFor(
      async () =>
        (await client.get('/api/v1/namespaces/default/pods/huge')).status.conditions?.find(
          (c: any) => c.type === 'PodScheduled' && c.status === 'False',
        ),
      3000,
      20,
      'Unschedulable',
    );
    const msg =
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.';
    assert.equal(cond.reason, 'Unschedulable');
    assert.equal(cond.message, msg);
    const ev = await waitFor(
      async () => (await events(client, 'huge')).find((e) => e.reason === 'FailedScheduling'),
      3000,
      20,
      'FailedScheduling',
    );
    assert.equal(ev.message, msg);
    assert.equal((await client.get('/api/v1/namespaces/default/pods/huge')).status.phase, 'Pending');
    // A node that fits appears: the pod is retried at once, not after the retry period.
    await client.create('/api/v1/nodes', readyNode('n2', '4'));
    assert.equal(
      await waitFor(
        async () => (await client.get('/api/v1/namespaces/default/pods/huge')).spec.nodeName,
        3000,
        20,
        'bound after the node appeared',
      ),
      'n2',
    );
  } finally {
    await s.stop();
  }
});

test('priority: the higher pod is scheduled first, and preempts a lower one (DisruptionTarget, Preempted, nominatedNodeName) to get room', async () => {
  const { client, log } = setup();
  await client.create('/api/v1/nodes', readyNode('n1', '1'));
  for (const [name, value] of [
    ['low', 10],
    ['high', 1000],
  ] as const)
    await client.create('/apis/scheduling.k8s.io/v1/priorityclasses', {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
    });
  // Both wait before the scheduler starts; only one fits: the higher goes first though it came second.
  await client.create('/api/v1/namespaces/default/pods', podBody('first-low', '800m', { priorityClassName: 'low' }));
  await client.create('/api/v1/namespaces/default/pods', podBody('second-high', '800m', { priorityClassName: 'high' }));
  const s = new Scheduler(client, log, new ApiEventRecorder(client, { component: 'default-scheduler' }, log), {
    retryMs: 60_000,
  });
  await s.start();
  try {
    assert.equal(
      await waitFor(
        async () => (await client.get('/api/v1/namespaces/default/pods/second-high')).spec.nodeName,
        3000,
        20,
        'high bound',
      ),
      'n1',
    );
    assert.equal((await client.get('/api/v1/namespaces/default/pods/first-low')).spec.nodeName, undefined);
    // Now a bound low pod, and a high one that needs its room.
    await client.delete('/api/v1/namespaces/default/pods/second-high', { gracePeriodSeconds: 0 });
    await waitFor(
      async () => (await client.get('/api/v1/namespaces/default/pods/first-low')).spec.nodeName === 'n1',
      3000,
      20,
      'low bound',
    );
    await client.create('/api/v1/namespaces/default/pods', podBody('vip', '500m', { priorityClassName: 'high' }));
    const victim = await waitFor(
      async () => {
        const p = await client.get('/api/v1/namespaces/default/pods/first-low');
        return p.metadata.deletionTimestamp ? p : undefined;
      },
      3000,
      20,
      'the low pod preempted',
    );
    assert.deepEqual(
      victim.status.conditions.find((c: any) => c.type === 'DisruptionTarget')?.reason,
      'PreemptionByScheduler',
    );
    const vip = await client.get('/api/v1/namespaces/default/pods/vip');
    assert.equal(vip.status.nominatedNodeName, 'n1');
    assert.match(
      (await events(client, 'first-low')).find((e) => e.reason === 'Preempted')?.message ?? '',
      new RegExp(`^Preempted by pod ${vip.metadata.uid} on node n1$`),
    );
    // The kubelet finishes the victim: the preemptor is bound.
    await client.delete('/api/v1/namespaces/default/pods/first-low', { gracePeriodSeconds: 0 });
    assert.equal(
      await waitFor(
        async () => (await client.get('/api/v1/namespaces/default/pods/vip')).spec.nodeName,
        3000,
        20,
        'vip bound',
      ),
      'n1',
    );
  } finally {
    await s.stop();
  }
});

test('node lifecycle: a silent lease makes the node Unknown and tainted, marks its pods not Ready, evicts the intolerant; a live one recovers', async () => {
  const { client, log } = setup();
  await client.create('/api/v1/nodes', readyNode('n1'));
  const renew = async () => {
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1';
    const l = await client.get(path).catch(() => undefined);
    const spec = { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: microTime() };
    if (l) await client.update(path, { ...l, spec });
    else
      await client.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
        metadata: { name: 'n1' },
        spec,
      });
  };
  await renew();
  await client.create(
    '/api/v1/namespaces/default/pods',
    podBody('tolerant', undefined, {
      nodeName: 'n1',
      tolerations: [
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    }),
  );
  // Pods get DefaultTolerationSeconds (300 s) unless they say otherwise; this one tolerates unreachable for 0 s.
  const brief = await client.create(
    '/api/v1/namespaces/default/pods',
    podBody('intolerant', undefined, {
      nodeName: 'n1',
      tolerations: [
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 0 },
      ],
    }),
  );
  assert.deepEqual(
    brief.spec.tolerations.map((t: any) => `${t.key}:${t.tolerationSeconds}`),
    ['node.kubernetes.io/unreachable:0', 'node.kubernetes.io/not-ready:300'],
  );
  await client.patch('/api/v1/namespaces/default/pods/tolerant/status', {
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  const c = new NodeLifecycle(client, log, new ApiEventRecorder(client, { component: 'node-controller' }, log), {
    gracePeriodMs: 400,
    monitorPeriodMs: 50,
  });
  await c.start();
  try {
    // Renewed within the grace period: nothing happens.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 150));
      await renew();
    }
    let n = await client.get('/api/v1/nodes/n1');
    assert.equal(n.status.conditions[0].status, 'True');
    assert.equal(n.spec.taints, undefined);
    // Silent: Unknown, with upstream reason and message, and the unreachable taints.
    n = await waitFor(
      async () => {
        const x = await client.get('/api/v1/nodes/n1');
        return x.spec.taints?.length === 2 ? x : undefined;
      },
      3000,
      20,
      'unreachable taints',
    );
    const ready = n.status.conditions.find((x: any) => x.type === 'Ready');
    assert.deepEqual(
      [ready.status, ready.reason, ready.message],
      ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.'],
    );
    assert.deepEqual(n.spec.taints.map((t: any) => `${t.key}:${t.effect}`).sort(), [
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/unreachable:NoSchedule',
    ]);
    const tol = await waitFor(
      async () => {
        const p = await client.get('/api/v1/namespaces/default/pods/tolerant');
        return p.status.conditions.find((x: any) => x.type === 'Ready')?.status === 'False' ? p : undefined;
      },
      3000,
      20,
      'pod marked not Ready',
    );
    assert.equal(tol.metadata.deletionTimestamp, undefined, 'a pod tolerating the taint for 300 s stays');
    const gone = await waitFor(
      async () => (await client.get('/api/v1/namespaces/default/pods/intolerant')).metadata.deletionTimestamp,
      3000,
      20,
      'intolerant pod evicted',
    );
    assert.ok(gone);
    assert.ok((await events(client, 'intolerant')).some((e) => e.reason === 'TaintManagerEviction'));
    // The kubelet is back: it posts Ready and renews; the taints go.
    await renew();
    await client.patch('/api/v1/nodes/n1/status', {
      status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: rfc3339() }] },
    });
    await waitFor(
      async () => (await client.get('/api/v1/nodes/n1')).spec.taints === undefined,
      3000,
      20,
      'taints removed',
    );
    const evs = (
      await client.get('/api/v1/namespaces/default/events', { fieldSelector: 'involvedObject.kind=Node' })
    ).items.map((e: any) => e.reason);
    assert.deepEqual(evs, ['NodeNotReady', 'NodeReady']);
  } finally {
    await c.stop();
  }
});

test('node lifecycle: a node that turns Ready loses its not-ready taints at once, not at the next monitor period', async () => {
  const { client, log } = setup();
  const c = new NodeLifecycle(client, log, new ApiEventRecorder(client, { component: 'node-controller' }, log), {
    monitorPeriodMs: 3600_000,
  });
  await client.create('/api/v1/nodes', {
    metadata: { name: 'fresh' },
    spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
    status: { conditions: [{ type: 'Ready', status: 'False', lastHeartbeatTime: rfc3339() }] },
  });
  await c.start();
  try {
    await c.monitor();
    assert.deepEqual(
      (await client.get('/api/v1/nodes/fresh')).spec.taints.map((t: any) => `${t.key}:${t.effect}`),
      ['node.kubernetes.io/not-ready:NoSchedule', 'node.kubernetes.io/not-ready:NoExecute'],
    );
    await client.patch('/api/v1/nodes/fresh/status', {
      status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: rfc3339() }] },
    });
    await waitFor(async () => !(await client.get('/api/v1/nodes/fresh')).spec.taints, 2000, 20, 'taints removed');
  } finally {
    await c.stop();
  }
});
