// Writes pod status to the apiserver: a strategic-merge PATCH on pods/status
// with a uid precondition, only when the status changed, serialized per pod.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { type KubeApi, KubeApiError } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import type { PodRuntimeState } from '../pods/runtime-state.js';
import type { Waiting } from '../pods/worker.js';
import { ConditionClock } from './condition-clock.js';
import { computePodStatus, type ProbeStatus, type StatusInput, TRANSIENT_CONDITIONS } from './pod-status.js';

type Obj = Record<string, any>;
const STATE_KEYS = ['waiting', 'running', 'terminated'];

/** Strategic merge adds to what is there: name every state key, null for "not this one". */
function exclusive(state: Obj): Obj {
  return Object.fromEntries(STATE_KEYS.map((k) => [k, state[k] ?? null]));
}

interface Entry {
  pod: Pod;
  posted: string;
  pending?: Obj;
  pendingKey?: string;
  inFlight: boolean;
  clock: ConditionClock;
  startTime: string;
  /** After a failed PATCH: the wait before the next, doubling to RETRY_MAX_MS; the pending retry. */
  retryMs?: number;
  retry?: ReturnType<typeof setTimeout>;
}

const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 30_000;

export class StatusManager {
  private readonly pods = new Map<string, Entry>();
  patches = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly hostIP: string,
    private readonly probes?: {
      ready(pod: Pod, name: string, id: string): boolean;
      started(pod: Pod, name: string, id: string): boolean;
    },
    /** Both families' node addresses with a dual-stack --node-ip. */
    private readonly hostIPs?: string[],
  ) {}

  /** Compute the status from the latest runtime state; post it if it changed. */
  update(
    pod: Pod,
    state: PodRuntimeState,
    waiting: Map<string, Waiting>,
    extra: Pick<StatusInput, 'evicted' | 'resize' | 'terminal'> = {},
  ): void {
    const uid = pod.metadata!.uid!;
    let e = this.pods.get(uid);
    if (!e) {
      e = {
        pod,
        posted: '',
        inFlight: false,
        clock: new ConditionClock(pod.status?.conditions ?? []),
        startTime: (pod.status?.startTime as string | undefined) ?? rfc3339(),
      };
      this.pods.set(uid, e);
    }
    e.pod = pod;
    const probes: ProbeStatus | undefined = this.probes && {
      ready: (n, id) => this.probes!.ready(pod, n, id),
      started: (n, id) => this.probes!.started(pod, n, id),
    };
    const status = computePodStatus({
      pod,
      state,
      waiting,
      hostIP: this.hostIP,
      hostIPs: this.hostIPs,
      startTime: e.startTime,
      probes,
      ...extra,
    });
    // A terminal phase is final: containers removed later (GC, a kubelet restart) must not turn it back.
    const posted = pod.status?.phase;
    if ((posted === 'Succeeded' || posted === 'Failed') && status.phase !== posted) return;
    const key = JSON.stringify(status);
    if (key === e.posted || key === e.pendingKey) return;
    e.pending = status;
    e.pendingKey = key;
    void this.flush(uid);
  }

  /**
   * update(), then wait until what it computed is written, refused for good or left to a retry (at most `timeoutMs`):
   * for a pod's last status, before the pod goes.
   */
  async updateAndWait(
    pod: Pod,
    state: PodRuntimeState,
    waiting: Map<string, Waiting>,
    extra: Pick<StatusInput, 'evicted' | 'resize' | 'terminal'> = {},
    timeoutMs = 10_000,
  ): Promise<void> {
    const uid = pod.metadata!.uid!;
    this.update(pod, state, waiting, extra);
    if (this.settledNow(uid)) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      const list = this.waiters.get(uid) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.waiters.set(uid, list);
    });
  }

  private readonly waiters = new Map<string, (() => void)[]>();

  /** Nothing more to write now: written, gone, or waiting for a retry. */
  private settledNow(uid: string): boolean {
    const e = this.pods.get(uid);
    return !e || (!e.inFlight && (!e.pending || e.retry !== undefined));
  }

  private settle(uid: string): void {
    if (!this.settledNow(uid)) return;
    for (const w of this.waiters.get(uid) ?? []) w();
    this.waiters.delete(uid);
  }

  forget(uid: string): void {
    clearTimeout(this.pods.get(uid)?.retry);
    this.pods.delete(uid);
  }

  private withTimes(e: Entry, status: Obj): Obj {
    // reason and message are nulled when absent: the patch merges into the stored condition, whose old reason would stay.
    const conditions: Obj[] = e.clock
      .stamp(status.conditions as { type: string; status: string }[])
      .map((c) => ({ reason: null, message: null, ...c, lastProbeTime: null }));
    // Resize conditions exist only while they hold: one the stored pod still has is deleted from the list.
    for (const t of TRANSIENT_CONDITIONS) {
      if (!conditions.some((c) => c.type === t) && (e.pod.status?.conditions ?? []).some((c) => c.type === t))
        conditions.push({ type: t, $patch: 'delete' });
    }
    const cs = (list: Obj[] | undefined) =>
      list?.map((s) => ({
        ...s,
        state: exclusive(s.state),
        lastState: exclusive(s.lastState),
        containerID: s.containerID ?? null,
      }));
    return {
      ...status,
      conditions,
      containerStatuses: cs(status.containerStatuses),
      ...(status.initContainerStatuses ? { initContainerStatuses: cs(status.initContainerStatuses) } : {}),
      ...(status.ephemeralContainerStatuses
        ? { ephemeralContainerStatuses: cs(status.ephemeralContainerStatuses) }
        : {}),
      podIP: status.podIP ?? null,
      podIPs: [...((status.podIPs as Obj[] | undefined) ?? []), { $patch: 'replace' }],
      hostIPs: [...((status.hostIPs as Obj[] | undefined) ?? []), { $patch: 'replace' }],
    };
  }

  private async flush(uid: string): Promise<void> {
    const e = this.pods.get(uid);
    // A status the apiserver refused waits for its retry; newer statuses replace it meanwhile.
    if (!e || e.inFlight || !e.pending || e.retry) return;
    const status = e.pending;
    const key = e.pendingKey!;
    e.pending = undefined;
    e.pendingKey = undefined;
    e.inFlight = true;
    const md = e.pod.metadata!;
    try {
      await this.client.patch(
        `/api/v1/namespaces/${md.namespace!}/pods/${md.name!}/status`,
        { metadata: { uid }, status: this.withTimes(e, status) },
        'strategic',
      );
      e.posted = key;
      e.retryMs = undefined;
      this.patches++;
    } catch (err) {
      if (err instanceof KubeApiError && (err.code === 404 || err.code === 409)) {
        this.pods.delete(uid); // gone, or replaced by a new pod with that name
        this.settle(uid);
        return;
      }
      e.retryMs = e.retryMs ? Math.min(e.retryMs * 2, RETRY_MAX_MS) : RETRY_FIRST_MS;
      this.log.warn(
        `status update for pod ${md.namespace!}/${md.name!} failed, will retry in ${e.retryMs / 1000} s: ${(err as Error).message}`,
      );
      if (!e.pending) {
        e.pending = status;
        e.pendingKey = key;
      }
      e.retry = setTimeout(() => {
        e.retry = undefined;
        void this.flush(uid);
      }, e.retryMs);
      e.retry.unref();
      queueMicrotask(() => this.settle(uid));
      return;
    } finally {
      e.inFlight = false;
    }
    if (e.pending) void this.flush(uid);
    else this.settle(uid);
  }
}
