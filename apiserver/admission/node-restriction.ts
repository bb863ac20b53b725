// NodeRestriction (kube-apiserver --enable-admission-plugins=NodeRestriction):
// a node identity (user system:node:<name> in group system:nodes) may only
// create its own mirror pods, delete and update the status of pods bound to
// it, change its own Node (not its taints, nor labels outside the kubelet's
// set) and its own Lease. Messages follow upstream's admission plugin.
import type { AdmissionPlugin, Attributes, User } from '../api/admission.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

const MIRROR = 'kubernetes.io/config.mirror';
const NODE_LEASE_NS = 'kube-node-lease';

/** The node a user acts for, or undefined if the user is not a node ('' if it cannot be told). */
export function nodeIdentity(u: User): string | undefined {
  if (!u.groups.includes('system:nodes') || !u.name.startsWith('system:node:')) return undefined;
  return u.name.slice('system:node:'.length);
}

/** Labels a kubelet may set on its Node (k8s.io/kubelet/pkg/apis well_known_labels). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNs = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNs = (ns: string, base: string): boolean => ns === base || ns.endsWith(`.${base}`);

function forbiddenLabels(next: Record<string, string> = {}, prev: Record<string, string> = {}): string[] {
  const modified = new Set<string>();
  for (const k of new Set([...Object.keys(next), ...Object.keys(prev)])) if (next[k] !== prev[k]) modified.add(k);
  const out: string[] = [];
  for (const k of modified) {
    const ns = labelNs(k);
    const restricted = inNs(ns, 'node-restriction.kubernetes.io');
    const kube = inNs(ns, 'kubernetes.io') || inNs(ns, 'k8s.io');
    const kubeletOk = KUBELET_LABELS.has(k) || KUBELET_LABEL_NAMESPACES.some((b) => inNs(ns, b));
    if (restricted || (kube && !kubeletOk)) out.push(k);
  }
  return out.sort();
}

/** Whether a pod spec names a secret or a configmap (podutil.VisitPodSecretNames / VisitPodConfigmapNames). */
function podRefs(spec: Obj): { secrets: boolean; configMaps: boolean; pvcs: boolean; trustBundles: boolean } {
  const containers = [
    ...(spec.initContainers ?? []),
    ...(spec.containers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ] as Obj[];
  let secrets = (spec.imagePullSecrets ?? []).length > 0;
  let configMaps = false;
  let trustBundles = false;
  for (const c of containers) {
    for (const e of (c.envFrom ?? []) as Obj[]) {
      if (e.secretRef) secrets = true;
      if (e.configMapRef) configMaps = true;
    }
    for (const e of (c.env ?? []) as Obj[]) {
      if (e.valueFrom?.secretKeyRef) secrets = true;
      if (e.valueFrom?.configMapKeyRef) configMaps = true;
    }
  }
  for (const v of (spec.volumes ?? []) as Obj[]) {
    if (v.secret || Object.values(v).some((src) => src && typeof src === 'object' && 'secretRef' in (src as Obj)))
      secrets = true;
    if (v.configMap) configMaps = true;
    for (const s of (v.projected?.sources ?? []) as Obj[]) {
      if (s.secret) secrets = true;
      if (s.configMap) configMaps = true;
      if (s.clusterTrustBundle) trustBundles = true;
    }
  }
  const pvcs = ((spec.volumes ?? []) as Obj[]).some((v) => v.persistentVolumeClaim);
  return { secrets, configMaps, pvcs, trustBundles };
}

export const nodeRestriction: AdmissionPlugin = {
  name: 'NodeRestriction',
  admit(a: Attributes, get): void {
    const node = nodeIdentity(a.user);
    if (node === undefined) return;
    const deny = (why: string): never => {
      throw errors.forbiddenObject(a.resource.resource, a.resource.group, a.name, why);
    };
    if (!node) deny(`could not determine node from user "${a.user.name}"`);
    const gr = `${a.resource.group}/${a.resource.resource}`;
    switch (gr) {
      case '/pods':
        return admitPod(node, a, deny, get);
      case '/nodes':
        return admitNode(node, a, deny);
      case '/serviceaccounts':
        if (a.subresource === 'token') return admitTokenRequest(node, a, deny, get);
        return;
      case 'coordination.k8s.io/leases':
        if (a.namespace !== NODE_LEASE_NS) deny(`can only access leases in the "${NODE_LEASE_NS}" system namespace`);
        if (a.name !== node) deny('can only access node lease with the same name as the requesting node');
        return;
      case 'storage.k8s.io/csinodes':
        if (a.name !== node) deny('can only access CSINode with the same name as the requesting node');
        return;
      default:
        return;
    }
  },
};

/** A node may only ask for tokens bound to a pod that runs on it (upstream admitServiceAccount). */
function admitTokenRequest(
  node: string,
  a: Attributes,
  deny: (why: string) => never,
  get: Parameters<AdmissionPlugin['admit']>[1],
): void {
  const ref = a.object?.spec?.boundObjectRef as Obj | undefined;
  if (!ref || ref.kind !== 'Pod') deny(`node requested token not bound to a pod`);
  if (!ref!.uid) deny(`node requested token with a pod binding without a uid`);
  const pod = get('', 'pods', a.namespace, String(ref!.name));
  if (!pod) throw errors.notFound('pods', '', String(ref!.name));
  if (pod.metadata.uid !== ref!.uid)
    deny(
      `the UID in the bound object reference (${String(ref!.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  if (pod.spec?.nodeName !== node) deny(`node requested token bound to a pod scheduled on a different node`);
}

function admitPod(
  node: string,
  a: Attributes,
  deny: (why: string) => never,
  get: Parameters<AdmissionPlugin['admit']>[1],
): void {
  if (a.subresource === 'status') {
    if (a.operation !== 'UPDATE') deny(`unexpected operation "${a.operation}"`);
    if (a.oldObject?.spec?.nodeName !== node)
      deny(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    if (JSON.stringify(a.oldObject?.metadata?.labels ?? {}) !== JSON.stringify(a.object?.metadata?.labels ?? {}))
      deny(`node "${node}" cannot update labels through pod status`);
    return;
  }
  if (a.subresource !== '')
    deny(`unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
  if (a.operation === 'DELETE') {
    if (a.oldObject?.spec?.nodeName !== node)
      deny(`node "${node}" can only delete pods with spec.nodeName set to itself`);
    return;
  }
  if (a.operation !== 'CREATE')
    deny(`unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
  const pod = a.object!;
  if (pod.metadata?.annotations?.[MIRROR] === undefined)
    deny(`pod does not have "${MIRROR}" annotation, node "${node}" can only create mirror pods`);
  if (pod.spec?.nodeName !== node) deny(`node "${node}" can only create pods with spec.nodeName set to itself`);
  const owners = (pod.metadata?.ownerReferences ?? []) as Obj[];
  if (owners.length > 1) deny(`node "${node}" can only create pods with a single owner reference set to itself`);
  const owner = owners[0];
  if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node)
    deny(`node "${node}" can only create pods with an owner reference set to itself`);
  if (owner!.controller !== true)
    deny(`node "${node}" can only create pods with a controller owner reference set to itself`);
  if (owner!.blockOwnerDeletion === true) deny(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
  const self = get('', 'nodes', '', node);
  if (!self) throw errors.notFound('nodes', '', node);
  if (owner!.uid !== self.metadata.uid)
    deny(`node ${node} UID mismatch: expected ${String(owner!.uid)} got ${String(self.metadata.uid)}`);
  if (pod.spec.serviceAccountName) deny(`node "${node}" can not create pods that reference a service account`);
  const refs = podRefs(pod.spec);
  if (refs.secrets) deny(`node "${node}" can not create pods that reference secrets`);
  if (refs.configMaps) deny(`node "${node}" can not create pods that reference configmaps`);
  if (refs.trustBundles) deny(`node "${node}" can not create pods that reference clustertrustbundles`);
  if (refs.pvcs) deny(`node "${node}" can not create pods that reference persistentvolumeclaims`);
}

function admitNode(node: string, a: Attributes, deny: (why: string) => never): void {
  if (a.name !== node) deny(`node "${node}" is not allowed to modify node "${a.name}"`);
  if (a.operation === 'CREATE') {
    if (a.object?.spec?.configSource) deny(`node "${node}" is not allowed to create pods with a non-nil configSource`);
    const bad = forbiddenLabels(a.object?.metadata?.labels);
    if (bad.length) deny(`node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
  }
  if (a.operation === 'UPDATE') {
    const next = a.object!;
    const prev = a.oldObject!;
    if (next.spec?.configSource && JSON.stringify(next.spec.configSource) !== JSON.stringify(prev.spec?.configSource))
      deny(`node "${node}" is not allowed to update configSource to a new non-nil configSource`);
    if (JSON.stringify(next.spec?.taints ?? []) !== JSON.stringify(prev.spec?.taints ?? []))
      deny(`node "${node}" is not allowed to modify taints`);
    const bad = forbiddenLabels(next.metadata?.labels, prev.metadata?.labels);
    if (bad.length) deny(`is not allowed to modify labels: ${bad.join(', ')}`);
  }
}
