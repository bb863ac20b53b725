// Reads and writes the ControllerRevisions of a DaemonSet or StatefulSet:
// finds or makes the revision of its current template (a hash collision bumps
// status.collisionCount, an old revision coming back is renumbered, as after
// `kubectl rollout undo`), and prunes history beyond revisionHistoryLimit.
// Also the owned-pod listing with orphan adoption both controllers share.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { labelSelectorMatches } from '../../kube/selectors.js';
import { podSelector, selectorString } from '../api/scale.js';
import {
  LABEL_REVISION_HASH,
  newRevision,
  nextRevision,
  revisionData,
  revisionsToPrune,
  sameData,
} from './controller-history.js';
import { controllerRef, isActive, notFoundOk, ownedBy, ownerRefTo } from './workload-model.js';

const REVISIONS = (ns: string): string => `/apis/apps/v1/namespaces/${ns}/controllerrevisions`;

export async function ownedRevisions(client: KubeApi, owner: KObj): Promise<KObj[]> {
  const sel = selectorString(owner.spec?.selector);
  const list = (await client.get(REVISIONS(owner.metadata.namespace), { labelSelector: sel })).items as KObj[];
  return list.filter((r) => ownedBy(r, owner));
}

/**
 * The revision of the owner's current template, made if missing. Returns it
 * with every owned revision and the owner as last written (collisionCount).
 */
export async function currentRevision(
  client: KubeApi,
  owner: KObj,
  statusPath: string,
): Promise<{ current: KObj; revisions: KObj[]; owner: KObj }> {
  const ns = owner.metadata.namespace;
  let revisions = await ownedRevisions(client, owner);
  const want = { data: revisionData(owner.spec?.template ?? {}) };
  const equal = revisions
    .filter((r) => sameData(r, want))
    .sort((a, b) => Number(b.revision ?? 0) - Number(a.revision ?? 0));
  const max = nextRevision(revisions) - 1;
  if (equal[0]) {
    let current = equal[0];
    // The template went back to an older revision: it becomes the newest.
    if (Number(current.revision ?? 0) < max) {
      current = await client.update(`${REVISIONS(ns)}/${current.metadata.name}`, { ...current, revision: max + 1 });
      revisions = revisions.map((r) => (r.metadata.name === current.metadata.name ? current : r));
    }
    return { current, revisions, owner };
  }
  for (;;) {
    const collisionCount = owner.status?.collisionCount ?? 0;
    const cr = newRevision(owner, owner.spec?.template ?? {}, max + 1, collisionCount);
    try {
      const current = await client.create(REVISIONS(ns), cr);
      return { current, revisions: [...revisions, current], owner };
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409)) throw e;
      const existing = await client.get(`${REVISIONS(ns)}/${cr.metadata.name}`).catch(notFoundOk);
      if (existing && ownedBy(existing, owner) && sameData(existing, cr))
        return { current: existing, revisions: [...revisions, existing], owner };
      // Another object holds that name: hash again with the next collision count.
      owner = await client.update(statusPath, {
        ...owner,
        status: { ...(owner.status ?? {}), collisionCount: collisionCount + 1 },
      });
    }
  }
}

/** Deletes history beyond the limit, keeping the current revision and those live pods were made from. */
export async function pruneRevisions(
  client: KubeApi,
  owner: KObj,
  revisions: KObj[],
  current: KObj,
  pods: KObj[],
  podRevision: (p: KObj) => string | undefined,
): Promise<void> {
  const live = new Set(
    pods
      .filter(isActive)
      .map(podRevision)
      .filter((h): h is string => !!h),
  );
  const keep = new Set(
    revisions
      .filter(
        (r) =>
          r.metadata.name === current.metadata.name ||
          live.has(r.metadata.labels?.[LABEL_REVISION_HASH]) ||
          live.has(r.metadata.name),
      )
      .map((r) => r.metadata.name as string),
  );
  for (const r of revisionsToPrune(revisions, keep, owner.spec?.revisionHistoryLimit ?? 10))
    await client.delete(`${REVISIONS(owner.metadata.namespace)}/${r.metadata.name}`).catch(notFoundOk);
}

/**
 * The active pods an owner controls, as upstream's ClaimPods: matching orphans are adopted (a controller reference
 * added); pods it controls whose labels no longer match are released (theirs removed).
 */
export async function ownedPods(client: KubeApi, owner: KObj): Promise<KObj[]> {
  const ns = owner.metadata.namespace;
  const selector = podSelector(owner);
  if (!selectorString(selector)) return [];
  const list = (await client.get(`/api/v1/namespaces/${ns}/pods`)).items as KObj[];
  const mine: KObj[] = [];
  for (const p of list) {
    const matches = labelSelectorMatches(selector!, (p.metadata.labels ?? {}) as Record<string, string>);
    if (ownedBy(p, owner)) {
      if (matches || p.metadata.deletionTimestamp) mine.push(p);
      else await release(client, owner, p);
    } else if (matches && !controllerRef(p) && isActive(p)) {
      mine.push(
        await client.patch(
          `/api/v1/namespaces/${ns}/pods/${p.metadata.name}`,
          { metadata: { uid: p.metadata.uid, ownerReferences: [ownerRefTo(owner)] } },
          'strategic',
        ),
      );
    }
  }
  return mine;
}

/** ReleasePod: a strategic patch deleting the owner's reference by uid. */
async function release(client: KubeApi, owner: KObj, p: KObj): Promise<void> {
  await client
    .patch(
      `/api/v1/namespaces/${owner.metadata.namespace}/pods/${p.metadata.name}`,
      { metadata: { uid: p.metadata.uid, ownerReferences: [{ $patch: 'delete', uid: owner.metadata.uid }] } },
      'strategic',
    )
    .catch((e: unknown) => {
      if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409 || e.code === 422))) throw e;
    });
}
