// cronjob-controller (upstream's v2): creates a Job per scheduled time,
// honouring suspend, startingDeadlineSeconds and concurrencyPolicy, keeps
// status.active, lastScheduleTime and lastSuccessfulTime, and deletes
// finished Jobs beyond the history limits. Decisions are cronjob-model.ts's.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder, ObjectRef } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { jobFinishedAs, jobFor, jobsToClean, mostRecentScheduleTime, nextScheduleTime } from './cronjob-model.js';
import { RetryingQueue } from './key-queue.js';
import { controllerRef, notFoundOk, ownedBy, ownerRefTo } from './workload-model.js';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;
const jobRef = (j: KObj): KObj => ({
  kind: 'Job',
  namespace: j.metadata.namespace,
  name: j.metadata.name,
  uid: j.metadata.uid,
  apiVersion: 'batch/v1',
  resourceVersion: j.metadata.resourceVersion,
});

export class CronJobController {
  private readonly cronjobs: Informer;
  private readonly jobs: Informer;
  private readonly queue: RetryingQueue;
  /** Jobs already reported as UnexpectedJob (once each). */
  private readonly reported = new Set<string>();

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new RetryingQueue('cronjob-controller', log, (k) => this.sync(k));
    const onErr = (what: string) => (e: Error) => log.warn(`cronjob-controller: ${what} watch: ${e.message}`);
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    const onJob = (j: KObj): void => {
      const ref = controllerRef(j);
      if (ref?.kind === 'CronJob') this.queue.add(`${j.metadata.namespace}/${ref.name}`);
    };
    this.cronjobs = new Informer(client, {
      path: '/apis/batch/v1/cronjobs',
      onAdd: enq,
      onUpdate: enq,
      onError: onErr('cronjob'),
    });
    this.jobs = new Informer(client, {
      path: '/apis/batch/v1/jobs',
      onAdd: onJob,
      onUpdate: onJob,
      onDelete: onJob,
      onError: onErr('job'),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.cronjobs.start(), this.jobs.start()]);
    for (const c of this.cronjobs.list()) this.queue.add(keyOf(c));
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.cronjobs.stop(), this.jobs.stop()]);
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const base = `/apis/batch/v1/namespaces/${ns}`;
    const cj = await this.client.get(`${base}/cronjobs/${name}`).catch(notFoundOk);
    if (!cj || cj.metadata.deletionTimestamp) return;
    const ref: ObjectRef = { kind: 'CronJob', apiVersion: 'batch/v1', namespace: ns, name, uid: cj.metadata.uid };
    const jobs = ((await this.client.get(`${base}/jobs`)).items as KObj[]).filter((j) => ownedBy(j, cj));
    const status: KObj = { ...(cj.status ?? {}) };
    const byUid = new Map(jobs.map((j) => [j.metadata.uid as string, j]));

    // Active jobs: finished ones leave the list (a Complete one sets lastSuccessfulTime), vanished ones too.
    const active: KObj[] = [];
    for (const a of (status.active ?? []) as KObj[]) {
      const j = byUid.get(a.uid);
      if (!j) {
        this.events.event(ref, 'Normal', 'MissingJob', `Active job went missing: ${a.name}`);
        continue;
      }
      const done = jobFinishedAs(j);
      if (!done) active.push(a);
      else {
        this.events.event(
          ref,
          'Normal',
          'SawCompletedJob',
          `Saw completed job: ${j.metadata.name}, condition: ${done}`,
        );
        if (
          done === 'Complete' &&
          j.status?.completionTime &&
          (!status.lastSuccessfulTime || Date.parse(j.status.completionTime) > Date.parse(status.lastSuccessfulTime))
        )
          status.lastSuccessfulTime = j.status.completionTime;
      }
    }
    // A running job of ours that is not listed (kubectl create job --from, or created just before a crash) is reported, not adopted, as upstream.
    const listed = new Set(((cj.status?.active ?? []) as KObj[]).map((a) => a.uid as string));
    for (const j of jobs)
      if (!jobFinishedAs(j) && !listed.has(j.metadata.uid) && !this.reported.has(j.metadata.uid)) {
        this.reported.add(j.metadata.uid);
        this.events.event(
          ref,
          'Warning',
          'UnexpectedJob',
          `Saw a job that the controller did not create or forgot: ${j.metadata.name}`,
        );
      }
    status.active = active.length ? active : undefined;

    for (const j of jobsToClean(cj, jobs)) {
      await this.client
        .delete(`${base}/jobs/${j.metadata.name}`, { propagationPolicy: 'Background' })
        .catch(notFoundOk);
      this.events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted job ${j.metadata.name}`);
    }

    const now = new Date(this.now());
    if (!cj.spec?.suspend) {
      const due = mostRecentScheduleTime(cj, now);
      if (due && due.missed > 100)
        this.events.event(
          ref,
          'Warning',
          'TooManyMissedTimes',
          'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
        );
      const deadline = cj.spec?.startingDeadlineSeconds as number | undefined;
      const tooLate =
        due && deadline !== undefined && deadline !== null && due.time.getTime() + deadline * 1000 < now.getTime();
      const already = due && status.lastScheduleTime && Date.parse(status.lastScheduleTime) >= due.time.getTime();
      if (due && tooLate)
        this.events.event(ref, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc3339(due.time)}`);
      else if (due && !already && !(cj.spec?.concurrencyPolicy === 'Forbid' && status.active?.length)) {
        if (cj.spec?.concurrencyPolicy === 'Replace') {
          for (const a of (status.active ?? []) as KObj[]) {
            await this.client.delete(`${base}/jobs/${a.name}`, { propagationPolicy: 'Background' }).catch(notFoundOk);
            this.events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted job ${a.name}`);
          }
          status.active = undefined;
        }
        const want = jobFor(cj, due.time, ownerRefTo(cj));
        let made: KObj | undefined;
        try {
          made = await this.client.create(`${base}/jobs`, want);
          this.events.event(ref, 'Normal', 'SuccessfulCreate', `Created job ${made.metadata.name}`);
        } catch (e) {
          if (!(e instanceof KubeApiError && e.code === 409)) {
            this.events.event(ref, 'Warning', 'FailedCreate', `Error creating job: ${(e as Error).message}`);
            throw e;
          }
          // Created before (a retry): ours if it is owned by this CronJob.
          const existing = await this.client.get(`${base}/jobs/${want.metadata.name}`).catch(notFoundOk);
          if (existing && ownedBy(existing, cj)) made = existing;
        }
        if (made && !((status.active ?? []) as KObj[]).some((a) => a.uid === made!.metadata.uid))
          status.active = [...((status.active ?? []) as KObj[]), jobRef(made)];
        status.lastScheduleTime = rfc3339(due.time);
      }
      this.queue.later(key, nextScheduleTime(cj, now).getTime() - now.getTime() + 100);
    }
    if (status.active === undefined) delete status.active;
    if (JSON.stringify(status) !== JSON.stringify(cj.status ?? {}))
      await this.client.update(`${base}/cronjobs/${name}/status`, { ...cj, status });
  }
}
