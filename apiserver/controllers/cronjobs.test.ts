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
import { CronJobController } from './cronjob-controller.js';
import {
  jobName,
  jobsToClean,
  mostRecentScheduleTime,
  nextScheduleTime,
  scheduleError,
  timeZoneError,
} from './cronjob-model.js';

const CJ = '/apis/batch/v1/namespaces/default/cronjobs';
const JOBS = '/apis/batch/v1/namespaces/default/jobs';
const cronjob = (name: string, spec: KObj = {}): KObj => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: {
    schedule: '*/1 * * * *',
    jobTemplate: {
      spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } },
    },
    ...spec,
  },
});

test('CronJob model: schedules as upstream accepts them, time zones, missed starts, job names, history limits', () => {
  assert.equal(scheduleError('*/5 * * * *'), undefined);
  assert.equal(scheduleError('@hourly'), undefined);
  assert.equal(scheduleError('* * * *'), 'expected exactly 5 fields, found 4: * * * *');
  assert.equal(
    scheduleError('CRON_TZ=UTC * * * * *'),
    'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
  );
  assert.match(scheduleError('61 * * * *')!, /61/);
  assert.equal(timeZoneError('Europe/Berlin'), undefined);
  assert.equal(timeZoneError('Mars/Olympus'), 'unknown time zone Mars/Olympus');
  const cj = {
    metadata: { name: 'c', creationTimestamp: '2026-12-03T10:00:30Z' },
    spec: { schedule: '*/5 * * * *', timeZone: 'UTC' },
  };
  assert.deepEqual(mostRecentScheduleTime(cj, new Date('2026-12-03T10:04:00Z')), undefined);
  assert.deepEqual(mostRecentScheduleTime(cj, new Date('2026-12-03T10:17:00Z')), {
    time: new Date('2026-12-03T10:15:00Z'),
    missed: 3,
  });
  assert.deepEqual(
    mostRecentScheduleTime(
      { ...cj, status: { lastScheduleTime: '2026-12-03T10:10:00Z' } },
      new Date('2026-12-03T10:17:00Z'),
    ),
    { time: new Date('2026-12-03T10:15:00Z'), missed: 1 },
  );
  assert.deepEqual(
    mostRecentScheduleTime(
      { ...cj, spec: { ...cj.spec, startingDeadlineSeconds: 60 } },
      new Date('2026-12-03T10:17:00Z'),
    ),
    undefined,
    'starts older than the deadline are not due',
  );
  assert.equal(
    nextScheduleTime(
      { ...cj, spec: { schedule: '0 9 * * *', timeZone: 'Europe/Berlin' } },
      new Date('2026-12-03T10:00:00Z'),
    ).toISOString(),
    '2026-12-04T08:00:00.000Z',
  );
  assert.equal(jobName(cj, new Date('2026-12-03T10:15:00Z')), `c-${Date.parse('2026-12-03T10:15:00Z') / 60000}`);
  const done = (n: string, t: string, type: string) => ({
    metadata: { name: n },
    status: { startTime: t, conditions: [{ type, status: 'True' }] },
  });
  const clean = jobsToClean({ spec: { successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 } }, [
    done('a', '2026-12-03T10:00:00Z', 'Complete'),
    done('b', '2026-12-03T10:01:00Z', 'Complete'),
    done('c', '2026-12-03T10:02:00Z', 'Failed'),
    { metadata: { name: 'running' }, status: {} },
  ]);
  assert.deepEqual(
    clean.map((j) => j.metadata.name),
    ['a'],
  );
});

test('CronJob validation and defaults', () => {
  const api = new Api(new Store());
  const cjs = api.res('batch', 'cronjobs');
  const c = api.create(cjs, 'default', cronjob('ok'));
  assert.deepEqual(
    [c.spec.concurrencyPolicy, c.spec.suspend, c.spec.successfulJobsHistoryLimit, c.spec.failedJobsHistoryLimit],
    ['Allow', false, 3, 1],
  );
  const invalid = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 422 && re.test(e.message);
  assert.throws(
    () => api.create(cjs, 'default', cronjob('bad', { schedule: '* * *' })),
    invalid(/spec\.schedule: Invalid value: "\* \* \*": expected exactly 5 fields, found 3/),
  );
  assert.throws(
    () => api.create(cjs, 'default', cronjob('tz', { timeZone: 'Nowhere/Here' })),
    invalid(/spec\.timeZone: Invalid value: "Nowhere\/Here": unknown time zone Nowhere\/Here/),
  );
  assert.throws(
    () => api.create(cjs, 'default', cronjob('x'.repeat(53))),
    invalid(/must be no more than 52 characters/),
  );
  assert.throws(
    () =>
      api.create(cjs, 'default', {
        ...cronjob('rp'),
        spec: {
          schedule: '@daily',
          jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'i' }] } } } },
        },
      }),
    invalid(/spec\.jobTemplate\.spec\.template\.spec\.restartPolicy: Unsupported value: "Always"/),
  );
});

test('the controller starts a Job per due time (owned, named by the minute), keeps status.active and lastScheduleTime; Forbid waits, Replace replaces; finished Jobs leave active', async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  let offset = 0;
  const cc = new CronJobController(
    client,
    log,
    new ApiEventRecorder(client, { component: 'cronjob-controller' }, log),
    () => Date.now() + offset,
  );
  await cc.start();
  try {
    await client.create(CJ, cronjob('every', { concurrencyPolicy: 'Forbid' }));
    await client.create(CJ, cronjob('swap', { concurrencyPolicy: 'Replace' }));
    const jobsOf = async (cj: string): Promise<KObj[]> =>
      ((await client.get(JOBS)).items as KObj[]).filter((j) => j.metadata.ownerReferences?.[0]?.name === cj);
    offset = 61_000;
    await client.patch(`${CJ}/every`, { metadata: { labels: { poke: '1' } } }, 'merge');
    await client.patch(`${CJ}/swap`, { metadata: { labels: { poke: '1' } } }, 'merge');
    const [first] = await waitFor(
      async () => ((await jobsOf('every')).length === 1 ? jobsOf('every') : undefined),
      5000,
      20,
    );
    assert.match(first!.metadata.name, /^every-\d+$/);
    assert.equal(first!.metadata.ownerReferences[0].kind, 'CronJob');
    assert.ok(first!.metadata.annotations['batch.kubernetes.io/cronjob-scheduled-timestamp']);
    const cj = await waitFor(
      async () => {
        const x = await client.get(`${CJ}/every`);
        return x.status?.active?.length === 1 && x.status.lastScheduleTime ? x : undefined;
      },
      5000,
      20,
    );
    assert.equal(cj.status.active[0].name, first!.metadata.name);
    await waitFor(async () => (await jobsOf('swap')).length === 1, 5000, 20);
    // A minute later: Forbid keeps the running one alone; Replace deletes it for a new one.
    offset = 121_000;
    await client.patch(`${CJ}/every`, { metadata: { labels: { poke: '2' } } }, 'merge');
    await client.patch(`${CJ}/swap`, { metadata: { labels: { poke: '2' } } }, 'merge');
    await waitFor(
      async () => {
        const js = await jobsOf('swap');
        return (
          js.length === 1 &&
          (await client.get(`${CJ}/swap`)).status.active?.[0]?.name === js[0]!.metadata.name &&
          js[0]!.metadata.name !== `swap-${first!.metadata.name.split('-')[1]}`
        );
      },
      5000,
      20,
    );
    assert.equal((await jobsOf('every')).length, 1, 'Forbid: no second job while one runs');
    // The running job completes: it leaves active, lastSuccessfulTime is set, and the missed start runs.
    const j = await client.get(`${JOBS}/${first!.metadata.name}`);
    const t = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await client.update(`${JOBS}/${first!.metadata.name}/status`, {
      ...j,
      status: { startTime: t, completionTime: t, succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
    });
    const after = await waitFor(
      async () => {
        const x = await client.get(`${CJ}/every`);
        return x.status?.lastSuccessfulTime && (await jobsOf('every')).length === 2 ? x : undefined;
      },
      5000,
      20,
    );
    assert.equal(after.status.active.length, 1);
    assert.notEqual(after.status.active[0].name, first!.metadata.name);
  } finally {
    await cc.stop();
  }
});
