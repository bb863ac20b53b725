import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { getScale, updateScale } from '../api/scale.js';
import { Store } from '../storage/store.js';
import { DeploymentController } from './deployment-controller.js';
import { progressingCondition } from './deployment-progress.js';
import { isScalingEvent, scaledSizes } from './deployment-scaling.js';
import { GarbageCollector } from './garbage-collector.js';
import { ReplicaSetController } from './replicaset-controller.js';
import {
  newRSReplicas,
  sameTemplate,
  scaleDownOld,
  surgeAndUnavailable,
  templateHash,
  withDeploymentAnnotations,
} from './workload-model.js';

const D = '/apis/apps/v1/namespaces/default/deployments';
const RS = '/apis/apps/v1/namespaces/default/replicasets';
const PODS = '/api/v1/namespaces/default/pods';

function deployment(name: string, replicas: number, image = 'app:1', strategy?: KObj): KObj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } },
      ...(strategy ? { strategy } : {}),
    },
  };
}

async function cluster() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const ev = (c: string) => new ApiEventRecorder(client, { component: c }, log);
  const rsc = new ReplicaSetController(client, log, ev('replicaset-controller'));
  const dc = new DeploymentController(client, log, ev('deployment-controller'));
  const gc = new GarbageCollector(client, log, 60_000);
  await Promise.all([rsc.start(), dc.start(), gc.start()]);
  return { api, client, log, stop: () => Promise.all([rsc.stop(), dc.stop(), gc.stop()]) };
}

const pods = async (client: LocalClient, sel: string): Promise<KObj[]> =>
  ((await client.get(PODS, { labelSelector: sel })).items as KObj[]).filter((p) => !p.metadata.deletionTimestamp);

/** What a kubelet would report: every pod Running and Ready. */
async function markReady(client: LocalClient, sel: string): Promise<void> {
  for (const p of await pods(client, sel)) {
    if (p.status?.conditions?.some((c: KObj) => c.type === 'Ready' && c.status === 'True')) continue;
    await client.update(`${PODS}/${p.metadata.name}/status`, {
      ...p,
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339() }] },
    });
  }
}

test('rolling-update arithmetic: 25% defaults round surge up and unavailable down; both zero means one unavailable', () => {
  assert.deepEqual(surgeAndUnavailable(deployment('a', 3)), { maxSurge: 1, maxUnavailable: 0 });
  assert.deepEqual(surgeAndUnavailable(deployment('a', 10)), { maxSurge: 3, maxUnavailable: 2 });
  assert.deepEqual(
    surgeAndUnavailable(
      deployment('a', 1, 'x', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } }),
    ),
    { maxSurge: 0, maxUnavailable: 1 },
  );
  const d = deployment('a', 4);
  const old = {
    metadata: { name: 'old', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { replicas: 4 },
    status: { availableReplicas: 4 },
  };
  const fresh = {
    metadata: { name: 'new', creationTimestamp: '2026-01-02T00:00:00Z' },
    spec: { replicas: 0 },
    status: { availableReplicas: 0 },
  };
  assert.equal(newRSReplicas(d, fresh, [old, fresh]), 1, 'surge 1 above 4');
  // New has 1 unavailable; unavailable 1 allowed: old may lose one of its available pods.
  assert.deepEqual([...scaleDownOld(d, { ...fresh, spec: { replicas: 1 } }, [old])], [['old', 3]]);
  assert.deepEqual(
    [...scaleDownOld(d, { ...fresh, spec: { replicas: 1 } }, [{ ...old, status: { availableReplicas: 3 } }])],
    [['old', 3]],
    'an unavailable old pod goes first',
  );
  assert.notEqual(templateHash(d.spec.template), templateHash(deployment('a', 4, 'app:2').spec.template));
  // What kubectl rollout undo writes back: a Go client's copy with zero values spelled out.
  const copied = {
    metadata: { creationTimestamp: null, labels: { app: 'a', 'pod-template-hash': 'x' } },
    spec: { containers: [{ name: 'c', image: 'app:1', resources: {} }], volumes: [] },
  };
  assert.ok(sameTemplate(d.spec.template, copied));
  assert.ok(
    !sameTemplate(d.spec.template, {
      ...copied,
      spec: { containers: [{ name: 'c', image: 'app:1', resources: { limits: { cpu: '1' } } }] },
    }),
  );
  assert.ok(
    !sameTemplate(d.spec.template, {
      ...copied,
      spec: { containers: [{ name: 'c', image: 'app:1', securityContext: { runAsUser: 0 } }] },
    }),
    'a zero that means something counts',
  );
  assert.match(templateHash(d.spec.template), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
});

test('a Deployment gets a ReplicaSet <name>-<hash> that creates its pods; scale through the scale subresource', async () => {
  const c = await cluster();
  try {
    await c.client.create(D, deployment('web', 3));
    const rs = await waitFor(async () => ((await c.client.get(RS)).items as KObj[])[0], 3000, 20, 'replica set');
    assert.equal(rs.metadata.name, `web-${rs.metadata.labels['pod-template-hash']}`);
    assert.equal(rs.metadata.annotations['deployment.kubernetes.io/revision'], '1');
    assert.equal(rs.metadata.ownerReferences[0].kind, 'Deployment');
    await waitFor(async () => (await pods(c.client, 'app=web')).length === 3, 3000, 20, '3 pods');
    const p = (await pods(c.client, 'app=web'))[0]!;
    assert.match(p.metadata.name, new RegExp(`^${rs.metadata.name}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
    assert.equal(p.metadata.ownerReferences[0].name, rs.metadata.name);
    await markReady(c.client, 'app=web');
    await waitFor(
      async () => (await c.client.get(`${D}/web`)).status?.availableReplicas === 3,
      3000,
      20,
      'deployment available',
    );
    const d = await c.client.get(`${D}/web`);
    assert.deepEqual(
      d.status.conditions.map((x: KObj) => [x.type, x.status, x.reason]),
      [
        ['Available', 'True', 'MinimumReplicasAvailable'],
        ['Progressing', 'True', 'NewReplicaSetAvailable'],
      ],
    );
    assert.equal(d.status.observedGeneration, d.metadata.generation);

    const dr = c.api.res('apps', 'deployments');
    assert.deepEqual(getScale(c.api, dr, 'default', 'web').status, { replicas: 3, selector: 'app=web' });
    updateScale(c.api, dr, 'default', 'web', { patch: { type: 'merge', body: { spec: { replicas: 5 } } } });
    await waitFor(async () => (await pods(c.client, 'app=web')).length === 5, 3000, 20, '5 pods');
    updateScale(c.api, dr, 'default', 'web', { put: { spec: { replicas: 2 } } });
    await waitFor(async () => (await pods(c.client, 'app=web')).length === 2, 3000, 20, '2 pods');
    const evs = (await c.client.get('/api/v1/namespaces/default/events')).items as KObj[];
    assert.ok(
      evs.some(
        (e) =>
          e.reason === 'ScalingReplicaSet' && e.message === `Scaled up replica set ${rs.metadata.name} from 0 to 3`,
      ),
    );
    assert.ok(evs.some((e) => e.reason === 'SuccessfulCreate' && e.involvedObject.name === rs.metadata.name));
    assert.ok(evs.some((e) => e.reason === 'SuccessfulDelete'));
  } finally {
    await c.stop();
  }
});

test('a new image rolls out without ever going below replicas - maxUnavailable ready pods', async () => {
  const c = await cluster();
  try {
    await c.client.create(
      D,
      deployment('roll', 4, 'app:1', { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } }),
    );
    await waitFor(async () => (await pods(c.client, 'app=roll')).length === 4, 3000, 20, '4 pods');
    await markReady(c.client, 'app=roll');
    await waitFor(async () => (await c.client.get(`${D}/roll`)).status?.availableReplicas === 4, 3000, 20, 'available');
    await c.client.patch(
      `${D}/roll`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'app:2' }] } } } },
      'strategic',
    );
    let minReady = Infinity;
    let maxTotal = 0;
    // Play kubelet: new pods become ready a moment after they appear; watch the counts on the way.
    await waitFor(
      async () => {
        const all = await pods(c.client, 'app=roll');
        const ready = all.filter((p) =>
          p.status?.conditions?.some((x: KObj) => x.type === 'Ready' && x.status === 'True'),
        );
        minReady = Math.min(minReady, ready.length);
        maxTotal = Math.max(maxTotal, all.length);
        await markReady(c.client, 'app=roll');
        const d = await c.client.get(`${D}/roll`);
        return (
          d.status?.observedGeneration === d.metadata.generation &&
          d.status?.updatedReplicas === 4 &&
          d.status?.replicas === 4 &&
          d.status?.availableReplicas === 4
        );
      },
      10_000,
      30,
      'rolled out',
    );
    assert.ok(minReady >= 3, `never fewer than 3 ready (saw ${minReady})`);
    assert.ok(maxTotal <= 5, `never more than 5 pods (saw ${maxTotal})`);
    const images = (await pods(c.client, 'app=roll')).map((p) => p.spec.containers[0].image);
    assert.deepEqual(images, ['app:2', 'app:2', 'app:2', 'app:2']);
    const sets = ((await c.client.get(RS)).items as KObj[]).filter((r) => r.metadata.labels.app === 'roll');
    assert.deepEqual(
      sets.map((r) => [r.metadata.annotations['deployment.kubernetes.io/revision'], r.spec.replicas]).sort(),
      [
        ['1', 0],
        ['2', 4],
      ],
    );
    assert.equal((await c.client.get(`${D}/roll`)).metadata.annotations['deployment.kubernetes.io/revision'], '2');

    // Back to app:1 (what `kubectl rollout undo` does): its ReplicaSet is reused and becomes revision 3.
    await c.client.patch(
      `${D}/roll`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'app:1' }] } } } },
      'strategic',
    );
    await waitFor(
      async () => {
        await markReady(c.client, 'app=roll');
        const rs1 = ((await c.client.get(RS)).items as KObj[]).find(
          (r) => r.spec.template.spec.containers[0].image === 'app:1',
        )!;
        return (
          rs1.spec.replicas === 4 &&
          (await c.client.get(`${D}/roll`)).metadata.annotations['deployment.kubernetes.io/revision'] === '3'
        );
      },
      10_000,
      30,
      'rolled back',
    );
    const back = ((await c.client.get(RS)).items as KObj[]).filter((r) => r.metadata.labels.app === 'roll');
    assert.equal(back.length, 2, 'no third ReplicaSet');
    assert.deepEqual(
      back
        .map((r) => [
          r.spec.template.spec.containers[0].image,
          r.metadata.annotations['deployment.kubernetes.io/revision'],
          r.metadata.annotations['deployment.kubernetes.io/revision-history'],
        ])
        .sort(),
      [
        ['app:1', '3', '1'],
        ['app:2', '2', undefined],
      ],
    );
  } finally {
    await c.stop();
  }
});

test('Progressing: a step forward renews lastUpdateTime, no step for progressDeadlineSeconds times out, a complete rollout stays complete', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const rs = { metadata: { name: 'web-abc' } };
  const counts = { replicas: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 };
  const at = (d: KObj, status: KObj, ms: number, created = false, complete = false) =>
    progressingCondition({ ...d, status }, rs, counts, created, complete, t0 + ms);
  const d = { metadata: { name: 'web' }, spec: { progressDeadlineSeconds: 10 } };

  const made = at(d, {}, 0, true);
  assert.deepEqual(
    [made.condition.status, made.condition.reason, made.condition.message],
    ['True', 'NewReplicaSetCreated', 'Created new replica set "web-abc"'],
  );
  assert.equal(made.recheckMs, 11_000, 'look again one second past the deadline');
  // Nothing moved for 9 s: still within the deadline, same condition.
  const before = { ...counts, conditions: [made.condition] };
  const still = at(d, before, 9000);
  assert.equal(still.condition, made.condition);
  assert.equal(still.recheckMs, 2000);
  // One more ready replica at 9 s renews the clock.
  const moved = at(d, { ...before, readyReplicas: 0 }, 9000);
  assert.deepEqual(
    [
      moved.condition.reason,
      moved.condition.message,
      moved.condition.lastUpdateTime,
      moved.condition.lastTransitionTime,
    ],
    ['ReplicaSetUpdated', 'ReplicaSet "web-abc" is progressing.', '2026-01-01T00:00:09Z', '2026-01-01T00:00:00Z'],
  );
  // No step for more than 10 s: timed out, and it stays so.
  const out = at(d, before, 10_001);
  assert.deepEqual(
    [out.condition.status, out.condition.reason, out.condition.message, out.recheckMs],
    ['False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-abc" has timed out progressing.', undefined],
  );
  assert.equal(at(d, { ...counts, conditions: [out.condition] }, 60_000).condition.reason, 'ProgressDeadlineExceeded');
  // A timed-out rollout that moves again is progressing again.
  assert.equal(
    at(d, { ...counts, availableReplicas: 0, conditions: [out.condition] }, 60_000).condition.status,
    'True',
  );

  const done = progressingCondition(
    { ...d, status: before },
    rs,
    { replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 },
    false,
    true,
    t0 + 5000,
  );
  assert.deepEqual([done.condition.reason, done.recheckMs], ['NewReplicaSetAvailable', undefined]);
  // Later a pod goes unready: the rollout is still complete, no deadline runs.
  const after = progressingCondition(
    { ...d, status: { conditions: [done.condition] } },
    rs,
    { replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1 },
    false,
    false,
    t0 + 999_000,
  );
  assert.deepEqual([after.condition, after.recheckMs], [done.condition, undefined]);

  const noDeadline = at({ ...d, spec: { progressDeadlineSeconds: 2 ** 31 - 1 } }, before, 999_999_000);
  assert.deepEqual(
    [noDeadline.condition, noDeadline.recheckMs],
    [made.condition, undefined],
    'MaxInt32: never times out',
  );
  const paused = at({ ...d, spec: { ...d.spec, paused: true } }, before, 999_000);
  assert.deepEqual(
    [paused.condition.status, paused.condition.reason, paused.recheckMs],
    ['Unknown', 'DeploymentPaused', undefined],
  );
  assert.equal(at(d, { ...counts, conditions: [paused.condition] }, 999_000).condition.reason, 'DeploymentResumed');
});

test('a Deployment whose pods never become ready gets ProgressDeadlineExceeded, which kubectl rollout status reports', async () => {
  const c = await cluster();
  try {
    await c.client.create(D, {
      ...deployment('stuck', 1),
      spec: { ...deployment('stuck', 1).spec, progressDeadlineSeconds: 1 },
    });
    await waitFor(async () => (await pods(c.client, 'app=stuck')).length === 1, 3000, 20, 'pod');
    const d = await waitFor(
      async () => {
        const x = await c.client.get(`${D}/stuck`);
        return x.status?.conditions?.some((k: KObj) => k.reason === 'ProgressDeadlineExceeded') ? x : undefined;
      },
      8000,
      50,
      'ProgressDeadlineExceeded',
    );
    const cond = d.status.conditions.find((k: KObj) => k.type === 'Progressing');
    assert.equal(cond.status, 'False');
    assert.match(cond.message, /^ReplicaSet "stuck-[a-z0-9]+" has timed out progressing\.$/);
    // Pods becoming ready later count as progress again.
    await markReady(c.client, 'app=stuck');
    await waitFor(
      async () =>
        (await c.client.get(`${D}/stuck`)).status.conditions.find((k: KObj) => k.type === 'Progressing').reason ===
        'NewReplicaSetAvailable',
      3000,
      20,
      'complete',
    );
  } finally {
    await c.stop();
  }
});

test('a scaling event mid-rollout spreads the change over the active ReplicaSets in proportion (upstream scale())', () => {
  const rs = (name: string, replicas: number, created: string, available = replicas) => ({
    metadata: {
      name,
      creationTimestamp: created,
      annotations: { 'deployment.kubernetes.io/desired-replicas': '10', 'deployment.kubernetes.io/max-replicas': '13' },
    },
    spec: { replicas },
    status: { availableReplicas: available },
  });
  const old = rs('old', 8, '2026-01-01T00:00:00Z');
  const fresh = rs('new', 5, '2026-01-02T00:00:00Z', 0);
  const d = (replicas: number) => ({ metadata: { name: 'web' }, spec: { replicas }, status: { replicas: 13 } });
  assert.equal(isScalingEvent(d(10), [fresh, old]), false);
  assert.equal(isScalingEvent(d(20), [fresh, old]), true);
  assert.equal(isScalingEvent(d(20), [{ ...old, spec: { replicas: 0 } }]), false, 'inactive ReplicaSets do not count');
  // 10 -> 20 with 25% surge: 25 allowed, 12 more; 8 and 5 of 13 become 15 and 10.
  assert.deepEqual(
    [...scaledSizes(d(20), fresh, [old])],
    [
      ['old', 15],
      ['new', 10],
    ],
  );
  // 10 -> 4: 5 allowed, 8 fewer; the bigger and older one gives up more.
  assert.deepEqual(
    [...scaledSizes(d(4), fresh, [old])],
    [
      ['old', 3],
      ['new', 2],
    ],
  );
  // To zero: everything goes.
  assert.deepEqual(
    [...scaledSizes(d(0), fresh, [old])],
    [
      ['old', 0],
      ['new', 0],
    ],
  );
  // One active ReplicaSet takes the whole count; a saturated new one ends the old ones.
  assert.deepEqual([...scaledSizes(d(20), { ...fresh, spec: { replicas: 0 } }, [old])], [['old', 20]]);
  const saturated = {
    ...rs('new', 20, '2026-01-02T00:00:00Z'),
    metadata: { ...fresh.metadata, annotations: { 'deployment.kubernetes.io/desired-replicas': '20' } },
  };
  assert.deepEqual([...scaledSizes(d(20), saturated, [old])], [['old', 0]]);
});

test('kubectl scale during a stuck rollout scales old and new ReplicaSets proportionally instead of only the new one', async () => {
  const c = await cluster();
  try {
    await c.client.create(D, deployment('prop', 10));
    await waitFor(async () => (await pods(c.client, 'app=prop')).length === 10, 5000, 20, '10 pods');
    await markReady(c.client, 'app=prop');
    await waitFor(
      async () => (await c.client.get(`${D}/prop`)).status?.availableReplicas === 10,
      3000,
      20,
      'available',
    );
    // A new template whose pods never become ready: the rollout stops at old 8, new 5 (surge 3, unavailable 2).
    await c.client.patch(
      `${D}/prop`,
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'app:2' }] } } } },
      'strategic',
    );
    const sizes = async () =>
      Object.fromEntries(
        ((await c.client.get(RS)).items as KObj[])
          .filter((r) => r.metadata.labels.app === 'prop')
          .map((r) => [r.spec.template.spec.containers[0].image, r.spec.replicas]),
      );
    await waitFor(
      async () => {
        const x = await sizes();
        return x['app:1'] === 8 && x['app:2'] === 5;
      },
      5000,
      20,
      'stuck at 8 + 5',
    );
    await c.client.patch(`${D}/prop`, { spec: { replicas: 20 } }, 'merge');
    await waitFor(
      async () => {
        const x = await sizes();
        return x['app:1'] === 15 && x['app:2'] === 10;
      },
      5000,
      20,
      'old 15, new 10',
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      await sizes(),
      { 'app:1': 15, 'app:2': 10 },
      'and the rollout holds there: nothing more is available',
    );
  } finally {
    await c.stop();
  }
});

test('deleting a Deployment deletes its ReplicaSets and their pods (background); Orphan leaves them unowned', async () => {
  const c = await cluster();
  try {
    await c.client.create(D, deployment('gone', 2));
    await waitFor(async () => (await pods(c.client, 'app=gone')).length === 2, 3000, 20, 'pods');
    await c.client.delete(`${D}/gone`);
    await waitFor(
      async () =>
        ((await c.client.get(RS)).items as KObj[]).length === 0 && (await pods(c.client, 'app=gone')).length === 0,
      5000,
      20,
      'cascade',
    );

    await c.client.create(D, deployment('kept', 1));
    await waitFor(async () => (await pods(c.client, 'app=kept')).length === 1, 3000, 20, 'pod');
    c.api.delete(c.api.res('apps', 'deployments'), 'default', 'kept', { propagationPolicy: 'Orphan' });
    await new Promise((r) => setTimeout(r, 300));
    const left = ((await c.client.get(RS)).items as KObj[]).filter((r) => r.metadata.labels.app === 'kept');
    assert.equal(left.length, 1);
    assert.equal(left[0]!.metadata.ownerReferences, undefined);
  } finally {
    await c.stop();
  }
});

test('a ReplicaSet adopts a matching orphan pod instead of creating one more', async () => {
  const c = await cluster();
  try {
    await c.client.create(PODS, {
      metadata: { name: 'stray', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    await c.client.create(RS, {
      metadata: { name: 'adopt' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'adopt' } },
        template: { metadata: { labels: { app: 'adopt' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    await waitFor(async () => (await pods(c.client, 'app=adopt')).length === 2, 3000, 20, '2 pods');
    await new Promise((r) => setTimeout(r, 200));
    const all = await pods(c.client, 'app=adopt');
    assert.equal(all.length, 2);
    assert.equal(all.find((p) => p.metadata.name === 'stray')?.metadata.ownerReferences[0].name, 'adopt');
  } finally {
    await c.stop();
  }
});

test("a Deployment's annotations are copied to its new ReplicaSet but for the revision and apply ones", () => {
  const d = {
    'kubernetes.io/change-cause': 'kubectl set image deploy/web web=nginx:2',
    'kubectl.kubernetes.io/last-applied-configuration': '{}',
    'deployment.kubernetes.io/revision': '3',
    team: 'web',
  };
  assert.deepEqual(withDeploymentAnnotations(d, { 'deployment.kubernetes.io/revision': '4' }), {
    'deployment.kubernetes.io/revision': '4',
    'kubernetes.io/change-cause': 'kubectl set image deploy/web web=nginx:2',
    team: 'web',
  });
  assert.equal(
    withDeploymentAnnotations(d, { 'kubernetes.io/change-cause': d['kubernetes.io/change-cause'], team: 'web' }),
    undefined,
    'nothing to copy: no write',
  );
});

test('a revision beyond 2^53 is counted exactly: the next ReplicaSet takes it plus one', async () => {
  const c = await cluster();
  try {
    const big = '3546343826724306000';
    await c.client.create(RS, {
      metadata: {
        name: 'old',
        labels: { app: 'big' },
        annotations: { 'deployment.kubernetes.io/revision': big },
      },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'big' } },
        template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'c', image: 'old' }] } },
      },
    });
    await c.client.create(D, deployment('big', 1, 'new'));
    await waitFor(
      async () =>
        ((await c.client.get(RS)).items as KObj[]).some(
          (rs) => rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === '3546343826724306001',
        ),
      5000,
      20,
      'revision + 1',
    );
  } finally {
    await c.stop();
  }
});
