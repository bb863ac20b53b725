// pods/eviction (policy/v1 Eviction, upstream's EvictionREST): a pod is
// deleted only if the PodDisruptionBudget covering it allows a disruption;
// the budget is decremented and the pod recorded in status.disruptedPods so
// the disruption controller does not count it meanwhile. Otherwise 429.
import { labelSelectorMatches } from '../../kube/selectors.js';
import { rfc3339 } from '../../kube/time.js';
import { isHealthy } from '../controllers/disruption-model.js';
import type { Obj } from '../storage/store.js';
import type { Api, DeleteOptions } from './api.js';
import { ApiError, errors } from './errors.js';

const MAX_DISRUPTED_PODS = 2000;
const tooMany = (message: string, cause?: string): ApiError =>
  new ApiError(429, 'TooManyRequests', message, {
    retryAfterSeconds: 0,
    ...(cause ? { causes: [{ reason: 'DisruptionBudget', message: cause }] } : {}),
  });

/** Evicts pod ns/name; throws 429 when its budget allows no disruption now. */
export function evict(api: Api, ns: string, name: string, body: Obj): void {
  const pods = api.res('', 'pods');
  const pod = api.get(pods, ns, name);
  if (body?.metadata?.name !== undefined && body.metadata.name !== name)
    throw errors.badRequest(`name in URL does not match name in Eviction object`);
  const opts = (body?.deleteOptions ?? {}) as DeleteOptions;
  // As upstream: the pod first gets the DisruptionTarget condition (a Job's pod failure policy can ignore it).
  const del = (): void => {
    const cur = api.get(pods, ns, name);
    const conditions = ((cur.status?.conditions ?? []) as Obj[]).filter((c) => c.type !== 'DisruptionTarget');
    conditions.push({
      type: 'DisruptionTarget',
      status: 'True',
      lastTransitionTime: rfc3339(),
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    api.update(pods, ns, name, { ...cur, status: { ...(cur.status ?? {}), conditions } }, 'status');
    api.delete(pods, ns, name, opts);
  };
  // Finished, pending and already-deleted pods hold no budget (upstream canIgnorePDB).
  if (['Succeeded', 'Failed', 'Pending'].includes(pod.status?.phase) || pod.metadata.deletionTimestamp) return del();
  const pdbRes = api.res('policy', 'poddisruptionbudgets');
  const labels = (pod.metadata.labels ?? {}) as Record<string, string>;
  const pdbs = (api.list(pdbRes, ns).items as Obj[]).filter(
    (b) => b.spec?.selector && labelSelectorMatches(b.spec.selector, labels),
  );
  if (pdbs.length > 1)
    throw errors.internal(
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  if (!pdbs.length) return del();
  const pdb = pdbs[0]!;
  const st = (pdb.status ?? {}) as Obj;
  // An unhealthy pod may go while the budget is met (IfHealthyBudget), or always (AlwaysAllow).
  if (
    !isHealthy(pod) &&
    (pdb.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow' || (st.currentHealthy ?? 0) >= (st.desiredHealthy ?? 0))
  )
    return del();
  if ((st.observedGeneration ?? 0) < (pdb.metadata.generation ?? 1))
    throw tooMany(
      `Cannot evict pod as it would violate the pod's disruption budget. The disruption budget ${pdb.metadata.name} is still being processed by the server.`,
    );
  if (Object.keys(st.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS)
    throw errors.forbiddenObject(
      'poddisruptionbudget',
      'policy',
      pdb.metadata.name,
      'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    );
  if (!((st.disruptionsAllowed ?? 0) > 0))
    throw tooMany(
      "Cannot evict pod as it would violate the pod's disruption budget.",
      `The disruption budget ${pdb.metadata.name} needs ${st.desiredHealthy ?? 0} healthy pods and has ${st.currentHealthy ?? 0} currently`,
    );
  const allowed = st.disruptionsAllowed - 1;
  const conditions = ((st.conditions ?? []) as Obj[]).map((c) =>
    c.type === 'DisruptionAllowed' && allowed === 0
      ? { ...c, status: 'False', reason: 'InsufficientPods', message: '', lastTransitionTime: rfc3339() }
      : c,
  );
  api.update(
    pdbRes,
    ns,
    pdb.metadata.name,
    {
      ...pdb,
      status: {
        ...st,
        disruptionsAllowed: allowed,
        disruptedPods: { ...(st.disruptedPods ?? {}), [name]: rfc3339() },
        conditions,
      },
    },
    'status',
  );
  del();
}
