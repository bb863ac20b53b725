// Mirror pods: the API's view of static pods. Each static pod gets a pod of
// the same name with `kubernetes.io/config.mirror`, the static pod's labels
// and annotations, and one ownerReference to our Node (controller: true), as
// NodeRestriction requires. A deleted or outdated mirror pod is recreated; the
// static pod itself keeps running.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { type KObj, type KubeApi, KubeApiError } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import { ANN_CONFIG_HASH, ANN_CONFIG_MIRROR } from '../sources/manifest.js';

const full = (p: { metadata?: { namespace?: string; name?: string } }): string =>
  `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;

export class MirrorPods {
  private readonly busy = new Set<string>();
  creates = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly nodeName: string,
    private readonly nodeUid: () => string,
    private readonly log: Logger,
  ) {}

  private body(s: Pod): KObj {
    const md = s.metadata!;
    const { status: _s, ...rest } = s;
    return {
      ...rest,
      metadata: {
        name: md.name,
        namespace: md.namespace,
        labels: md.labels,
        annotations: { ...(md.annotations ?? {}), [ANN_CONFIG_MIRROR]: md.annotations?.[ANN_CONFIG_HASH] ?? md.uid },
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid: this.nodeUid(), controller: true },
        ],
      },
    };
  }

  /** Make the API's mirror pods match the static pods. Idempotent; call on any change. */
  reconcile(statics: Pod[], mirrors: KObj[]): void {
    if (!this.nodeUid()) return; // registered Node first: mirror pods are owned by it
    const byName = new Map(mirrors.map((m) => [full(m), m]));
    for (const s of statics) {
      const key = full(s);
      if (this.busy.has(key)) continue;
      const m = byName.get(key);
      const hash = s.metadata!.annotations?.[ANN_CONFIG_HASH] ?? s.metadata!.uid;
      if (!m)
        void this.run(
          key,
          () =>
            this.client
              .create(`/api/v1/namespaces/${s.metadata!.namespace!}/pods`, this.body(s))
              .then(() => this.creates++),
          `created mirror pod ${key}`,
        );
      else if (m.metadata.deletionTimestamp || m.metadata.annotations?.[ANN_CONFIG_MIRROR] !== hash)
        void this.run(
          key,
          () => this.remove(m),
          `deleted mirror pod ${key} (${m.metadata.deletionTimestamp ? 'marked for deletion' : 'outdated'}); it will be recreated`,
        );
    }
    const wanted = new Set(statics.map(full));
    for (const [key, m] of byName)
      if (!wanted.has(key) && !this.busy.has(key))
        void this.run(key, () => this.remove(m), `deleted mirror pod ${key} of a static pod that is gone`);
  }

  private remove(m: KObj): Promise<unknown> {
    return this.client.delete(`/api/v1/namespaces/${m.metadata.namespace}/pods/${m.metadata.name}`, {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: m.metadata.uid },
    });
  }

  private async run(key: string, fn: () => Promise<unknown>, done: string): Promise<void> {
    this.busy.add(key);
    try {
      await fn();
      this.log.info(done);
    } catch (e) {
      if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409)))
        this.log.warn(`mirror pod ${key}: ${(e as Error).message}`);
    } finally {
      this.busy.delete(key);
    }
  }
}
