// ControllerRevisions of DaemonSets and StatefulSets, kept pure: the
// revision's data (a strategic merge patch that puts the template back, which
// `kubectl rollout undo` applies), naming, numbering and pruning, as
// upstream's controller/history package.
import type { KObj } from '../../kube/client.js';
import { canonicalJson } from '../../kube/hash.js';
import { ownerRefTo, templateHash } from './workload-model.js';

/** apps.ControllerRevisionHashLabelKey: on revisions and on the pods made from them. */
export const LABEL_REVISION_HASH = 'controller-revision-hash';

/** upstream getPatch: the template, with a directive that replaces rather than merges it. */
export const revisionData = (template: KObj): KObj => ({
  spec: { template: { ...structuredClone(template ?? {}), $patch: 'replace' } },
});

/** The template a revision holds. */
export function revisionTemplate(cr: KObj): KObj {
  const t = structuredClone(cr.data?.spec?.template ?? {}) as KObj;
  delete t.$patch;
  return t;
}

export const sameData = (a: KObj, b: KObj): boolean => canonicalJson(a.data ?? null) === canonicalJson(b.data ?? null);

export const nextRevision = (revisions: KObj[]): number =>
  revisions.reduce((m, r) => Math.max(m, Number(r.revision ?? 0)), 0) + 1;

/** Oldest first (by revision, then by creation), as upstream's history.SortControllerRevisions. */
export const byRevision = (a: KObj, b: KObj): number =>
  Number(a.revision ?? 0) - Number(b.revision ?? 0) ||
  String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) ||
  String(a.metadata.name).localeCompare(String(b.metadata.name));

/** A new revision of the owner's current template (history.NewControllerRevision). */
export function newRevision(owner: KObj, template: KObj, revision: number, collisionCount: number): KObj {
  const hash = templateHash(template, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${owner.metadata.name}-${hash}`,
      namespace: owner.metadata.namespace,
      labels: { ...(template?.metadata?.labels ?? {}), [LABEL_REVISION_HASH]: hash },
      ...(owner.metadata.annotations ? { annotations: { ...owner.metadata.annotations } } : {}),
      ownerReferences: [ownerRefTo(owner)],
    },
    data: revisionData(template),
    revision,
  };
}

/** Revisions beyond revisionHistoryLimit, oldest first, never the current one or one a live pod still runs. */
export function revisionsToPrune(revisions: KObj[], keep: Set<string>, limit: number): KObj[] {
  const old = revisions.filter((r) => !keep.has(r.metadata.name)).sort(byRevision);
  return old.slice(0, Math.max(0, old.length - limit));
}
