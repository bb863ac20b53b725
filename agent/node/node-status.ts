// Registers the Node and keeps its status: computed every 10 s
// (nodeStatusUpdateFrequency), posted when it changed or every 5 min
// (nodeStatusReportFrequency), as a strategic-merge PATCH on nodes/status.
import { type KObj, type KubeApi, KubeApiError } from '../../kube/client.js';
import { canonicalJson } from '../../kube/hash.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { ConditionClock } from '../status/condition-clock.js';
import { type NodeFacts, nodeObject, nodeStatus, type Registration } from './node-object.js';

export interface NodeStatusOptions extends Registration {
  /** nodeStatusUpdateFrequency (10 s). */
  updateMs?: number;
  /** nodeStatusReportFrequency (5 min). */
  reportMs?: number;
}

/** The fields we own, without heartbeat and transition times, for comparing ours with the server's. */
function statusKey(st: Record<string, any>): string {
  const conditions = ((st.conditions ?? []) as Record<string, unknown>[])
    .map((c) => [c.type, c.status, c.reason, c.message])
    .sort();
  return canonicalJson([
    st.capacity,
    st.allocatable,
    st.addresses,
    st.daemonEndpoints,
    st.nodeInfo,
    st.declaredFeatures ?? [],
    conditions,
  ]);
}

/** How often facts are checked until the node is first posted Ready. */
const FAST_MS = 100;

export class NodeStatusManager {
  private timer: NodeJS.Timeout | undefined;
  private lastPosted = '';
  private lastPostedAt = 0;
  /** Whether a status saying Ready has been posted since start. */
  private readyPosted = false;
  private readonly clock = new ConditionClock();
  uid = '';
  posts = 0;

  constructor(
    private readonly client: KubeApi,
    private readonly facts: () => Promise<NodeFacts>,
    private readonly log: Logger,
    private readonly o: NodeStatusOptions = {},
  ) {}

  /** Upstream tryRegisterWithAPIServer: create, or adopt the existing Node of that name. */
  async register(): Promise<KObj> {
    const f = await this.facts();
    let node: KObj;
    try {
      node = await this.client.create('/api/v1/nodes', this.withTimes(nodeObject(f, this.o)));
      this.log.info(`registered node ${f.nodeName}`);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409)) throw e;
      node = await this.client.get(`/api/v1/nodes/${f.nodeName}`);
      this.log.info(`node ${f.nodeName} already registered; updating its status`);
    }
    this.uid = node.metadata.uid;
    await this.sync(true);
    return node;
  }

  private withTimes(node: KObj): KObj {
    const now = rfc3339();
    const status = node.status as KObj;
    status.conditions = this.clock
      .stamp(status.conditions as { type: string; status: string }[], now)
      .map((c) => ({ ...c, lastHeartbeatTime: now }));
    return node;
  }

  /**
   * Posts status when it differs from what the apiserver holds (which the node
   * controller may have set to Unknown), when the report period passed, or when forced.
   */
  async sync(force = false): Promise<boolean> {
    const f = await this.facts();
    const status = nodeStatus(f);
    const key = statusKey(status);
    const due = Date.now() - this.lastPostedAt >= (this.o.reportMs ?? 5 * 60_000);
    if (!force && !due) {
      let server: KObj;
      try {
        server = await this.client.get(`/api/v1/nodes/${f.nodeName}`);
      } catch (e) {
        if (!(e instanceof KubeApiError && e.code === 404)) throw e;
        // Deleted (or a memory-only apiserver restarted): register again, as a new kubelet would.
        this.log.warn(`node ${f.nodeName} is gone from the apiserver; registering it again`);
        await this.register();
        return true;
      }
      this.uid = server.metadata.uid;
      if (key === this.lastPosted && key === statusKey(server.status ?? {})) return false;
    }
    const body = this.withTimes({ status: { ...status } });
    // status.addresses merges by `type` in a strategic merge patch: two InternalIPs (dual stack) would collapse into
    // one. Upstream's kubelet replaces the list with the same directive.
    (body.status as KObj).addresses = [...(status.addresses as object[]), { $patch: 'replace' }];
    await this.client.patch(`/api/v1/nodes/${f.nodeName}/status`, body, 'strategic');
    if (
      ((status.conditions ?? []) as { type: string; status: string }[]).some(
        (c) => c.type === 'Ready' && c.status === 'True',
      )
    )
      this.readyPosted = true;
    this.lastPosted = key;
    this.lastPostedAt = Date.now();
    this.posts++;
    return true;
  }

  /**
   * Until the node has been posted Ready once, its facts are checked every 100 ms and posted when they change
   * (upstream's fastStatusUpdateOnce): a node whose network comes up a moment after registering is Ready then,
   * not a whole update period later. After that, the regular period.
   */
  start(): void {
    const delay = (): number => (this.readyPosted ? (this.o.updateMs ?? 10_000) : FAST_MS);
    const tick = async (): Promise<void> => {
      try {
        if (!this.readyPosted) {
          const key = statusKey(nodeStatus(await this.facts()));
          if (key !== this.lastPosted) await this.sync(true);
        } else await this.sync();
      } catch (e) {
        this.log.warn(`node status update failed: ${(e as Error).message}`);
      }
      this.timer = setTimeout(() => void tick(), delay());
      this.timer.unref();
    };
    this.timer = setTimeout(() => void tick(), delay());
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
