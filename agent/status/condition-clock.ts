// lastTransitionTime for Node and Pod conditions: it moves only when a
// condition's status changes, and is kept across posts otherwise.
import { rfc3339 } from '../../kube/time.js';

export class ConditionClock {
  private readonly last = new Map<string, { status: string; at: string }>();

  /** Starts from conditions already posted (e.g. read back from the API after a kubelet restart). */
  constructor(posted: { type?: string; status?: string; lastTransitionTime?: string | null }[] = []) {
    for (const c of posted)
      if (c.type && c.status && c.lastTransitionTime)
        this.last.set(c.type, { status: c.status, at: c.lastTransitionTime });
  }

  /** Each condition with its lastTransitionTime, remembering it for the next call. */
  stamp<C extends { type: string; status: string }>(
    conditions: C[],
    now = rfc3339(),
  ): (C & { lastTransitionTime: string })[] {
    return conditions.map((c) => {
      const prev = this.last.get(c.type);
      const at = prev && prev.status === c.status ? prev.at : now;
      this.last.set(c.type, { status: c.status, at });
      return { ...c, lastTransitionTime: at };
    });
  }
}
