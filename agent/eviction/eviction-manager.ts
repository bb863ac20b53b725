// The eviction manager's loop (upstream synchronize, every 10 s): observe
// the signals; keep the pressure conditions; for a threshold to act on,
// reclaim at node level first (dead containers, unused images for disk),
// then evict one pod — ranked by QoS-relevant usage over requests and
// priority — Failed with reason Evicted and upstream's message.
import type { Pod } from 'kubernetes-types/core/v1.js';

import type { EventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import {
  evictionMessage,
  type EvictionThreshold,
  firstObserved,
  type NodeCondition,
  type Observations,
  pressureConditions,
  rankPods,
  type Resource,
  resourceToReclaim,
  thresholdsMet,
  thresholdsToActOn,
} from './decide.js';
import { podUsages } from './observe.js';

export interface EvictionOptions {
  thresholds: EvictionThreshold[];
  transitionPeriodMs: number;
  maxPodGracePeriodSec: number;
  monitoringMs?: number;
  /** How long a pass waits for its evicted pod to be cleaned up (upstream podCleanupTimeout, 30 s). */
  cleanupTimeoutMs?: number;
  rootDir: string;
  podLogsDir: string;
}

export interface EvictionDeps {
  observe(): Promise<Observations>;
  cri: CriClient;
  /** Pods running here now, with whether they are critical (never evicted) and how to evict one. */
  activePods(): { pod: Pod; critical: boolean; evict(message: string, graceSec: number): void; cleanedUp(): boolean }[];
  /** Node-level reclaim for disk: dead containers and unused images. */
  reclaimDisk(): Promise<void>;
  events: EventRecorder;
  nodeName: string;
  log: Logger;
  /** Pressure came or went: the node status should say so now. */
  onConditions?: (c: Set<NodeCondition>) => void;
}

/** upstream immediateEvictionGracePeriodSeconds: hard thresholds give pods one second. */
const IMMEDIATE_GRACE_SEC = 1;

export class EvictionManager {
  private first = new Map<EvictionThreshold, number>();
  private lastSeen = new Map<NodeCondition, number>();
  private current = new Set<NodeCondition>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  lastObservations: Observations = {};

  constructor(
    private readonly o: EvictionOptions,
    private readonly d: EvictionDeps,
  ) {}

  conditions(): Set<NodeCondition> {
    return this.current;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.o.monitoringMs ?? 10_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.synchronize();
    } catch (e) {
      this.d.log.warn(`eviction manager: ${(e as Error).message}`);
    } finally {
      this.running = false;
    }
  }

  /** One pass; returns the uid of the pod it evicted, if any. */
  async synchronize(now = Date.now()): Promise<string | undefined> {
    let obs = await this.d.observe();
    this.lastObservations = obs;
    const met = thresholdsMet(this.o.thresholds, obs);
    this.first = firstObserved(met, this.first, now);
    const pc = pressureConditions(met, this.lastSeen, now, this.o.transitionPeriodMs);
    this.lastSeen = pc.lastSeen;
    const changed = [...pc.conditions].sort().join() !== [...this.current].sort().join();
    this.current = pc.conditions;
    if (changed) this.d.onConditions?.(pc.conditions);
    const act = thresholdsToActOn(this.first, now);
    const pick = resourceToReclaim(act);
    if (!pick) return undefined;
    const node = { kind: 'Node', name: this.d.nodeName, uid: this.d.nodeName };
    this.d.events.event(node, 'Warning', 'EvictionThresholdMet', `Attempting to reclaim ${pick.resource}`);
    if (pick.resource === 'ephemeral-storage' || pick.resource === 'inodes') {
      await this.d.reclaimDisk();
      obs = await this.d.observe();
      if (!thresholdsMet([pick.threshold], obs).length) {
        this.d.log.info(`eviction manager: ${pick.threshold.signal} reclaimed at node level; no pod eviction required`);
        return undefined;
      }
    }
    return this.evictOne(pick.resource, pick.threshold, obs);
  }

  private async evictOne(
    resource: Resource,
    threshold: EvictionThreshold,
    obs: Observations,
  ): Promise<string | undefined> {
    const active = this.d.activePods();
    const stats =
      resource === 'memory' || resource === 'ephemeral-storage'
        ? await this.d.cri.listContainerStats().catch(() => [])
        : [];
    const usages = await podUsages(active, stats, resource === 'inodes' ? 'ephemeral-storage' : resource, {
      rootDir: this.o.rootDir,
      podLogsDir: this.o.podLogsDir,
    });
    const ranked = rankPods(usages, resource);
    const victim = ranked[0];
    if (!victim) {
      this.d.log.warn(`eviction manager: ${threshold.signal} is low and no pod can be evicted`);
      return undefined;
    }
    const a = active.find((x) => x.pod.metadata?.uid === victim.uid)!;
    const grace =
      threshold.gracePeriodMs === 0
        ? IMMEDIATE_GRACE_SEC
        : Math.min(this.o.maxPodGracePeriodSec, a.pod.spec?.terminationGracePeriodSeconds ?? 30);
    const message = evictionMessage(resource, threshold, obs[threshold.signal], victim);
    this.d.log.info(
      `eviction manager: evicting pod ${a.pod.metadata!.namespace!}/${a.pod.metadata!.name!} to reclaim ${resource}`,
    );
    a.evict(message, grace);
    // As upstream: one pod per pass, and the next pass only once its resources are given back.
    const until = Date.now() + (this.o.cleanupTimeoutMs ?? 30_000);
    while (!a.cleanedUp() && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    return victim.uid;
  }
}
