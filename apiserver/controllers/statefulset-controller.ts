// statefulset-controller: each StatefulSet's pods by ordinal (web-0, web-1,
// …) with their claims from volumeClaimTemplates made first, in order or in
// parallel, replaced from the highest ordinal down on a template change, with
// ControllerRevisions (current and update revision) and status for `kubectl
// rollout status|history|undo`. Decisions are statefulset-model.ts's.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder, ObjectRef } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import { PodOwnerController } from './pod-owner-controller.js';
import { currentRevision, ownedPods, pruneRevisions } from './revision-store.js';
import { claimsFor, planStatefulSet, podName, podRevision, statefulPod } from './statefulset-model.js';
import { notFoundOk, ownerRefTo } from './workload-model.js';

export class StatefulSetController extends PodOwnerController {
  constructor(
    client: KubeApi,
    log: Logger,
    private readonly events: EventRecorder,
  ) {
    super(client, log, 'statefulset-controller', 'StatefulSet', '/apis/apps/v1/statefulsets');
  }

  protected async sync(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const base = `/apis/apps/v1/namespaces/${ns}/statefulsets`;
    let set = await this.client.get(`${base}/${name}`).catch(notFoundOk);
    if (!set || set.metadata.deletionTimestamp) return;
    const rev = await currentRevision(this.client, set, `${base}/${name}/status`);
    set = rev.owner;
    const update = rev.current;
    const current = rev.revisions.find((r) => r.metadata.name === set!.status?.currentRevision) ?? update;
    const pods = await ownedPods(this.client, set);
    const plan = planStatefulSet(set, pods, current.metadata.name, update.metadata.name);
    const ref: ObjectRef = { kind: 'StatefulSet', apiVersion: 'apps/v1', namespace: ns, name, uid: set.metadata.uid };
    for (const d of plan.delete) {
      const pod = pods.find((p) => p.metadata.name === d.name)!;
      if (d.why === 'condemned' && set.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete')
        await this.claimsFollow(set, pod);
      await this.client.delete(`/api/v1/namespaces/${ns}/pods/${d.name}`).catch(notFoundOk);
      this.events.event(ref, 'Normal', 'SuccessfulDelete', `delete Pod ${d.name} in StatefulSet ${name} successful`);
    }
    for (const c of plan.create) {
      const ordinal = c.ordinal;
      const pod = statefulPod(set, ordinal, c.revision === 'current' ? current : update);
      try {
        await this.createClaims(set, ordinal, ref);
        await this.client.create(`/api/v1/namespaces/${ns}/pods`, {
          apiVersion: 'v1',
          kind: 'Pod',
          ...pod,
          metadata: { ...pod.metadata, ownerReferences: [ownerRefTo(set)] },
        });
        this.events.event(
          ref,
          'Normal',
          'SuccessfulCreate',
          `create Pod ${podName(set, ordinal)} in StatefulSet ${name} successful`,
        );
      } catch (e) {
        if (e instanceof KubeApiError && e.code === 409) continue; // the old pod of that name is still going
        this.events.event(
          ref,
          'Warning',
          'FailedCreate',
          `create Pod ${podName(set, ordinal)} in StatefulSet ${name} failed error: ${(e as Error).message}`,
        );
        throw e;
      }
    }
    if (plan.recheckMs) this.queue.later(key, plan.recheckMs);
    await pruneRevisions(this.client, set, rev.revisions, update, pods, podRevision);
    const keepCurrent = rev.revisions.find((r) => r.metadata.name === plan.status.currentRevision);
    if (!keepCurrent) plan.status.currentRevision = update.metadata.name;
    if (JSON.stringify(plan.status) !== JSON.stringify(set.status ?? {}))
      await this.client.update(`${base}/${name}/status`, { ...set, status: plan.status });
  }

  /** Claims are made before their pod and kept (or owned by the set when whenDeleted is Delete). */
  private async createClaims(set: KObj, ordinal: number, ref: ObjectRef): Promise<void> {
    for (const claim of claimsFor(set, ordinal)) {
      const path = `/api/v1/namespaces/${set.metadata.namespace}/persistentvolumeclaims`;
      if (await this.client.get(`${path}/${claim.metadata.name}`).catch(notFoundOk)) continue;
      if (set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete')
        claim.metadata.ownerReferences = [
          {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            name: set.metadata.name,
            uid: set.metadata.uid,
            blockOwnerDeletion: true,
          },
        ];
      try {
        await this.client.create(path, claim);
        this.events.event(
          ref,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${claim.metadata.name} Pod ${podName(set, ordinal)} in StatefulSet ${set.metadata.name} success`,
        );
      } catch (e) {
        if (!(e instanceof KubeApiError && e.code === 409)) {
          this.events.event(
            ref,
            'Warning',
            'FailedCreate',
            `create Claim ${claim.metadata.name} for Pod ${podName(set, ordinal)} in StatefulSet ${set.metadata.name} failed error: ${(e as Error).message}`,
          );
          throw e;
        }
      }
    }
  }

  /** whenScaled: Delete — a condemned pod's claims get it as their owner, so they go with it. */
  private async claimsFollow(set: KObj, pod: KObj): Promise<void> {
    const ordinal = Number(/-(\d+)$/.exec(pod.metadata.name)?.[1] ?? -1);
    for (const claim of claimsFor(set, ordinal)) {
      const path = `/api/v1/namespaces/${set.metadata.namespace}/persistentvolumeclaims/${claim.metadata.name}`;
      const cur = await this.client.get(path).catch(notFoundOk);
      if (!cur) continue;
      const refs = ((cur.metadata.ownerReferences ?? []) as KObj[]).filter((r) => r.uid !== pod.metadata.uid);
      await this.client.patch(
        path,
        {
          metadata: {
            ownerReferences: [
              ...refs,
              {
                apiVersion: 'v1',
                kind: 'Pod',
                name: pod.metadata.name,
                uid: pod.metadata.uid,
                blockOwnerDeletion: true,
              },
            ],
          },
        },
        'merge',
      );
    }
  }
}
