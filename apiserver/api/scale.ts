// The scale subresource of Deployments and ReplicaSets (autoscaling/v1
// Scale), which `kubectl scale` patches: spec.replicas in, status.replicas and
// the selector as a string out.
import { jsonPatch, mergePatch, PatchDecodeError, PatchError, strategicMerge } from '../../kube/patch.js';
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';
import type { Api, PatchType } from './api.js';
import { errors } from './errors.js';

/** A LabelSelector in its string form (metav1.FormatLabelSelector). */
export function selectorString(sel: Obj | undefined): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries((sel?.matchLabels ?? {}) as Record<string, string>)) parts.push(`${k}=${v}`);
  for (const e of (sel?.matchExpressions ?? []) as Obj[]) {
    const vals = ((e.values ?? []) as string[]).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(String(e.key));
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** The pod selector of a workload as a LabelSelector: a ReplicationController's is a plain label map. */
export function podSelector(o: Obj): Obj | undefined {
  if (o.kind === 'ReplicationController') return o.spec?.selector ? { matchLabels: o.spec.selector } : undefined;
  return o.spec?.selector as Obj | undefined;
}

/** The value at a simple JSON path (.spec.replicas). */
function at(o: Obj, path: string): unknown {
  let cur: unknown = o;
  for (const seg of path.replace(/^\./, '').split('.'))
    cur = cur && typeof cur === 'object' ? (cur as Obj)[seg] : undefined;
  return cur;
}

function setAt(o: Obj, path: string, v: unknown): Obj {
  const out = structuredClone(o);
  const segs = path.replace(/^\./, '').split('.');
  let cur = out;
  for (const seg of segs.slice(0, -1))
    cur = (cur[seg] && typeof cur[seg] === 'object' ? cur[seg] : (cur[seg] = {})) as Obj;
  cur[segs[segs.length - 1]!] = v;
  return out;
}

/** The Scale of an object: Deployments, ReplicaSets and StatefulSets, or a custom resource through its definition's paths. */
export function toScale(o: Obj, r?: ResourceDef): Obj {
  const md = o.metadata;
  const sc = r?.custom?.scale;
  const replicas = sc ? ((at(o, sc.specReplicasPath) as number | undefined) ?? 0) : (o.spec?.replicas ?? 1);
  const status = sc
    ? {
        replicas: (at(o, sc.statusReplicasPath) as number | undefined) ?? 0,
        ...(sc.labelSelectorPath && typeof at(o, sc.labelSelectorPath) === 'string'
          ? { selector: at(o, sc.labelSelectorPath) }
          : {}),
      }
    : { replicas: o.status?.replicas ?? 0, selector: selectorString(podSelector(o)) };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: md.name,
      namespace: md.namespace,
      uid: md.uid,
      resourceVersion: md.resourceVersion,
      creationTimestamp: md.creationTimestamp,
    },
    spec: { replicas },
    status,
  };
}

export function getScale(api: Api, r: ResourceDef, ns: string, name: string): Obj {
  return toScale(api.get(r, ns, name), r);
}

/** PUT or PATCH of the scale: only spec.replicas changes, with the Scale's resourceVersion as a precondition. */
export function updateScale(
  api: Api,
  r: ResourceDef,
  ns: string,
  name: string,
  change: { put?: Obj; patch?: { type: PatchType; body: unknown } },
): Obj {
  const cur = api.get(r, ns, name);
  let scale: Obj;
  if (change.put) scale = change.put;
  else {
    const { type, body } = change.patch!;
    try {
      const base = toScale(cur, r);
      scale = (
        type === 'json' ? jsonPatch(base, body) : type === 'merge' ? mergePatch(base, body) : strategicMerge(base, body)
      ) as Obj;
    } catch (e) {
      if (e instanceof PatchDecodeError) throw errors.badRequest(e.message);
      if (e instanceof PatchError)
        throw type === 'json'
          ? errors.patchFailed()
          : errors.badRequest(`the server rejected our request due to an error in our request: ${e.message}`);
      throw e;
    }
  }
  const replicas = scale?.spec?.replicas;
  if (!Number.isInteger(replicas) || replicas < 0)
    throw errors.invalid('Scale', 'autoscaling', name, [
      {
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
      },
    ]);
  const rv = scale.metadata?.resourceVersion;
  const sc = r.custom?.scale;
  const next = sc
    ? setAt(
        { ...cur, metadata: { ...cur.metadata, ...(rv ? { resourceVersion: rv } : {}) } },
        sc.specReplicasPath,
        replicas,
      )
    : {
        ...cur,
        metadata: { ...cur.metadata, ...(rv ? { resourceVersion: rv } : {}) },
        spec: { ...cur.spec, replicas },
      };
  return toScale(api.update(r, ns, name, next), r);
}
