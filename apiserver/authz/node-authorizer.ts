// The Node authorizer (--authorization-mode=Node): what a kubelet, as
// system:node:<name> in system:nodes, may do. The rules are upstream's node
// rules; ServiceAccounts, Secrets, ConfigMaps and PersistentVolumeClaims are readable only when
// a pod bound to that node references them (upstream's graph, reduced to a
// pod index). Writes are further narrowed by NodeRestriction admission.
import { nodeIdentity } from '../admission/node-restriction.js';
import type { Obj, Store } from '../storage/store.js';
import { type Authorizer, type AuthzAttributes, type PolicyRule, ruleAllows } from './authorizer.js';

const READ = ['get', 'list', 'watch'];

const NODE_RULES: PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  {
    apiGroups: ['authorization.k8s.io'],
    resources: ['subjectaccessreviews', 'localsubjectaccessreviews'],
    verbs: ['create'],
  },
  { apiGroups: [''], resources: ['services'], verbs: READ },
  { apiGroups: [''], resources: ['endpoints'], verbs: ['get'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['create', ...READ, 'patch', 'update'] },
  { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch', 'update'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
  { apiGroups: [''], resources: ['pods'], verbs: [...READ, 'create', 'delete'] },
  { apiGroups: [''], resources: ['pods/status'], verbs: ['patch', 'update'] },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
  { apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'], verbs: READ },
  // CSI: the kubelet reads CSIDrivers and keeps its own CSINode (NodeRestriction checks the name).
  { apiGroups: ['storage.k8s.io'], resources: ['csidrivers'], verbs: READ },
  { apiGroups: ['storage.k8s.io'], resources: ['csinodes'], verbs: ['get', 'create', 'update', 'patch', 'delete'] },
  // podCertificate projected volumes (list and watch only with the node's spec.nodeName, below).
  { apiGroups: ['certificates.k8s.io'], resources: ['podcertificaterequests'], verbs: [...READ, 'create'] },
  // Client certificate rotation and serving certificates (upstream's node rules).
  { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', ...READ] },
  // clusterTrustBundle projected volumes.
  { apiGroups: ['certificates.k8s.io'], resources: ['clustertrustbundles'], verbs: READ },
];

/** Names of the ServiceAccount, Secrets, ConfigMaps and PVCs a pod spec references. */
function references(spec: Obj): Set<string> {
  const out = new Set<string>();
  // The kubelet reads its pods' ServiceAccounts (a podCertificate volume names the account's uid).
  if (spec.serviceAccountName) out.add(`serviceaccounts/${spec.serviceAccountName}`);
  for (const s of (spec.imagePullSecrets ?? []) as Obj[]) out.add(`secrets/${s.name}`);
  for (const v of (spec.volumes ?? []) as Obj[]) {
    if (v.secret?.secretName) out.add(`secrets/${v.secret.secretName}`);
    if (v.configMap?.name) out.add(`configmaps/${v.configMap.name}`);
    if (v.persistentVolumeClaim?.claimName) out.add(`persistentvolumeclaims/${v.persistentVolumeClaim.claimName}`);
    for (const s of (v.projected?.sources ?? []) as Obj[]) {
      if (s.secret?.name) out.add(`secrets/${s.secret.name}`);
      if (s.configMap?.name) out.add(`configmaps/${s.configMap.name}`);
    }
  }
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as Obj[]) {
    for (const e of (c.envFrom ?? []) as Obj[]) {
      if (e.secretRef?.name) out.add(`secrets/${e.secretRef.name}`);
      if (e.configMapRef?.name) out.add(`configmaps/${e.configMapRef.name}`);
    }
    for (const e of (c.env ?? []) as Obj[]) {
      if (e.valueFrom?.secretKeyRef?.name) out.add(`secrets/${e.valueFrom.secretKeyRef.name}`);
      if (e.valueFrom?.configMapKeyRef?.name) out.add(`configmaps/${e.valueFrom.configMapKeyRef.name}`);
    }
  }
  return out;
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  /** node -> pod key -> "ns/resource/name" references */
  private readonly byNode = new Map<string, Map<string, Set<string>>>();

  constructor(private readonly store: Store) {
    const index = (o: Obj, remove: boolean): void => {
      const node = o.spec?.nodeName as string | undefined;
      const key = `${o.metadata.namespace}/${o.metadata.name}`;
      for (const m of this.byNode.values()) m.delete(key);
      if (remove || !node) return;
      let m = this.byNode.get(node);
      if (!m) this.byNode.set(node, (m = new Map()));
      m.set(key, new Set([...references(o.spec ?? {})].map((r) => `${o.metadata.namespace}/${r}`)));
    };
    for (const o of store.list('/pods/').items) index(o, false);
    store.watch('/pods/', 0, (e) => index(e.object, e.type === 'DELETED'));
  }

  private referenced(node: string, ns: string, resource: string, name: string): boolean {
    const want = `${ns}/${resource}/${name}`;
    for (const refs of this.byNode.get(node)?.values() ?? []) if (refs.has(want)) return true;
    return false;
  }

  /** node -> pod -> claim -> volume: a PersistentVolume bound to a claim one of the node's pods uses. */
  private volumeReferenced(node: string, pv: string): boolean {
    for (const refs of this.byNode.get(node)?.values() ?? []) {
      for (const r of refs) {
        const [ns, resource, name] = r.split('/') as [string, string, string];
        if (
          resource === 'persistentvolumeclaims' &&
          this.store.get(`/persistentvolumeclaims/${ns}/${name}`)?.spec?.volumeName === pv
        )
          return true;
      }
    }
    return false;
  }

  authorize(a: AuthzAttributes): { decision: 'allow' | 'noopinion'; reason: string } {
    const node = nodeIdentity(a.user);
    if (node === undefined) return { decision: 'noopinion', reason: '' };
    if (!node) return { decision: 'noopinion', reason: 'unknown node for user' };
    if (a.resourceRequest && a.apiGroup === '' && a.resource === 'persistentvolumes' && !a.subresource) {
      if (a.verb === 'get' && this.volumeReferenced(node, a.name)) return { decision: 'allow', reason: '' };
      return { decision: 'noopinion', reason: `no relationship found between node '${node}' and this object` };
    }
    if (
      a.resourceRequest &&
      a.apiGroup === '' &&
      ['secrets', 'configmaps', 'persistentvolumeclaims', 'serviceaccounts'].includes(a.resource) &&
      !a.subresource
    ) {
      if (a.verb === 'get' && this.referenced(node, a.namespace, a.resource, a.name))
        return { decision: 'allow', reason: '' };
      return { decision: 'noopinion', reason: `no relationship found between node '${node}' and this object` };
    }
    // A node reads and writes only its own Lease (upstream's node lease rule with NodeRestriction).
    if (
      a.resourceRequest &&
      a.apiGroup === 'coordination.k8s.io' &&
      a.resource === 'leases' &&
      (a.namespace !== 'kube-node-lease' || (a.name !== node && a.verb !== 'create'))
    ) {
      return {
        decision: 'noopinion',
        reason: `node '${node}' can only access its own lease in the kube-node-lease namespace`,
      };
    }
    // AuthorizeNodeWithSelectors (1.32): pods may only be listed or watched with spec.nodeName=<node>.
    if (
      a.resourceRequest &&
      a.apiGroup === '' &&
      a.resource === 'pods' &&
      !a.subresource &&
      (a.verb === 'list' || a.verb === 'watch') &&
      !selectsNode(a.fieldSelector, node)
    ) {
      return { decision: 'noopinion', reason: `can only list/watch pods with spec.nodeName field selector` };
    }
    if (
      a.resourceRequest &&
      a.apiGroup === 'certificates.k8s.io' &&
      a.resource === 'podcertificaterequests' &&
      (a.verb === 'list' || a.verb === 'watch') &&
      !selectsNode(a.fieldSelector, node)
    ) {
      return {
        decision: 'noopinion',
        reason: 'can only list/watch podcertificaterequests with nodeName field selector',
      };
    }
    if (NODE_RULES.some((r) => ruleAllows(a, r))) return { decision: 'allow', reason: '' };
    return { decision: 'noopinion', reason: '' };
  }
}

/** Whether a field selector pins spec.nodeName to this node. */
function selectsNode(selector: string | undefined, node: string): boolean {
  return (selector ?? '')
    .split(',')
    .some((t) => ['spec.nodeName=', 'spec.nodeName=='].some((p) => t.trim() === `${p}${node}`));
}
