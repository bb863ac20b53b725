// pod-garbage-collector: as upstream's podgc controller, every 20 s it force-deletes pods nothing else will remove:
// pods bound to a Node that no longer exists (seen missing twice, 40 s apart; marked Failed with a DisruptionTarget
// condition first), terminating pods never scheduled, terminating pods on a NotReady node tainted out-of-service,
// and the oldest finished pods beyond --terminated-pod-gc-threshold.
import type { Pod } from 'kubernetes-types/core/v1.js';

import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';

export const GC_PERIOD_MS = 20_000;
/** How long a pod's node must have been missing before the pod counts as orphaned (upstream's quarantineTime). */
export const QUARANTINE_MS = 40_000;
export const DEFAULT_TERMINATED_THRESHOLD = 12_500;
const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

export type GcReason = 'orphaned' | 'unscheduled-terminating' | 'out-of-service' | 'terminated';

export interface GcAction {
  pod: Pod;
  reason: GcReason;
}

const finished = (p: Pod): boolean => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';
const key = (p: Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;

/**
 * What to delete now. `missingSince` maps node names seen missing to when they were first missed; it is updated
 * (nodes back or gone from every pod are dropped).
 */
export function podGcActions(
  pods: Pod[],
  nodes: KObj[],
  now: number,
  missingSince: Map<string, number>,
  terminatedThreshold = DEFAULT_TERMINATED_THRESHOLD,
): GcAction[] {
  const byName = new Map(nodes.map((n) => [n.metadata.name as string, n]));
  const out: GcAction[] = [];
  const taken = new Set<string>();
  const take = (pod: Pod, reason: GcReason): void => {
    if (taken.has(key(pod))) return;
    taken.add(key(pod));
    out.push({ pod, reason });
  };
  const referenced = new Set<string>();
  for (const p of pods) {
    const node = p.spec?.nodeName;
    if (!node) {
      if (p.metadata?.deletionTimestamp) take(p, 'unscheduled-terminating');
      continue;
    }
    const n = byName.get(node);
    if (!n) {
      referenced.add(node);
      const since = missingSince.get(node) ?? now;
      missingSince.set(node, since);
      if (now - since >= QUARANTINE_MS) take(p, 'orphaned');
      continue;
    }
    const ready = ((n.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Ready')?.status === 'True';
    const outOfService = ((n.spec?.taints ?? []) as KObj[]).some((t) => t.key === OUT_OF_SERVICE);
    if (p.metadata?.deletionTimestamp && !ready && outOfService) take(p, 'out-of-service');
  }
  for (const node of [...missingSince.keys()]) if (!referenced.has(node)) missingSince.delete(node);
  if (terminatedThreshold > 0) {
    const done = pods.filter(finished);
    if (done.length > terminatedThreshold) {
      done.sort(
        (a, b) =>
          Date.parse(a.metadata?.creationTimestamp ?? '') - Date.parse(b.metadata?.creationTimestamp ?? '') ||
          key(a).localeCompare(key(b)),
      );
      for (const p of done.slice(0, done.length - terminatedThreshold)) take(p, 'terminated');
    }
  }
  return out;
}

export class PodGarbageCollector {
  private readonly pods: Informer;
  private readonly nodes: Informer;
  private readonly missingSince = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly o: { periodMs?: number; terminatedThreshold?: number; now?: () => number } = {},
  ) {
    const onErr = (what: string) => (e: Error) => log.warn(`pod-garbage-collector: ${what} watch: ${e.message}`);
    this.pods = new Informer(client, { path: '/api/v1/pods', onError: onErr('pod') });
    this.nodes = new Informer(client, { path: '/api/v1/nodes', onError: onErr('node') });
  }

  /** One pass; exported for tests, which drive it with their own clock. */
  async gc(): Promise<GcAction[]> {
    const now = (this.o.now ?? Date.now)();
    const actions = podGcActions(
      this.pods.list() as Pod[],
      this.nodes.list(),
      now,
      this.missingSince,
      this.o.terminatedThreshold,
    );
    for (const a of actions) {
      const { namespace, name } = a.pod.metadata!;
      const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
      try {
        if (a.reason === 'orphaned' && !finished(a.pod))
          await this.client.patch(
            `${path}/status`,
            {
              status: {
                phase: 'Failed',
                conditions: [
                  {
                    type: 'DisruptionTarget',
                    status: 'True',
                    reason: 'DeletionByPodGC',
                    message: 'PodGC: node no longer exists',
                    lastTransitionTime: rfc3339(new Date(now)),
                  },
                ],
              },
            },
            'strategic',
          );
        await this.client.delete(path, { gracePeriodSeconds: 0 });
        this.log.info(`pod-garbage-collector: deleted ${namespace}/${name} (${a.reason})`);
      } catch (e) {
        if (!(e instanceof KubeApiError && e.code === 404))
          this.log.warn(`pod-garbage-collector: ${namespace}/${name}: ${(e as Error).message}`);
      }
    }
    return actions;
  }

  async start(): Promise<void> {
    await Promise.all([this.pods.start(), this.nodes.start()]);
    const tick = (): void => {
      this.timer = setTimeout(() => void this.gc().finally(tick), this.o.periodMs ?? GC_PERIOD_MS);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await Promise.all([this.pods.stop(), this.nodes.stop()]);
  }
}
