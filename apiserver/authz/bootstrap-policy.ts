// The default ClusterRoles and ClusterRoleBindings an apiserver starts with
// (upstream plugin/pkg/auth/authorizer/rbac/bootstrappolicy), the subset our
// identities and kubectl need, with upstream names. They are created when
// missing and never overwritten, so users can change them.
import { SYSTEM_USER } from '../api/admission.js';
import type { Api } from '../api/api.js';
import { aggregatedRules } from '../controllers/clusterrole-aggregation.js';
import { storageKey } from '../resources.js';
import type { PolicyRule } from './authorizer.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

/** Where kubelets are reached: the apiserver's identity towards them (kubeadm's name). */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';

const VIEW_CORE = [
  'configmaps',
  'endpoints',
  'persistentvolumeclaims',
  'pods',
  'pods/log',
  'pods/status',
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'replicationcontrollers/status',
  'services',
  'services/status',
  'serviceaccounts',
  'events',
  'limitranges',
  'resourcequotas',
];
const VIEW_APPS = [
  'controllerrevisions',
  'daemonsets',
  'daemonsets/status',
  'deployments',
  'deployments/status',
  'deployments/scale',
  'replicasets',
  'replicasets/status',
  'replicasets/scale',
  'statefulsets',
  'statefulsets/status',
  'statefulsets/scale',
];
/** edit writes workloads, not their status or history (upstream's aggregate-to-edit). */
const EDIT_APPS = [
  'daemonsets',
  'deployments',
  'deployments/rollback',
  'deployments/scale',
  'replicasets',
  'replicasets/scale',
  'statefulsets',
  'statefulsets/scale',
];

const VIEW_BATCH = ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'];

export const BOOTSTRAP_CLUSTER_ROLES: Record<string, PolicyRule[]> = {
  'cluster-admin': [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ],
  'system:discovery': [
    {
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/healthz',
        '/livez',
        '/openapi',
        '/openapi/*',
        '/readyz',
        '/version',
        '/version/',
      ],
      verbs: ['get'],
    },
  ],
  'system:public-info-viewer': [
    { nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'], verbs: ['get'] },
  ],
  'system:service-account-issuer-discovery': [
    {
      nonResourceURLs: [
        '/.well-known/openid-configuration',
        '/.well-known/openid-configuration/',
        '/openid/v1/jwks',
        '/openid/v1/jwks/',
      ],
      verbs: ['get'],
    },
  ],
  'system:basic-user': [
    {
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      verbs: ['create'],
    },
    { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
  ],
  'system:node-proxier': [
    { apiGroups: [''], resources: ['endpoints', 'services'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['nodes'], verbs: READ },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
  ],
  'system:kubelet-api-admin': [
    { apiGroups: [''], resources: ['nodes'], verbs: [...READ, 'proxy'] },
    { apiGroups: [''], resources: ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats'], verbs: ['*'] },
  ],
  // Every service account may read ClusterTrustBundles (workloads that verify peers with them).
  'system:cluster-trust-bundle-discovery': [
    { apiGroups: ['certificates.k8s.io'], resources: ['clustertrustbundles'], verbs: READ },
  ],
  // TLS bootstrap: what a bootstrap token may do, and who may have their node CSRs approved automatically.
  'system:node-bootstrapper': [
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['certificatesigningrequests'],
      verbs: ['create', 'get', 'list', 'watch'],
    },
  ],
  'system:certificates.k8s.io:certificatesigningrequests:nodeclient': [
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/nodeclient'], verbs: ['create'] },
  ],
  'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient': [
    { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests/selfnodeclient'], verbs: ['create'] },
  ],
  // Who may approve requests for each built-in signer (CertificateApproval asks for `approve` on signers/<name>).
  'system:certificates.k8s.io:kube-apiserver-client-approver': [
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['signers'],
      resourceNames: ['kubernetes.io/kube-apiserver-client'],
      verbs: ['approve'],
    },
  ],
  'system:certificates.k8s.io:kube-apiserver-client-kubelet-approver': [
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['signers'],
      resourceNames: ['kubernetes.io/kube-apiserver-client-kubelet'],
      verbs: ['approve'],
    },
  ],
  'system:certificates.k8s.io:kubelet-serving-approver': [
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['signers'],
      resourceNames: ['kubernetes.io/kubelet-serving'],
      verbs: ['approve'],
    },
  ],
  'system:certificates.k8s.io:legacy-unknown-approver': [
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['signers'],
      resourceNames: ['kubernetes.io/legacy-unknown'],
      verbs: ['approve'],
    },
  ],
  // kube-controller-manager's csrapproving and csrsigning controllers.
  'system:controller:certificate-controller': [
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['certificatesigningrequests'],
      verbs: ['get', 'list', 'watch', 'delete'],
    },
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['certificatesigningrequests/status', 'certificatesigningrequests/approval'],
      verbs: ['update'],
    },
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['signers'],
      resourceNames: ['kubernetes.io/kube-apiserver-client-kubelet'],
      verbs: ['approve'],
    },
    {
      apiGroups: ['certificates.k8s.io'],
      resources: ['signers'],
      resourceNames: [
        'kubernetes.io/legacy-unknown',
        'kubernetes.io/kube-apiserver-client',
        'kubernetes.io/kube-apiserver-client-kubelet',
        'kubernetes.io/kubelet-serving',
      ],
      verbs: ['sign'],
    },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
  ],
  // kubeadm join's check that no Ready Node already has the joining node's name.
  'kubeadm:get-nodes': [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }],
  // admin, edit and view are aggregated as upstream: their rules come from the system:aggregate-to-* roles
  // (and from any ClusterRole a user labels rbac.authorization.k8s.io/aggregate-to-<role>: "true").
  'system:aggregate-to-view': [
    { apiGroups: [''], resources: [...VIEW_CORE, 'namespaces', 'namespaces/status', 'pods/status'], verbs: READ },
    { apiGroups: ['apps'], resources: VIEW_APPS, verbs: READ },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: READ },
    { apiGroups: ['batch'], resources: VIEW_BATCH, verbs: READ },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'], verbs: READ },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingresses/status', 'networkpolicies'], verbs: READ },
  ],
  'system:aggregate-to-edit': [
    { apiGroups: [''], resources: ['secrets'], verbs: READ },
    {
      apiGroups: [''],
      resources: [
        'pods',
        'pods/attach',
        'pods/exec',
        'pods/portforward',
        'pods/proxy',
        'configmaps',
        'endpoints',
        'persistentvolumeclaims',
        'replicationcontrollers',
        'replicationcontrollers/scale',
        'secrets',
        'serviceaccounts',
        'services',
      ],
      verbs: WRITE,
    },
    { apiGroups: [''], resources: ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'], verbs: READ },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
    { apiGroups: ['apps'], resources: EDIT_APPS, verbs: WRITE },
    { apiGroups: ['batch'], resources: VIEW_BATCH, verbs: WRITE },
    { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: WRITE },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: WRITE },
    { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  ],
  'system:aggregate-to-admin': [
    { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: [...READ, ...WRITE] },
  ],
  admin: [],
  edit: [],
  view: [],
};

type Subject =
  | { kind: 'User' | 'Group'; apiGroup: 'rbac.authorization.k8s.io'; name: string }
  | { kind: 'ServiceAccount'; name: string; namespace: string };
const user = (name: string): Subject => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });
const group = (name: string): Subject => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });
const controller = (name: string): Subject => ({ kind: 'ServiceAccount', name, namespace: 'kube-system' });

const AGG = 'rbac.authorization.k8s.io/aggregate-to-';
/** Labels and aggregation rules of the aggregated roles and their parts (upstream bootstrappolicy). */
const AGGREGATION: Record<string, { labels?: Record<string, string>; aggregateFrom?: string }> = {
  admin: { aggregateFrom: 'admin' },
  edit: { labels: { [`${AGG}admin`]: 'true' }, aggregateFrom: 'edit' },
  view: { labels: { [`${AGG}edit`]: 'true' }, aggregateFrom: 'view' },
  'system:aggregate-to-admin': { labels: { [`${AGG}admin`]: 'true' } },
  'system:aggregate-to-edit': { labels: { [`${AGG}edit`]: 'true' } },
  'system:aggregate-to-view': { labels: { [`${AGG}view`]: 'true' } },
};

export const BOOTSTRAP_BINDINGS: Record<string, { role: string; subjects: Subject[] }> = {
  'cluster-admin': { role: 'cluster-admin', subjects: [group('system:masters')] },
  'system:discovery': { role: 'system:discovery', subjects: [group('system:authenticated')] },
  'system:public-info-viewer': {
    role: 'system:public-info-viewer',
    subjects: [group('system:authenticated'), group('system:unauthenticated')],
  },
  'system:basic-user': { role: 'system:basic-user', subjects: [group('system:authenticated')] },
  'system:service-account-issuer-discovery': {
    role: 'system:service-account-issuer-discovery',
    subjects: [group('system:serviceaccounts')],
  },
  'system:cluster-trust-bundle-discovery': {
    role: 'system:cluster-trust-bundle-discovery',
    subjects: [group('system:serviceaccounts')],
  },
  'system:node-proxier': { role: 'system:node-proxier', subjects: [user('system:kube-proxy')] },
  // kubeadm's name for it (its bootstrap-token phase).
  'kubeadm:apiserver-kubelet-client': { role: 'system:kubelet-api-admin', subjects: [user(KUBELET_CLIENT_USER)] },
  'system:controller:certificate-controller': {
    role: 'system:controller:certificate-controller',
    subjects: [controller('certificate-controller')],
  },
  // kubeadm's bindings for joining nodes (kubeadm init's bootstrap-token phase).
  'kubeadm:kubelet-bootstrap': {
    role: 'system:node-bootstrapper',
    subjects: [group('system:bootstrappers:kubeadm:default-node-token')],
  },
  'kubeadm:node-autoapprove-bootstrap': {
    role: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    subjects: [group('system:bootstrappers:kubeadm:default-node-token')],
  },
  'kubeadm:node-autoapprove-certificate-rotation': {
    role: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    subjects: [group('system:nodes')],
  },
  'kubeadm:get-nodes': {
    role: 'kubeadm:get-nodes',
    subjects: [group('system:bootstrappers:kubeadm:default-node-token')],
  },
  // tskube's own: a joined node's kube-proxy is a host process with the node's credentials (kubeadm runs it as a
  // DaemonSet with the kube-proxy ServiceAccount instead). `tskube token create` adds it to other control planes.
  'tskube:node-proxier': { role: 'system:node-proxier', subjects: [group('system:nodes')] },
};

/** Creates the default roles and bindings that are missing (upstream's RBAC bootstrap). */
export function ensureBootstrapPolicy(api: Api): void {
  const roles = api.res('rbac.authorization.k8s.io', 'clusterroles');
  const bindings = api.res('rbac.authorization.k8s.io', 'clusterrolebindings');
  const labels = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
  const annotations = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
  // Aggregated roles start with their rules already gathered (view, then edit, then admin), so they work
  // before the aggregation controller runs and where it is turned off.
  const objs = Object.entries(BOOTSTRAP_CLUSTER_ROLES).map(([name, rules]) => {
    const agg = AGGREGATION[name];
    const aggregationRule = agg?.aggregateFrom
      ? { clusterRoleSelectors: [{ matchLabels: { [`${AGG}${agg.aggregateFrom}`]: 'true' } }] }
      : undefined;
    return {
      metadata: { name, labels: { ...labels, ...agg?.labels }, annotations },
      ...(aggregationRule ? { aggregationRule } : {}),
      rules: [...rules],
    };
  });
  for (const name of ['view', 'edit', 'admin']) {
    const role = objs.find((o) => o.metadata.name === name)!;
    role.rules = aggregatedRules(role, objs) as PolicyRule[];
  }
  api.runAs(SYSTEM_USER, () => {
    for (const o of objs) if (!api.store.get(storageKey(roles, '', o.metadata.name))) api.create(roles, '', o);
    for (const [name, b] of Object.entries(BOOTSTRAP_BINDINGS)) {
      if (!api.store.get(storageKey(bindings, '', name))) {
        api.create(bindings, '', {
          metadata: { name, labels, annotations },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: b.role },
          subjects: b.subjects,
        });
      }
    }
  });
}
