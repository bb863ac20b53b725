// job-controller (upstream pkg/controller/job): runs each Job's pods to
// completion. Pods carry the batch.kubernetes.io/job-tracking finalizer until
// they are counted: a finished pod's uid goes to uncountedTerminatedPods, its
// finalizer is removed, then it moves into succeeded/failed (so a restart
// never counts a pod twice). Decisions are job-model.ts's.
import type { KObj, KubeApi } from '../../kube/client.js';
import type { EventRecorder, ObjectRef } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import {
  completionsReached,
  condition,
  exhaustedIndexes,
  failureBackoffMs,
  formatIndexes,
  hasTrackingFinalizer,
  indexesToCreate,
  indexFailures,
  isFinished,
  isIndexed,
  isPodActive,
  isTerminating,
  JOB_CONTROLLER_NAME,
  JOB_TRACKING_FINALIZER,
  jobCondition,
  LABEL_CONTROLLER_UID,
  matchSuccessPolicy,
  newlyFinished,
  parseIndexes,
  podFor,
  podIndex,
  podsToCreate,
  setCondition,
} from './job-model.js';
import { RetryingQueue } from './key-queue.js';
import { controllerRef, isReady, notFoundOk, ownedBy, ownerRefTo } from './workload-model.js';

const keyOf = (o: KObj): string => `${o.metadata.namespace}/${o.metadata.name}`;

export class JobController {
  private readonly jobs: Informer;
  private readonly pods: Informer;
  private readonly queue: RetryingQueue;
  /** When each Job last saw a pod fail: the start of its re-creation backoff. */
  private readonly lastFailure = new Map<string, number>();

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    private readonly now: () => number = Date.now,
  ) {
    this.queue = new RetryingQueue('job-controller', log, (k) => this.sync(k));
    const onErr = (what: string) => (e: Error) => log.warn(`job-controller: ${what} watch: ${e.message}`);
    const enq = (o: KObj): void => this.queue.add(keyOf(o));
    this.jobs = new Informer(client, {
      path: '/apis/batch/v1/jobs',
      onAdd: enq,
      onUpdate: enq,
      onDelete: (j) => this.lastFailure.delete(j.metadata.uid),
      onError: onErr('job'),
    });
    this.pods = new Informer(client, {
      path: '/api/v1/pods',
      labelSelector: LABEL_CONTROLLER_UID,
      onAdd: (p) => this.onPod(p),
      onUpdate: (p) => this.onPod(p),
      onDelete: (p) => this.onPod(p),
      onError: onErr('pod'),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.jobs.start(), this.pods.start()]);
    for (const j of this.jobs.list()) this.queue.add(keyOf(j));
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.jobs.stop(), this.pods.stop()]);
  }

  private onPod(p: KObj): void {
    const ref = controllerRef(p);
    if (ref?.kind !== 'Job') return;
    const job = this.jobs.cache.get(`${p.metadata.namespace}/${ref.name}`);
    // A pod whose Job is gone (or is another Job of that name) keeps no tracking finalizer, or it could never be deleted.
    if ((!job || job.metadata.uid !== ref.uid) && hasTrackingFinalizer(p))
      void this.dropFinalizer(p).catch((e: Error) => this.log.warn(`job-controller: pod ${keyOf(p)}: ${e.message}`));
    else this.queue.add(`${p.metadata.namespace}/${ref.name}`);
  }

  private async dropFinalizer(p: KObj): Promise<void> {
    const finalizers = ((p.metadata.finalizers ?? []) as string[]).filter((f) => f !== JOB_TRACKING_FINALIZER);
    await this.client
      .patch(
        `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`,
        { metadata: { finalizers: finalizers.length ? finalizers : null } },
        'merge',
      )
      .catch(notFoundOk);
  }

  /** Deletes pods the controller no longer wants; their finalizer goes first, so they are never counted. */
  private async deletePods(ref: ObjectRef, pods: KObj[]): Promise<void> {
    for (const p of pods) {
      if (hasTrackingFinalizer(p)) await this.dropFinalizer(p);
      await this.client.delete(`/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`).catch(notFoundOk);
      this.events.event(ref, 'Normal', 'SuccessfulDelete', `Deleted pod: ${p.metadata.name}`);
    }
  }

  private async writeStatus(job: KObj, status: KObj): Promise<KObj> {
    if (JSON.stringify(status) === JSON.stringify(job.status ?? {})) return job;
    return this.client.update(`/apis/batch/v1/namespaces/${job.metadata.namespace}/jobs/${job.metadata.name}/status`, {
      ...job,
      status,
    });
  }

  private async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    let job = await this.client.get(`/apis/batch/v1/namespaces/${ns}/jobs/${name}`).catch(notFoundOk);
    if (!job || job.metadata.deletionTimestamp) return;
    // spec.managedBy: another controller (e.g. MultiKueue) runs this Job.
    if (job.spec?.managedBy && job.spec.managedBy !== JOB_CONTROLLER_NAME) return;
    const ref: ObjectRef = { kind: 'Job', apiVersion: 'batch/v1', namespace: ns, name, uid: job.metadata.uid };
    const uid = job.metadata.uid as string;
    const pods = (
      (await this.client.get(`/api/v1/namespaces/${ns}/pods`, { labelSelector: `${LABEL_CONTROLLER_UID}=${uid}` }))
        .items as KObj[]
    ).filter((p) => ownedBy(p, job!));
    const now = this.now();
    const nowStr = rfc3339(new Date(now));

    // 1. Record newly finished pods, 2. drop their finalizers, 3. count them.
    const fin = newlyFinished(job, pods);
    for (const p of fin.ignored) await this.dropFinalizer(p);
    if (fin.succeeded.length || fin.failed.length) {
      const un = job.status?.uncountedTerminatedPods ?? {};
      job = await this.writeStatus(job, {
        ...(job.status ?? {}),
        uncountedTerminatedPods: {
          succeeded: [...(un.succeeded ?? []), ...fin.succeeded.map((p) => p.metadata.uid)],
          failed: [...(un.failed ?? []), ...fin.failed.map((p) => p.metadata.uid)],
        },
      });
      for (const p of [...fin.succeeded, ...fin.failed]) await this.dropFinalizer(p);
      if (fin.failed.length) this.lastFailure.set(uid, now);
    }
    const status: KObj = { ...(job!.status ?? {}) };
    const un = (status.uncountedTerminatedPods ?? {}) as { succeeded?: string[]; failed?: string[] };
    if (un.succeeded?.length || un.failed?.length) {
      const byUid = new Map(pods.map((p) => [p.metadata.uid as string, p]));
      status.succeeded = (status.succeeded ?? 0) + (un.succeeded?.length ?? 0);
      status.failed = (status.failed ?? 0) + (un.failed?.length ?? 0);
      if (isIndexed(job!)) {
        const done = parseIndexes(status.completedIndexes);
        for (const u of un.succeeded ?? []) {
          const i = byUid.get(u) ? podIndex(byUid.get(u)!) : undefined;
          if (i !== undefined && i < (job!.spec?.completions ?? 1)) done.add(i);
        }
        status.completedIndexes = formatIndexes(done);
        // Indexed: succeeded counts completed indexes, as upstream.
        status.succeeded = done.size;
      }
    }
    status.uncountedTerminatedPods = {};
    // backoffLimitPerIndex: indexes past their limit (or failed by a FailIndex rule) are failed for good.
    if (job!.spec?.backoffLimitPerIndex !== undefined && job!.spec?.backoffLimitPerIndex !== null) {
      const failedIdx = parseIndexes(status.failedIndexes);
      for (const i of [...exhaustedIndexes(job!, pods), ...fin.failIndexes])
        if (!parseIndexes(status.completedIndexes).has(i)) failedIdx.add(i);
      status.failedIndexes = formatIndexes(failedIdx);
    }
    if (isFinished(job!)) {
      for (const p of pods) if (hasTrackingFinalizer(p)) await this.dropFinalizer(p);
      await this.writeStatus(job!, { ...status, active: 0, ready: 0, terminating: pods.filter(isTerminating).length });
      return;
    }
    const active = pods.filter(isPodActive);
    const terminating = pods.filter(isTerminating);
    const completed = parseIndexes(status.completedIndexes);
    let conditions = (status.conditions ?? []) as KObj[];
    const succeeded = status.succeeded ?? 0;
    const failed = status.failed ?? 0;

    // Suspension: no pods run; resuming restarts the clock of activeDeadlineSeconds.
    if (job!.spec?.suspend) {
      if (active.length) await this.deletePods(ref, active);
      if (!condition(job!, 'Suspended')) {
        conditions = setCondition(
          conditions,
          jobCondition('Suspended', 'True', 'JobSuspended', 'Job suspended', nowStr),
        );
        this.events.event(ref, 'Normal', 'Suspended', 'Job suspended');
      }
      await this.writeStatus(job!, {
        ...status,
        conditions,
        active: 0,
        ready: 0,
        terminating: terminating.length,
        startTime: undefined,
      });
      return;
    }
    if (condition(job!, 'Suspended')) {
      conditions = setCondition(conditions, jobCondition('Suspended', 'False', 'JobResumed', 'Job resumed', nowStr));
      this.events.event(ref, 'Normal', 'Resumed', 'Job resumed');
      status.startTime = nowStr;
    }
    status.startTime ??= nowStr;

    // Failure: a FailJob rule, the backoff limit, the deadline. FailureTarget first; Failed once no pod runs.
    let failure = condition(job!, 'FailureTarget') as KObj | undefined;
    if (!failure) {
      const deadline = job!.spec?.activeDeadlineSeconds as number | undefined;
      const started = Date.parse(status.startTime);
      let reason = '';
      let message = '';
      const failedIdx = parseIndexes(status.failedIndexes);
      const maxFailedIndexes = job!.spec?.maxFailedIndexes as number | undefined;
      if (fin.failJob) [reason, message] = ['PodFailurePolicy', fin.failJob];
      else if (maxFailedIndexes !== undefined && maxFailedIndexes !== null && failedIdx.size > maxFailedIndexes)
        [reason, message] = [
          'MaxFailedIndexesExceeded',
          'Job has exceeded the specified maximum number of failed indexes',
        ];
      else if (
        failedIdx.size &&
        completed.size + failedIdx.size >= (job!.spec?.completions ?? 1) &&
        !active.some((p) => !failedIdx.has(podIndex(p) ?? -1))
      )
        [reason, message] = ['FailedIndexes', 'Job has failed indexes'];
      else if (failed > (job!.spec?.backoffLimit ?? 6))
        [reason, message] = ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
      else if (deadline !== undefined && deadline !== null && now >= started + deadline * 1000)
        [reason, message] = ['DeadlineExceeded', 'Job was active longer than specified deadline'];
      else if (deadline !== undefined && deadline !== null) this.queue.later(key, started + deadline * 1000 - now + 50);
      if (reason) {
        failure = jobCondition('FailureTarget', 'True', reason, message, nowStr);
        conditions = setCondition(conditions, failure);
      }
    }
    if (failure) {
      if (active.length) await this.deletePods(ref, active);
      if (!terminating.length) {
        conditions = setCondition(conditions, jobCondition('Failed', 'True', failure.reason, failure.message, nowStr));
        this.events.event(ref, 'Warning', failure.reason, failure.message);
      }
      await this.writeStatus(job!, { ...status, conditions, active: 0, ready: 0, terminating: terminating.length });
      return;
    }

    // Success: SuccessCriteriaMet first (completions, or a successPolicy rule); Complete once no pod runs.
    const policy = isIndexed(job!) ? matchSuccessPolicy(job!, completed) : undefined;
    const met = condition(job!, 'SuccessCriteriaMet');
    const [why, text] = met
      ? [met.reason, met.message]
      : policy
        ? ['SuccessPolicy', policy]
        : ['CompletionsReached', 'Reached expected number of succeeded pods'];
    if (met || policy || completionsReached(job!, succeeded, active.length, completed)) {
      conditions = setCondition(conditions, jobCondition('SuccessCriteriaMet', 'True', why, text, nowStr));
      if (active.length) await this.deletePods(ref, active);
      if (!terminating.length) {
        conditions = setCondition(conditions, jobCondition('Complete', 'True', why, text, nowStr));
        status.completionTime = nowStr;
        this.events.event(ref, 'Normal', 'Completed', 'Job completed');
      }
      await this.writeStatus(job!, { ...status, conditions, active: 0, ready: 0, terminating: terminating.length });
      return;
    }

    // Pods to add, after the failure backoff; with podReplacementPolicy Failed, not while others are terminating.
    let created = 0;
    const waitMs = failed > 0 ? (this.lastFailure.get(uid) ?? 0) + failureBackoffMs(failed) - now : 0;
    const blocked = job!.spec?.podReplacementPolicy === 'Failed' && terminating.length > 0;
    if (waitMs > 0) this.queue.later(key, waitMs + 50);
    else if (!blocked) {
      const room = Math.max(0, (job!.spec?.parallelism ?? 1) - active.length);
      const done = new Set([...completed, ...parseIndexes(status.failedIndexes)]);
      const indexes: (number | undefined)[] = isIndexed(job!)
        ? indexesToCreate(job!, active, done, room)
        : Array.from({ length: podsToCreate(job!, active.length, succeeded) }, () => undefined);
      const owner = ownerRefTo(job!);
      const results = await Promise.allSettled(
        indexes.map((i) =>
          this.client.create(
            `/api/v1/namespaces/${ns}/pods`,
            podFor(job!, i, owner, i === undefined ? 0 : indexFailures(job!, pods, i)),
          ),
        ),
      );
      for (const r of results) {
        if (r.status === 'fulfilled') {
          created++;
          this.events.event(ref, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value.metadata.name}`);
        }
      }
      const failedCreate = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failedCreate) {
        this.events.event(ref, 'Warning', 'FailedCreate', `Error creating: ${(failedCreate.reason as Error).message}`);
        this.queue.later(key, 5000);
      }
    }
    await this.writeStatus(job!, {
      ...status,
      conditions,
      active: active.length + created,
      ready: active.filter(isReady).length,
      terminating: terminating.length,
      ...(status.succeeded === undefined ? { succeeded: 0 } : {}),
      ...(status.failed === undefined ? { failed: 0 } : {}),
    });
  }
}
