import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job-controller.js';
import {
  completionsReached,
  exhaustedIndexes,
  failureBackoffMs,
  formatIndexes,
  indexesToCreate,
  indexFailures,
  JOB_TRACKING_FINALIZER,
  matchPodFailurePolicy,
  matchSuccessPolicy,
  parseIndexes,
  podFor,
  podsToCreate,
} from './job-model.js';
import { TtlAfterFinishedController } from './ttl-after-finished.js';

const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const PODS = '/api/v1/namespaces/default/pods';

const job = (name: string, spec: KObj = {}): KObj => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } }, ...spec },
});

async function cluster() {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const jc = new JobController(client, log, new ApiEventRecorder(client, { component: 'job-controller' }, log));
  const ttl = new TtlAfterFinishedController(client, log);
  const gc = new GarbageCollector(client, log, 60_000);
  await Promise.all([jc.start(), ttl.start(), gc.start()]);
  return { api, client, stop: () => Promise.all([jc.stop(), ttl.stop(), gc.stop()]) };
}

const jobPods = async (client: LocalClient, name: string): Promise<KObj[]> =>
  (await client.get(PODS, { labelSelector: `batch.kubernetes.io/job-name=${name}` })).items as KObj[];
const finish = async (
  client: LocalClient,
  p: KObj,
  phase: 'Succeeded' | 'Failed',
  exitCode = phase === 'Succeeded' ? 0 : 1,
): Promise<void> => {
  const cur = await client.get(`${PODS}/${p.metadata.name}`);
  await client.update(`${PODS}/${p.metadata.name}/status`, {
    ...cur,
    status: {
      phase,
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 0,
          image: 'busybox',
          imageID: '',
          state: { terminated: { exitCode } },
        },
      ],
    },
  });
};
const cond = (j: KObj, t: string): KObj | undefined =>
  (j.status?.conditions ?? []).find((c: KObj) => c.type === t && c.status === 'True');

test('Job model: index sets, how many pods to add, completion, failure backoff, podFailurePolicy matches, pods of an Indexed Job', () => {
  assert.equal(formatIndexes([0, 1, 2, 4, 6, 7]), '0-2,4,6-7');
  assert.deepEqual([...parseIndexes('0-2,4')], [0, 1, 2, 4]);
  assert.equal(podsToCreate({ spec: { parallelism: 3, completions: 5 } }, 1, 3), 1, 'two left, one running');
  assert.equal(podsToCreate({ spec: { parallelism: 2 } }, 0, 1), 0, 'a work queue is done once one succeeded');
  assert.equal(completionsReached({ spec: { completions: 2 } }, 2, 0, new Set()), true);
  assert.equal(
    completionsReached({ spec: { completions: 3, completionMode: 'Indexed' } }, 3, 0, new Set([0, 2])),
    false,
  );
  assert.deepEqual(
    indexesToCreate(
      { spec: { completions: 5 } },
      [{ metadata: { annotations: { 'batch.kubernetes.io/job-completion-index': '1' } } }],
      new Set([0]),
      2,
    ),
    [2, 3],
  );
  assert.deepEqual([1, 2, 3, 7, 30].map(failureBackoffMs), [10_000, 20_000, 40_000, 360_000, 360_000]);
  const j = {
    spec: {
      podFailurePolicy: {
        rules: [
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
          { action: 'FailJob', onExitCodes: { containerName: 'c', operator: 'In', values: [42] } },
        ],
      },
    },
  };
  const failed = (code: number, conds: KObj[] = []) => ({
    metadata: { name: 'p', namespace: 'ns' },
    status: {
      phase: 'Failed',
      conditions: conds,
      containerStatuses: [{ name: 'c', state: { terminated: { exitCode: code } } }],
    },
  });
  assert.deepEqual(matchPodFailurePolicy(j, failed(42)), {
    action: 'FailJob',
    message: 'Container c for pod ns/p failed with exit code 42 matching FailJob rule at index 1',
  });
  assert.equal(matchPodFailurePolicy(j, failed(1)), undefined);
  assert.equal(
    matchPodFailurePolicy(j, failed(42, [{ type: 'DisruptionTarget', status: 'True' }]))?.action,
    'Ignore',
    'rules are tried in order: the first that matches wins',
  );
  const p = podFor(
    {
      metadata: { name: 'ix' },
      spec: { template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    },
    3,
    { uid: 'u' },
  );
  assert.equal(p.metadata.generateName, 'ix-3-');
  assert.equal(p.metadata.annotations['batch.kubernetes.io/job-completion-index'], '3');
  assert.equal(p.metadata.labels['batch.kubernetes.io/job-completion-index'], '3');
  assert.equal(p.spec.hostname, 'ix-3');
  assert.deepEqual(p.spec.containers[0].env[0], {
    name: 'JOB_COMPLETION_INDEX',
    valueFrom: {
      fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
    },
  });
  assert.deepEqual(p.metadata.finalizers, [JOB_TRACKING_FINALIZER]);
});

test('Job defaults and validation: generated selector and labels, restartPolicy, Indexed needs completions, immutable template', () => {
  const api = new Api(new Store());
  const jobs = api.res('batch', 'jobs');
  const j = api.create(jobs, 'default', job('a'));
  assert.deepEqual(
    [
      j.spec.completions,
      j.spec.parallelism,
      j.spec.backoffLimit,
      j.spec.completionMode,
      j.spec.suspend,
      j.spec.podReplacementPolicy,
    ],
    [1, 1, 6, 'NonIndexed', false, 'TerminatingOrFailed'],
  );
  assert.deepEqual(j.spec.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': j.metadata.uid } });
  assert.equal(j.spec.template.metadata.labels['job-name'], 'a');
  assert.equal(j.spec.template.metadata.labels['controller-uid'], j.metadata.uid);
  const invalid = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 422 && re.test(e.message);
  assert.throws(
    () =>
      api.create(jobs, 'default', {
        ...job('b'),
        spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
      }),
    invalid(/spec\.template\.spec\.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"/),
  );
  assert.throws(
    () => api.create(jobs, 'default', job('c', { completionMode: 'Indexed', parallelism: 2 })),
    invalid(/spec\.completions: Required value: when completion mode is Indexed/),
  );
  assert.throws(
    () => api.create(jobs, 'default', job('d', { backoffLimit: -1 })),
    invalid(/spec\.backoffLimit: Invalid value: -1: must be greater than or equal to 0/),
  );
  const cur = api.get(jobs, 'default', 'a');
  cur.spec.template.spec.containers[0].image = 'other';
  assert.throws(
    () => api.update(jobs, 'default', 'a', cur),
    invalid(/spec\.template: Invalid value: .*field is immutable/),
  );
});

test('a Job runs its pods to completion: pods carry the tracking finalizer until counted; SuccessCriteriaMet, then Complete with a completionTime', async () => {
  const c = await cluster();
  try {
    await c.client.create(JOBS, job('two', { completions: 3, parallelism: 2 }));
    let ps = await waitFor(
      async () => ((await jobPods(c.client, 'two')).length === 2 ? jobPods(c.client, 'two') : undefined),
      5000,
      20,
    );
    assert.ok(ps.every((p) => p.metadata.finalizers.includes(JOB_TRACKING_FINALIZER)));
    await finish(c.client, ps[0]!, 'Succeeded');
    await waitFor(async () => (await jobPods(c.client, 'two')).length === 3, 5000, 20);
    ps = await jobPods(c.client, 'two');
    for (const p of ps) if (p.status?.phase !== 'Succeeded') await finish(c.client, p, 'Succeeded');
    const done = await waitFor(
      async () => {
        const j = await c.client.get(`${JOBS}/two`);
        return cond(j, 'Complete') ? j : undefined;
      },
      5000,
      20,
    );
    assert.equal(done.status.succeeded, 3);
    assert.equal(done.status.failed, 0);
    assert.ok(cond(done, 'SuccessCriteriaMet'));
    assert.equal(cond(done, 'Complete')!.reason, 'CompletionsReached');
    assert.ok(done.status.completionTime && done.status.startTime);
    assert.deepEqual(done.status.uncountedTerminatedPods, {});
    await waitFor(
      async () => (await jobPods(c.client, 'two')).every((p) => !(p.metadata.finalizers ?? []).length),
      5000,
      20,
    );
  } finally {
    await c.stop();
  }
});

test('a failed pod past backoffLimit fails the Job (FailureTarget, then Failed: BackoffLimitExceeded); a FailJob rule fails it at once', async () => {
  const c = await cluster();
  try {
    await c.client.create(JOBS, job('bad', { backoffLimit: 0 }));
    const [p] = await waitFor(
      async () => ((await jobPods(c.client, 'bad')).length === 1 ? jobPods(c.client, 'bad') : undefined),
      5000,
      20,
    );
    await finish(c.client, p!, 'Failed');
    const j = await waitFor(
      async () => {
        const x = await c.client.get(`${JOBS}/bad`);
        return cond(x, 'Failed') ? x : undefined;
      },
      5000,
      20,
    );
    assert.deepEqual(
      [cond(j, 'Failed')!.reason, cond(j, 'Failed')!.message, j.status.failed],
      ['BackoffLimitExceeded', 'Job has reached the specified backoff limit', 1],
    );
    assert.ok(cond(j, 'FailureTarget'));
    await c.client.create(
      JOBS,
      job('rule', {
        backoffLimit: 5,
        podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [42] } }] },
      }),
    );
    const [q] = await waitFor(
      async () => ((await jobPods(c.client, 'rule')).length === 1 ? jobPods(c.client, 'rule') : undefined),
      5000,
      20,
    );
    await finish(c.client, q!, 'Failed', 42);
    const r = await waitFor(
      async () => {
        const x = await c.client.get(`${JOBS}/rule`);
        return cond(x, 'Failed') ? x : undefined;
      },
      5000,
      20,
    );
    assert.equal(cond(r, 'Failed')!.reason, 'PodFailurePolicy');
    assert.match(
      cond(r, 'Failed')!.message,
      /^Container c for pod default\/rule-\w+ failed with exit code 42 matching FailJob rule at index 0$/,
    );
  } finally {
    await c.stop();
  }
});

test('an Indexed Job runs one pod per index (JOB_COMPLETION_INDEX, hostname) and records completedIndexes; ttlSecondsAfterFinished deletes it with its pods', async () => {
  const c = await cluster();
  try {
    await c.client.create(
      JOBS,
      job('ix', { completions: 3, parallelism: 3, completionMode: 'Indexed', ttlSecondsAfterFinished: 0 }),
    );
    const ps = await waitFor(
      async () => ((await jobPods(c.client, 'ix')).length === 3 ? jobPods(c.client, 'ix') : undefined),
      5000,
      20,
    );
    assert.deepEqual(ps.map((p) => p.spec.hostname).sort(), ['ix-0', 'ix-1', 'ix-2']);
    for (const p of ps) await finish(c.client, p, 'Succeeded');
    await waitFor(
      async () => {
        try {
          await c.client.get(`${JOBS}/ix`);
          return false;
        } catch {
          return true;
        }
      },
      5000,
      20,
    );
    await waitFor(async () => (await jobPods(c.client, 'ix')).length === 0, 5000, 20);
  } finally {
    await c.stop();
  }
});

test('suspend deletes the running pods without counting them (Suspended), resuming starts them again', async () => {
  const c = await cluster();
  try {
    await c.client.create(JOBS, job('s', { parallelism: 2, completions: 2 }));
    await waitFor(async () => (await jobPods(c.client, 's')).length === 2, 5000, 20);
    await c.client.patch(`${JOBS}/s`, { spec: { suspend: true } }, 'merge');
    const j = await waitFor(
      async () => {
        const x = await c.client.get(`${JOBS}/s`);
        return cond(x, 'Suspended') && (await jobPods(c.client, 's')).length === 0 ? x : undefined;
      },
      5000,
      20,
    );
    assert.equal(j.status.failed, 0, 'pods deleted by suspension are not failures');
    assert.equal(cond(j, 'Suspended')!.reason, 'JobSuspended');
    await c.client.patch(`${JOBS}/s`, { spec: { suspend: false } }, 'merge');
    await waitFor(async () => (await jobPods(c.client, 's')).length === 2, 5000, 20);
    const r = await c.client.get(`${JOBS}/s`);
    assert.equal(r.status.conditions.find((x: KObj) => x.type === 'Suspended').reason, 'JobResumed');
  } finally {
    await c.stop();
  }
});

test('backoffLimitPerIndex (failedIndexes, FailedIndexes, MaxFailedIndexesExceeded, FailIndex), successPolicy and managedBy', async () => {
  const failedPod = (i: number, count: number) => ({
    metadata: {
      annotations: {
        'batch.kubernetes.io/job-completion-index': String(i),
        'batch.kubernetes.io/job-index-failure-count': String(count),
      },
    },
    status: { phase: 'Failed' },
  });
  const perIndex = {
    metadata: { name: 'x' },
    spec: { completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1 },
  };
  assert.equal(indexFailures(perIndex, [failedPod(1, 0), failedPod(1, 1), failedPod(2, 0)], 1), 2);
  assert.deepEqual(exhaustedIndexes(perIndex, [failedPod(1, 0), failedPod(1, 1), failedPod(2, 0)]), [1]);
  assert.equal(
    matchSuccessPolicy(
      {
        spec: { successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }, { succeededIndexes: '4' }] } },
      },
      new Set([4]),
    ),
    'Matched rules at index 1',
  );
  assert.equal(
    matchSuccessPolicy(
      { spec: { successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }] } } },
      new Set([0, 3]),
    ),
    undefined,
  );

  const c = await cluster();
  const indexed = (name: string, spec: KObj) =>
    job(name, { completionMode: 'Indexed', completions: 3, parallelism: 3, ...spec });
  const byIndex = async (name: string) =>
    new Map(
      (await jobPods(c.client, name)).map((p) => [
        Number(p.metadata.annotations['batch.kubernetes.io/job-completion-index']),
        p,
      ]),
    );
  const failedWith = async (name: string) =>
    waitFor(
      async () => {
        const x = await c.client.get(`${JOBS}/${name}`);
        return cond(x, 'Failed') ? x : undefined;
      },
      5000,
      20,
      `${name} Failed`,
    );
  try {
    await c.client.create(JOBS, indexed('per', { backoffLimitPerIndex: 0 }));
    await waitFor(async () => (await byIndex('per')).size === 3, 5000, 20, 'three indexes');
    let pods = await byIndex('per');
    assert.equal(pods.get(0)!.metadata.annotations['batch.kubernetes.io/job-index-failure-count'], '0');
    await finish(c.client, pods.get(1)!, 'Failed');
    await waitFor(
      async () => (await c.client.get(`${JOBS}/per`)).status?.failedIndexes === '1',
      5000,
      20,
      'index 1 failed for good',
    );
    await finish(c.client, pods.get(0)!, 'Succeeded');
    await finish(c.client, pods.get(2)!, 'Succeeded');
    let j = await failedWith('per');
    assert.deepEqual(
      [cond(j, 'Failed')!.reason, cond(j, 'Failed')!.message, j.status.completedIndexes, j.status.failedIndexes],
      ['FailedIndexes', 'Job has failed indexes', '0,2', '1'],
    );
    assert.equal((await jobPods(c.client, 'per')).length, 3, 'the failed index was not retried');

    await c.client.create(JOBS, indexed('max', { backoffLimitPerIndex: 0, maxFailedIndexes: 0 }));
    await waitFor(async () => (await byIndex('max')).size === 3, 5000, 20, 'three indexes');
    await finish(c.client, (await byIndex('max')).get(2)!, 'Failed');
    j = await failedWith('max');
    assert.deepEqual(
      [cond(j, 'Failed')!.reason, cond(j, 'Failed')!.message],
      ['MaxFailedIndexesExceeded', 'Job has exceeded the specified maximum number of failed indexes'],
    );

    await c.client.create(
      JOBS,
      indexed('rule', {
        backoffLimitPerIndex: 5,
        podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [42] } }] },
      }),
    );
    await waitFor(async () => (await byIndex('rule')).size === 3, 5000, 20, 'three indexes');
    await finish(c.client, (await byIndex('rule')).get(0)!, 'Failed', 42);
    await waitFor(
      async () => (await c.client.get(`${JOBS}/rule`)).status?.failedIndexes === '0',
      5000,
      20,
      'FailIndex',
    );

    await c.client.create(
      JOBS,
      job('leader', {
        completionMode: 'Indexed',
        completions: 5,
        parallelism: 5,
        successPolicy: { rules: [{ succeededIndexes: '0' }] },
      }),
    );
    await waitFor(async () => (await byIndex('leader')).size === 5, 5000, 20, 'five indexes');
    pods = await byIndex('leader');
    await finish(c.client, pods.get(0)!, 'Succeeded');
    j = await waitFor(
      async () => {
        const x = await c.client.get(`${JOBS}/leader`);
        return cond(x, 'Complete') ? x : undefined;
      },
      5000,
      20,
      'complete by its success policy',
    );
    assert.deepEqual(
      [cond(j, 'SuccessCriteriaMet')!.reason, cond(j, 'Complete')!.message],
      ['SuccessPolicy', 'Matched rules at index 0'],
    );
    assert.equal(
      (await jobPods(c.client, 'leader')).filter(
        (p) => !p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded',
      ).length,
      0,
      'the other indexes are stopped',
    );

    await c.client.create(JOBS, job('elsewhere', { managedBy: 'example.com/multikueue' }));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await jobPods(c.client, 'elsewhere')).length, 0, 'another controller runs it');
    await assert.rejects(
      c.client.create(JOBS, job('bad', { backoffLimitPerIndex: 1 })),
      (e: unknown) =>
        (e as { code?: number }).code === 422 &&
        /spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode/.test((e as Error).message),
    );
  } finally {
    await c.stop();
  }
});
