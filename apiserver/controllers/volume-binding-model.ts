// PersistentVolume binding decisions, kept pure (upstream pkg/controller/
// volume/persistentvolume and the scheduler's VolumeBinding plugin): which
// volume a claim binds to, whether a bound volume's node affinity admits a
// node, and the local-path provisioner's volume for a claim.
import type { KObj } from '../../kube/client.js';
import { parseQuantity } from '../../kube/quantity.js';
import { labelSelectorMatches } from '../../kube/selectors.js';
import { matchesNodeSelector } from './scheduling.js';

export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';

export const classOf = (o: KObj): string => o.spec?.storageClassName ?? '';
const request = (pvc: KObj): number => parseQuantity(pvc.spec?.resources?.requests?.storage ?? '0');
const capacity = (pv: KObj): number => parseQuantity(pv.spec?.capacity?.storage ?? '0');

/** A claim's pre-binding on a volume: claimRef naming it (and its uid, when set). */
export const claimRefMatches = (pv: KObj, pvc: KObj): boolean => {
  const ref = pv.spec?.claimRef;
  return (
    !!ref &&
    ref.name === pvc.metadata.name &&
    (ref.namespace ?? 'default') === pvc.metadata.namespace &&
    (!ref.uid || ref.uid === pvc.metadata.uid)
  );
};

/** Whether a volume can serve a claim (class, volume mode, access modes, size, selector) and is free for it. */
export function volumeFits(pv: KObj, pvc: KObj): boolean {
  if (pv.metadata.deletionTimestamp) return false;
  if (pv.spec?.claimRef && !claimRefMatches(pv, pvc)) return false;
  if (classOf(pv) !== classOf(pvc)) return false;
  if ((pv.spec?.volumeMode ?? 'Filesystem') !== (pvc.spec?.volumeMode ?? 'Filesystem')) return false;
  const modes = new Set((pv.spec?.accessModes ?? []) as string[]);
  if (!((pvc.spec?.accessModes ?? []) as string[]).every((m) => modes.has(m))) return false;
  if (capacity(pv) < request(pvc)) return false;
  if (pvc.spec?.selector && !labelSelectorMatches(pvc.spec.selector, pv.metadata.labels ?? {})) return false;
  return true;
}

/** findBestMatchForClaim: a volume pre-bound to the claim, else the smallest that fits (and admits the node, if one is given). */
export function bestVolume(pvc: KObj, pvs: KObj[], node?: KObj): KObj | undefined {
  if (pvc.spec?.volumeName) return pvs.find((pv) => pv.metadata.name === pvc.spec.volumeName);
  const fits = pvs.filter((pv) => volumeFits(pv, pvc) && (!node || volumeAdmitsNode(pv, node)));
  return (
    fits.find((pv) => claimRefMatches(pv, pvc)) ??
    fits.filter((pv) => !pv.spec?.claimRef).sort((a, b) => capacity(a) - capacity(b))[0]
  );
}

/** The volume's required node affinity against a node's labels (and metadata.name fields). */
export function volumeAdmitsNode(pv: KObj, node: KObj): boolean {
  const required = pv.spec?.nodeAffinity?.required;
  if (!required) return true;
  return matchesNodeSelector(
    { spec: { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: required } } } },
    node,
  );
}

/** DefaultStorageClass admission: the newest class annotated default (upstream picks the newest since 1.26). */
export function defaultClass(classes: KObj[]): KObj | undefined {
  return classes
    .filter(
      (c) =>
        c.metadata.annotations?.[ANN_DEFAULT_CLASS] === 'true' ||
        c.metadata.annotations?.['storageclass.beta.kubernetes.io/is-default-class'] === 'true',
    )
    .sort(
      (a, b) =>
        String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)) ||
        String(a.metadata.name).localeCompare(String(b.metadata.name)),
    )[0];
}

/** The claim's bound status (what the binder writes once the volume is its). */
export const boundClaimStatus = (pv: KObj): KObj => ({
  phase: 'Bound',
  accessModes: pv.spec?.accessModes ?? [],
  capacity: { ...(pv.spec?.capacity ?? {}) },
});

/** local-path-provisioner's volume: a directory on the selected node, bound to the claim from the start. */
export function localPathVolume(pvc: KObj, sc: KObj, node: string, baseDir: string): KObj {
  const name = `pvc-${pvc.metadata.uid}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      annotations: { [ANN_PROVISIONED_BY]: LOCAL_PATH_PROVISIONER, 'local.path.provisioner/selected-node': node },
    },
    spec: {
      capacity: { storage: pvc.spec?.resources?.requests?.storage ?? '0' },
      accessModes: pvc.spec?.accessModes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: sc.reclaimPolicy ?? 'Delete',
      storageClassName: sc.metadata.name,
      volumeMode: 'Filesystem',
      hostPath: {
        path: `${baseDir.replace(/\/+$/, '')}/${name}_${pvc.metadata.namespace}_${pvc.metadata.name}`,
        type: 'DirectoryOrCreate',
      },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: pvc.metadata.namespace,
        name: pvc.metadata.name,
        uid: pvc.metadata.uid,
        resourceVersion: pvc.metadata.resourceVersion,
      },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
    },
  };
}

/** What the scheduler knows of a pod's claims: each by name (undefined if missing), their classes, all volumes. */
export interface PodVolumes {
  claims: Map<string, KObj | undefined>;
  classes: Map<string, KObj | undefined>;
  pvs: KObj[];
}

export const claimNamesOf = (pod: KObj): string[] =>
  ((pod.spec?.volumes ?? []) as KObj[]).map((v) => v.persistentVolumeClaim?.claimName).filter((n): n is string => !!n);

const delayed = (pvc: KObj, pv: PodVolumes): boolean =>
  pv.classes.get(classOf(pvc))?.volumeBindingMode === 'WaitForFirstConsumer';
const bound = (pvc: KObj): boolean => !!pvc.spec?.volumeName;

/** The VolumeBinding plugin's PreFilter: why no node can take the pod, or undefined. */
export function volumePreFilter(v: PodVolumes): string | undefined {
  for (const [name, pvc] of v.claims) {
    if (!pvc) return `persistentvolumeclaim "${name}" not found`;
    if (pvc.metadata.deletionTimestamp) return `persistentvolumeclaim "${name}" is being deleted`;
  }
  if ([...v.claims.values()].some((c) => !bound(c!) && !delayed(c!, v)))
    return 'pod has unbound immediate PersistentVolumeClaims';
  return undefined;
}

/** The VolumeBinding plugin's Filter for one node: bound volumes must admit it; delayed claims need a volume or a provisioner there. */
export function volumeNodeReason(v: PodVolumes, node: KObj): string | undefined {
  for (const pvc of v.claims.values()) {
    if (bound(pvc!)) {
      const pv = v.pvs.find((x) => x.metadata.name === pvc!.spec.volumeName);
      if (pv && !volumeAdmitsNode(pv, node)) return 'node(s) had volume node affinity conflict';
      continue;
    }
    const selected = pvc!.metadata.annotations?.[ANN_SELECTED_NODE];
    if (selected && selected !== node.metadata.name) return 'node(s) had volume node affinity conflict';
    if (bestVolume(pvc!, v.pvs, node)) continue;
    const sc = v.classes.get(classOf(pvc!));
    if (!sc || sc.provisioner === 'kubernetes.io/no-provisioner')
      return "node(s) didn't find available persistent volumes to bind";
  }
  return undefined;
}

/** Claims still waiting for a node (delayed binding, unbound, none selected): the scheduler names its choice on them. */
export const claimsAwaitingNode = (v: PodVolumes): KObj[] =>
  [...v.claims.values()].filter(
    (c): c is KObj => !!c && !bound(c) && delayed(c, v) && !c.metadata.annotations?.[ANN_SELECTED_NODE],
  );
export const allBound = (v: PodVolumes): boolean =>
  [...v.claims.values()].every((c) => !!c && bound(c) && c.status?.phase === 'Bound');
