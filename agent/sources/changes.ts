// What one SET from a pod source changed against its previous SET, as
// upstream's config merge names it: ADD (new UID), UPDATE (a new object for
// a known UID), DELETE (the update that set deletionTimestamp), REMOVE (gone
// from the source). Sources hand back the same object for an unchanged pod.
import type { Pod } from 'kubernetes-types/core/v1.js';

export interface SourceChanges {
  add: Pod[];
  update: Pod[];
  delete: Pod[];
  remove: Pod[];
}

export function sourceChanges(before: readonly Pod[], after: readonly Pod[]): SourceChanges {
  const prev = new Map(before.map((p) => [p.metadata!.uid!, p]));
  const out: SourceChanges = { add: [], update: [], delete: [], remove: [] };
  for (const p of after) {
    const old = prev.get(p.metadata!.uid!);
    prev.delete(p.metadata!.uid!);
    if (!old) out.add.push(p);
    else if (old !== p)
      (p.metadata?.deletionTimestamp && !old.metadata?.deletionTimestamp ? out.delete : out.update).push(p);
  }
  out.remove = [...prev.values()];
  return out;
}

/** `namespace/name` of each pod, as upstream's klog.KObjSlice prints them. */
export const podNames = (pods: readonly Pod[]): string[] =>
  pods.map((p) => `${p.metadata!.namespace!}/${p.metadata!.name!}`);
