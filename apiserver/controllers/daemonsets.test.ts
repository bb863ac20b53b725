import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { strategicMerge } from '../../kube/patch.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { revisionTemplate } from './controller-history.js';
import { DaemonSetController } from './daemonset-controller.js';
import { daemonPod, daemonTolerations, nodeShouldRun, planDaemonSet, targetNode } from './daemonset-model.js';

const DS = '/apis/apps/v1/namespaces/default/daemonsets';
const PODS = '/api/v1/namespaces/default/pods';
const REVS = '/apis/apps/v1/namespaces/default/controllerrevisions';

const node = (name: string, extra: KObj = {}): KObj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(extra.labels ?? {}) } },
  spec: { taints: extra.taints ?? [] },
  status: { conditions: [{ type: 'Ready', status: 'True' }] },
});
const ds = (name: string, spec: KObj = {}): KObj => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    generation: 1,
    annotations: { 'deprecated.daemonset.template.generation': '1' },
  },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
    ...spec,
  },
});
const ago = new Date(Date.now() - 60_000).toISOString();
const pod = (name: string, nodeName: string, hash: string, ready = true): KObj => ({
  metadata: { name, creationTimestamp: ago, labels: { 'controller-revision-hash': hash } },
  spec: { nodeName },
  status: {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago }],
  },
});

test('DaemonSet model: tolerations, node eligibility, the pod for a node', () => {
  const tol = daemonTolerations({
    hostNetwork: true,
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
      { key: 'x', operator: 'Exists' },
    ],
  });
  assert.deepEqual(
    tol.map((t) => `${t.key}:${t.effect ?? ''}`),
    [
      'x:',
      'node.kubernetes.io/not-ready:NoExecute',
      'node.kubernetes.io/unreachable:NoExecute',
      'node.kubernetes.io/disk-pressure:NoSchedule',
      'node.kubernetes.io/memory-pressure:NoSchedule',
      'node.kubernetes.io/pid-pressure:NoSchedule',
      'node.kubernetes.io/unschedulable:NoSchedule',
      'node.kubernetes.io/network-unavailable:NoSchedule',
    ],
  );
  assert.equal(tol[1]!.tolerationSeconds, undefined, 'the not-ready toleration is replaced by the infinite one');
  const d = ds('d', {
    template: {
      metadata: { labels: { app: 'd' } },
      spec: { nodeSelector: { disk: 'ssd' }, containers: [{ name: 'c', image: 'i' }] },
    },
  });
  assert.deepEqual(nodeShouldRun(d, node('a', { labels: { disk: 'ssd' } })), {
    shouldRun: true,
    shouldContinueRunning: true,
  });
  assert.deepEqual(nodeShouldRun(d, node('b')), { shouldRun: false, shouldContinueRunning: false }, 'selector');
  assert.deepEqual(
    nodeShouldRun(d, node('c', { labels: { disk: 'ssd' }, taints: [{ key: 'gpu', effect: 'NoSchedule' }] })),
    { shouldRun: false, shouldContinueRunning: true },
    'a NoSchedule taint keeps what runs',
  );
  assert.deepEqual(
    nodeShouldRun(d, node('c', { labels: { disk: 'ssd' }, taints: [{ key: 'gpu', effect: 'NoExecute' }] })),
    { shouldRun: false, shouldContinueRunning: false },
  );
  assert.deepEqual(
    nodeShouldRun(
      d,
      node('c', {
        labels: { disk: 'ssd' },
        taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }],
      }),
    ).shouldRun,
    true,
    'cordoned nodes run daemons',
  );
  const p = daemonPod(d, 'a', 'h1');
  assert.deepEqual(p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }],
  });
  assert.deepEqual(p.metadata.labels, { app: 'd', 'controller-revision-hash': 'h1', 'pod-template-generation': '1' });
  assert.equal(targetNode(p), 'a');
});

test('DaemonSet model: manage and RollingUpdate within maxUnavailable and maxSurge, and the status counts', () => {
  const nodes = [node('a'), node('b'), node('c')];
  assert.deepEqual(planDaemonSet(ds('d'), nodes, [], 'new').create, ['a', 'b', 'c']);
  const old = [pod('pa', 'a', 'old'), pod('pb', 'b', 'old'), pod('pc', 'c', 'old')];
  let plan = planDaemonSet(ds('d'), nodes, old, 'new');
  assert.deepEqual([plan.create, plan.delete.map((d) => d.name)], [[], ['pa']], 'one old pod at a time');
  assert.equal(plan.status.updatedNumberScheduled, 0);
  plan = planDaemonSet(ds('d'), nodes, [pod('na', 'a', 'new', false), old[1]!, old[2]!], 'new');
  assert.deepEqual(plan.delete, [], 'the new pod is not yet available: the budget is spent');
  assert.deepEqual(
    [
      plan.status.numberReady,
      plan.status.numberAvailable,
      plan.status.numberUnavailable,
      plan.status.updatedNumberScheduled,
    ],
    [2, 2, 1, 1],
  );
  plan = planDaemonSet(
    ds('d'),
    nodes,
    [pod('na', 'a', 'new'), { ...old[1]!, status: { phase: 'Running', conditions: [] } }, old[2]!],
    'new',
  );
  assert.deepEqual(
    plan.delete.map((d) => d.name),
    ['pb'],
    'an unavailable old pod is replaced at once',
  );
  const surge = ds('d', {
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
  });
  plan = planDaemonSet(surge, nodes, old, 'new');
  assert.deepEqual([plan.create, plan.delete], [['a'], []], 'surge: a new pod beside the old one');
  plan = planDaemonSet(surge, nodes, [...old, pod('na', 'a', 'new')], 'new');
  assert.deepEqual(
    plan.delete.map((d) => d.name),
    ['pa'],
    'the new one is available: the old one goes',
  );
  plan = planDaemonSet(
    ds('d'),
    nodes,
    [pod('x', 'a', 'new'), { ...pod('y', 'b', 'new'), status: { phase: 'Failed' } }, pod('z', 'gone', 'new')],
    'new',
  );
  assert.deepEqual(
    plan.delete.find((d) => d.name === 'y')?.failed,
    { node: 'b' },
    'failed daemon pods are deleted (and made again)',
  );
  assert.deepEqual(plan.create, ['c']);
  const onDelete = ds('d', { updateStrategy: { type: 'OnDelete' } });
  assert.deepEqual(planDaemonSet(onDelete, nodes, old, 'new').delete, [], 'OnDelete replaces nothing');
});

async function cluster() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const c = new DaemonSetController(
    client,
    log,
    new ApiEventRecorder(client, { component: 'daemonset-controller' }, log),
  );
  for (const n of ['a', 'b']) await client.create('/api/v1/nodes', node(n));
  await c.start();
  return { api, client, stop: () => c.stop() };
}

const dsPods = async (client: LocalClient, name: string): Promise<KObj[]> =>
  (await client.get(PODS, { labelSelector: `app=${name}` })).items as KObj[];
async function runAll(client: LocalClient, pods: KObj[]): Promise<void> {
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    const cur = await client.get(`${PODS}/${p.metadata.name}`);
    await client.update(`${PODS}/${p.metadata.name}/status`, {
      ...cur,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
      },
    });
  }
}

test('DaemonSet controller against the dev apiserver: one pod per node, revisions, rolling update, rollback renumbers', async () => {
  const { client, stop } = await cluster();
  try {
    const body = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } },
      },
    };
    const made = await client.create(DS, body);
    assert.equal(made.metadata.annotations['deprecated.daemonset.template.generation'], '1');
    assert.deepEqual(made.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    await waitFor(async () => (await dsPods(client, 'agent')).length === 2, 5000, 20, 'two pods');
    const pods = await dsPods(client, 'agent');
    assert.deepEqual(pods.map(targetNode).sort(), ['a', 'b']);
    const revs = (await client.get(REVS)).items as KObj[];
    assert.equal(revs.length, 1);
    assert.equal(revs[0]!.revision, 1);
    assert.equal(revs[0]!.metadata.name, `agent-${pods[0]!.metadata.labels['controller-revision-hash']}`);
    assert.equal(revisionTemplate(revs[0]!).spec.containers[0].image, 'img:1');
    await runAll(client, pods);
    await waitFor(async () => (await client.get(`${DS}/agent`)).status?.numberAvailable === 2, 5000, 20, 'available');
    let st = (await client.get(`${DS}/agent`)).status;
    assert.deepEqual(
      [
        st.desiredNumberScheduled,
        st.currentNumberScheduled,
        st.numberReady,
        st.updatedNumberScheduled,
        st.numberMisscheduled,
        st.observedGeneration,
      ],
      [2, 2, 2, 2, 0, 1],
    );

    // A new image: revision 2, one pod replaced at a time.
    await client.patch(
      `${DS}/agent`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'img:2' }] } } } },
      'strategic',
    );
    assert.equal(
      (await client.get(`${DS}/agent`)).metadata.annotations['deprecated.daemonset.template.generation'],
      '2',
    );
    const images = async (): Promise<string> =>
      (await dsPods(client, 'agent'))
        .map((p) => p.spec.containers[0].image)
        .sort()
        .join(',');
    await waitFor(async () => (await images()) === 'img:1,img:2', 5000, 20, 'one pod replaced');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await images(), 'img:1,img:2', 'the other waits until the new pod is available');
    for (let i = 0; i < 4; i++) {
      await runAll(client, await dsPods(client, 'agent'));
      await new Promise((r) => setTimeout(r, 100));
    }
    await waitFor(
      async () => {
        const ps = await dsPods(client, 'agent');
        return ps.length === 2 && ps.every((p) => p.spec.containers[0].image === 'img:2');
      },
      5000,
      20,
      'all on img:2',
    );
    await runAll(client, await dsPods(client, 'agent'));
    await waitFor(
      async () => (await client.get(`${DS}/agent`)).status?.updatedNumberScheduled === 2,
      5000,
      20,
      'rolled out',
    );
    let all = ((await client.get(REVS)).items as KObj[]).sort((a, b) => a.revision - b.revision);
    assert.deepEqual(
      all.map((r) => r.revision),
      [1, 2],
    );

    // kubectl rollout undo: the DaemonSet is patched with revision 1's data, which becomes revision 3.
    const cur = await client.get(`${DS}/agent`);
    await client.update(`${DS}/agent`, strategicMerge(cur, all[0]!.data) as KObj);
    await waitFor(
      async () => ((await client.get(REVS)).items as KObj[]).some((r) => r.revision === 3),
      5000,
      20,
      'renumbered',
    );
    all = ((await client.get(REVS)).items as KObj[]).sort((a, b) => a.revision - b.revision);
    assert.equal(all.length, 2, 'no new revision: the old one came back');
    assert.equal(revisionTemplate(all[1]!).spec.containers[0].image, 'img:1');
    st = (await client.get(`${DS}/agent`)).status;
    assert.ok(st.observedGeneration >= 3);

    // A node gets a taint the pods do not tolerate (NoExecute): its pod goes.
    const b = await client.get('/api/v1/nodes/b');
    await client.update('/api/v1/nodes/b', {
      ...b,
      spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }] },
    });
    await waitFor(
      async () => (await dsPods(client, 'agent')).every((p) => targetNode(p) !== 'b' || p.metadata.deletionTimestamp),
      5000,
      20,
      'evicted from b',
    );
    await waitFor(
      async () => (await client.get(`${DS}/agent`)).status?.desiredNumberScheduled === 1,
      5000,
      20,
      'desired 1',
    );
  } finally {
    await stop();
  }
});

test('DaemonSet and StatefulSet validation: upstream field errors, nothing stored', () => {
  const api = new Api(new Store());
  const dsr = api.res('apps', 'daemonsets');
  const invalid = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 422 && re.test(e.message);
  const base = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'x' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  };
  assert.throws(
    () =>
      api.create(dsr, 'default', {
        ...base,
        spec: {
          ...base.spec,
          template: { ...base.spec.template, spec: { ...base.spec.template.spec, restartPolicy: 'Never' } },
        },
      }),
    invalid(/spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"/),
  );
  assert.throws(
    () => api.create(dsr, 'default', { ...base, spec: { ...base.spec, selector: { matchLabels: { a: 'c' } } } }),
    invalid(/`selector` does not match template `labels`/),
  );
  assert.throws(
    () =>
      api.create(dsr, 'default', {
        ...base,
        spec: { ...base.spec, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } },
      }),
    invalid(
      /spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: .*may not be set when maxUnavailable is non-zero/,
    ),
  );
  assert.throws(
    () => api.create(dsr, 'default', { ...base, spec: { ...base.spec, updateStrategy: { type: 'Sometimes' } } }),
    invalid(/supported values: "OnDelete", "RollingUpdate"/),
  );
  assert.equal(api.list(dsr, 'default').items.length, 0);
  api.create(dsr, 'default', base);
  const cur = api.get(dsr, 'default', 'x');
  assert.throws(
    () =>
      api.update(dsr, 'default', 'x', {
        ...cur,
        spec: {
          ...cur.spec,
          selector: { matchLabels: { a: 'b', c: 'd' } },
          template: { ...cur.spec.template, metadata: { labels: { a: 'b', c: 'd' } } },
        },
      }),
    invalid(/spec.selector: Invalid value: .*field is immutable/),
  );

  const sts = api.res('apps', 'statefulsets');
  const sbase = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web' },
    spec: {
      serviceName: 'web',
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  };
  assert.throws(
    () => api.create(sts, 'default', { ...sbase, spec: { ...sbase.spec, podManagementPolicy: 'Random' } }),
    invalid(/spec.podManagementPolicy: Unsupported value: "Random": supported values: "OrderedReady", "Parallel"/),
  );
  assert.throws(
    () =>
      api.create(sts, 'default', {
        ...sbase,
        spec: { ...sbase.spec, volumeClaimTemplates: [{ metadata: { name: 'd' }, spec: {} }] },
      }),
    invalid(/spec.volumeClaimTemplates\[0\].spec.accessModes: Required value: at least 1 access mode is required/),
  );
  const s = api.create(sts, 'default', sbase);
  assert.deepEqual(
    [
      s.spec.replicas,
      s.spec.podManagementPolicy,
      s.spec.updateStrategy,
      s.spec.persistentVolumeClaimRetentionPolicy,
      s.spec.volumeClaimTemplates[0].spec.volumeMode,
    ],
    [
      1,
      'OrderedReady',
      { type: 'RollingUpdate', rollingUpdate: { partition: 0 } },
      { whenDeleted: 'Retain', whenScaled: 'Retain' },
      'Filesystem',
    ],
  );
  const sc = api.get(sts, 'default', 'web');
  assert.throws(
    () => api.update(sts, 'default', 'web', { ...sc, spec: { ...sc.spec, volumeClaimTemplates: [] } }),
    invalid(
      /spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden/,
    ),
  );
  api.update(sts, 'default', 'web', { ...sc, spec: { ...sc.spec, replicas: 3 } });
});
