// Lease heartbeats: kube-node-lease/<node>, renewed every 10 s with a 40 s
// duration; a failed renewal is retried with backoff from 200 ms to 7 s.
import { type KObj, type KubeApi, KubeApiError } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import { microTime } from '../../kube/time.js';

export const LEASE_DURATION_SEC = 40;
export const LEASE_RENEW_MS = 10_000;

export class LeaseHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  renewals = 0;
  failures = 0;
  private nodeUid: string | undefined;

  constructor(
    private readonly client: KubeApi,
    private readonly nodeName: string,
    private readonly log: Logger,
    /** durationSec: nodeLeaseDurationSeconds (40); renewals come every quarter of it, as upstream. */
    private readonly o: {
      durationSec?: number;
      renewMs?: number;
      backoffInitialMs?: number;
      backoffMaxMs?: number;
    } = {},
  ) {}

  setNodeUid(uid: string): void {
    this.nodeUid = uid;
  }

  private path(name = this.nodeName): string {
    return `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
  }

  private desired(existing?: KObj): KObj {
    const spec = {
      holderIdentity: this.nodeName,
      leaseDurationSeconds: this.o.durationSec ?? LEASE_DURATION_SEC,
      renewTime: microTime(),
    };
    const ownerReferences = this.nodeUid
      ? [{ apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid: this.nodeUid }]
      : undefined;
    if (existing)
      return {
        ...existing,
        metadata: {
          ...existing.metadata,
          ...(ownerReferences && !existing.metadata.ownerReferences ? { ownerReferences } : {}),
        },
        spec: { ...existing.spec, ...spec },
      };
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.nodeName, namespace: 'kube-node-lease', ...(ownerReferences ? { ownerReferences } : {}) },
      spec,
    };
  }

  /** One renewal: update the lease, creating it if it does not exist. */
  async renew(): Promise<KObj> {
    let existing: KObj | undefined;
    try {
      existing = await this.client.get(this.path());
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 404)) throw e;
    }
    const l = existing
      ? await this.client.update(this.path(), this.desired(existing))
      : await this.client.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', this.desired());
    this.renewals++;
    return l;
  }

  start(): void {
    let delay = this.o.backoffInitialMs ?? 200;
    const tick = async (): Promise<void> => {
      if (this.stopped) return;
      let next = this.o.renewMs ?? (this.o.durationSec ? this.o.durationSec * 250 : LEASE_RENEW_MS);
      try {
        await this.renew();
        delay = this.o.backoffInitialMs ?? 200;
      } catch (e) {
        this.failures++;
        this.log.warn(
          `failed to renew lease kube-node-lease/${this.nodeName}, will retry in ${delay} ms: ${(e as Error).message}`,
        );
        next = delay;
        delay = Math.min(delay * 2, this.o.backoffMaxMs ?? 7000);
      }
      if (!this.stopped) this.timer = setTimeout(() => void tick(), next);
    };
    void tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
