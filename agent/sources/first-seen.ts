// kubernetes.io/config.seen: when this kubelet first saw a pod UID (upstream
// recordFirstSeenTime), kept across updates and forgotten when the pod goes.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { rfc3339Nano } from '../../kube/time.js';
import { ANN_CONFIG_SEEN } from './manifest.js';

export class FirstSeen {
  private readonly seen = new Map<string, string>();
  /** The last copy made of each source object: a source reports every pod on each change, most of them unchanged. */
  private readonly copies = new WeakMap<Pod, { extra: string; copy: Pod }>();

  /**
   * Copies of `pods` with config.seen (and any extra annotations) set; UIDs not in `pods` are forgotten. A pod object
   * seen before (the same object from the source's cache) gets the same copy back, so that an unchanged pod costs no
   * clone here and is recognised as unchanged downstream.
   */
  stamp(pods: Pod[], extra: Record<string, string> = {}): Pod[] {
    const live = new Set(pods.map((p) => p.metadata!.uid!));
    for (const uid of [...this.seen.keys()]) if (!live.has(uid)) this.seen.delete(uid);
    const extraKey = JSON.stringify(extra);
    return pods.map((p) => {
      const uid = p.metadata!.uid!;
      if (!this.seen.has(uid)) this.seen.set(uid, rfc3339Nano(new Date()));
      const last = this.copies.get(p);
      if (last && last.extra === extraKey && last.copy.metadata!.annotations?.[ANN_CONFIG_SEEN] === this.seen.get(uid))
        return last.copy;
      const copy = structuredClone(p);
      copy.metadata!.annotations = {
        ...(copy.metadata!.annotations ?? {}),
        ...extra,
        [ANN_CONFIG_SEEN]: this.seen.get(uid)!,
      };
      this.copies.set(p, { extra: extraKey, copy });
      return copy;
    });
  }
}
