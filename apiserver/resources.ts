// The resources this apiserver serves, with what discovery, storage,
// selectors and table printing need to know about each.
export interface ResourceDef {
  group: string; // '' for core
  version: string;
  resource: string; // plural
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories?: string[];
  subresources: Subresource[];
  /** Review objects (TokenReview, SubjectAccessReview): create-only, answered and never stored. */
  review?: boolean;
  /** Field selector fields beyond metadata.name/metadata.namespace. */
  fields: string[];
  /** A custom resource: what its CustomResourceDefinition says of this version. */
  custom?: CustomVersion;
}

/** One served version of a CustomResourceDefinition, as the apiserver needs it. */
export interface CustomVersion {
  /** The CustomResourceDefinition's name (<plural>.<group>). */
  crd: string;
  storageVersion: string;
  /** The kind's structural schema (apiVersion, kind and metadata added), in this apiserver's Schema form. */
  schema: import('./openapi/schema.js').Schema;
  /** The version's openAPIV3Schema as the definition gives it (validation and defaulting read it). */
  openAPIV3Schema: Record<string, unknown>;
  /** The definition name it is published under in /openapi (com.example.stable.v1.CronTab). */
  definition: string;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  columns: { name: string; type: string; format?: string; description?: string; priority?: number; jsonPath: string }[];
  /** kube-aware version order within the group (discovery's preferred version first). */
  priority: number;
  /** The CRD is being deleted: no new objects (405, as upstream). */
  terminating: boolean;
}

/** status, binding and scale are stored; token is issued; the others connect to the kubelet (log is a GET stream, the rest upgrade). */
export type Subresource =
  | 'status'
  | 'approval'
  | 'ephemeralcontainers'
  | 'resize'
  | 'finalize'
  | 'eviction'
  | 'binding'
  | 'scale'
  | 'token'
  | 'log'
  | 'exec'
  | 'attach'
  | 'portforward'
  | 'proxy';
export const CONNECT_SUBRESOURCES = new Set<string>(['exec', 'attach', 'portforward']);

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const verbsOf = (r: ResourceDef): string[] => (r.review ? ['create'] : ALL_VERBS);

function def(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  shortNames: string[] = [],
  extra: Partial<ResourceDef> = {},
): ResourceDef {
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames,
    subresources: [],
    fields: [],
    ...extra,
  };
}

export const RESOURCES: ResourceDef[] = [
  def('', 'v1', 'namespaces', 'Namespace', false, ['ns'], {
    subresources: ['status', 'finalize'],
    fields: ['status.phase'],
  }),
  def('', 'v1', 'replicationcontrollers', 'ReplicationController', true, ['rc'], {
    categories: ['all'],
    subresources: ['status', 'scale'],
  }),
  def('', 'v1', 'pods', 'Pod', true, ['po'], {
    categories: ['all'],
    subresources: [
      'status',
      'ephemeralcontainers',
      'resize',
      'eviction',
      'binding',
      'log',
      'exec',
      'attach',
      'portforward',
      'proxy',
    ],
    fields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
  }),
  def('', 'v1', 'nodes', 'Node', false, ['no'], { subresources: ['status', 'proxy'], fields: ['spec.unschedulable'] }),
  def('', 'v1', 'services', 'Service', true, ['svc'], {
    categories: ['all'],
    subresources: ['status', 'proxy'],
    fields: ['spec.clusterIP', 'spec.type'],
  }),
  def('', 'v1', 'endpoints', 'Endpoints', true, ['ep']),
  def('', 'v1', 'events', 'Event', true, ['ev'], {
    fields: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
  }),
  def('', 'v1', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc'], { subresources: ['status'] }),
  def('', 'v1', 'persistentvolumes', 'PersistentVolume', false, ['pv'], { subresources: ['status'] }),
  def('', 'v1', 'resourcequotas', 'ResourceQuota', true, ['quota'], { subresources: ['status'] }),
  def('', 'v1', 'limitranges', 'LimitRange', true, ['limits']),
  def('', 'v1', 'configmaps', 'ConfigMap', true, ['cm']),
  def('', 'v1', 'podtemplates', 'PodTemplate', true),
  def('', 'v1', 'secrets', 'Secret', true, [], { fields: ['type'] }),
  def('', 'v1', 'serviceaccounts', 'ServiceAccount', true, ['sa'], { subresources: ['token'] }),
  def('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', true),
  // Stored as core/v1 Events (see api/views.ts).
  def('events.k8s.io', 'v1', 'events', 'Event', true, ['ev'], {
    fields: [
      'regarding.kind',
      'regarding.namespace',
      'regarding.name',
      'regarding.uid',
      'regarding.apiVersion',
      'regarding.resourceVersion',
      'regarding.fieldPath',
      'reason',
      'reportingController',
      'type',
    ],
  }),
  def('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  def('apps', 'v1', 'deployments', 'Deployment', true, ['deploy'], {
    categories: ['all'],
    subresources: ['status', 'scale'],
  }),
  def('apps', 'v1', 'replicasets', 'ReplicaSet', true, ['rs'], {
    categories: ['all'],
    subresources: ['status', 'scale'],
    fields: ['status.replicas'],
  }),
  def('apps', 'v1', 'daemonsets', 'DaemonSet', true, ['ds'], { categories: ['all'], subresources: ['status'] }),
  def('apps', 'v1', 'statefulsets', 'StatefulSet', true, ['sts'], {
    categories: ['all'],
    subresources: ['status', 'scale'],
  }),
  def('apps', 'v1', 'controllerrevisions', 'ControllerRevision', true),
  def('batch', 'v1', 'jobs', 'Job', true, [], {
    categories: ['all'],
    subresources: ['status'],
    fields: ['status.successful'],
  }),
  def('batch', 'v1', 'cronjobs', 'CronJob', true, ['cj'], { categories: ['all'], subresources: ['status'] }),
  def('policy', 'v1', 'poddisruptionbudgets', 'PodDisruptionBudget', true, ['pdb'], { subresources: ['status'] }),
  def('networking.k8s.io', 'v1', 'ingresses', 'Ingress', true, ['ing'], { subresources: ['status'] }),
  def('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', false),
  def('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', true, ['netpol']),
  def('networking.k8s.io', 'v1', 'ipaddresses', 'IPAddress', false, ['ip']),
  def('networking.k8s.io', 'v1', 'servicecidrs', 'ServiceCIDR', false, [], { subresources: ['status'] }),
  def('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', false, ['pc']),
  def('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', false, [], { subresources: ['status'] }),
  def('flowcontrol.apiserver.k8s.io', 'v1', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, [], {
    subresources: ['status'],
  }),
  def('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false, ['sc']),
  def('storage.k8s.io', 'v1', 'csidrivers', 'CSIDriver', false),
  def('storage.k8s.io', 'v1', 'csinodes', 'CSINode', false),
  def('storage.k8s.io', 'v1', 'csistoragecapacities', 'CSIStorageCapacity', true),
  def('storage.k8s.io', 'v1', 'volumeattributesclasses', 'VolumeAttributesClass', false, ['vac']),
  def('storage.k8s.io', 'v1', 'volumeattachments', 'VolumeAttachment', false, [], { subresources: ['status'] }),
  def('resource.k8s.io', 'v1', 'deviceclasses', 'DeviceClass', false),
  def('resource.k8s.io', 'v1', 'devicetaintrules', 'DeviceTaintRule', false, [], { subresources: ['status'] }),
  def('resource.k8s.io', 'v1', 'resourceclaims', 'ResourceClaim', true, [], { subresources: ['status'] }),
  def('resource.k8s.io', 'v1', 'resourceclaimtemplates', 'ResourceClaimTemplate', true),
  def('resource.k8s.io', 'v1', 'resourceslices', 'ResourceSlice', false, [], {
    fields: ['spec.nodeName', 'spec.driver'],
  }),
  def('node.k8s.io', 'v1', 'runtimeclasses', 'RuntimeClass', false),
  def('certificates.k8s.io', 'v1', 'certificatesigningrequests', 'CertificateSigningRequest', false, ['csr'], {
    subresources: ['status', 'approval'],
    fields: ['spec.signerName'],
  }),
  def('certificates.k8s.io', 'v1', 'clustertrustbundles', 'ClusterTrustBundle', false, [], {
    fields: ['spec.signerName'],
  }),
  def('certificates.k8s.io', 'v1', 'podcertificaterequests', 'PodCertificateRequest', true, [], {
    subresources: ['status'],
    fields: ['spec.signerName', 'spec.podName', 'spec.nodeName'],
  }),
  def(
    'admissionregistration.k8s.io',
    'v1',
    'mutatingwebhookconfigurations',
    'MutatingWebhookConfiguration',
    false,
    [],
    {
      categories: ['api-extensions'],
    },
  ),
  def(
    'admissionregistration.k8s.io',
    'v1',
    'validatingwebhookconfigurations',
    'ValidatingWebhookConfiguration',
    false,
    [],
    {
      categories: ['api-extensions'],
    },
  ),
  def('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds'], {
    categories: ['api-extensions'],
    subresources: ['status'],
  }),
  def('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  def('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  def('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  def('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  def('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', false, [], { review: true }),
  def('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false, [], { review: true }),
  def('authorization.k8s.io', 'v1', 'localsubjectaccessreviews', 'LocalSubjectAccessReview', true, [], {
    review: true,
  }),
  def('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, [], { review: true }),
  def('authorization.k8s.io', 'v1', 'selfsubjectrulesreviews', 'SelfSubjectRulesReview', false, [], { review: true }),
  def('authentication.k8s.io', 'v1', 'selfsubjectreviews', 'SelfSubjectReview', false, [], { review: true }),
];

export const apiVersionOf = (r: ResourceDef): string => (r.group ? `${r.group}/${r.version}` : r.version);

export function findResource(group: string, version: string, resource: string): ResourceDef | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);
}

export function findByKind(apiVersion: string, kind: string): ResourceDef | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}

/**
 * What one apiserver serves: the built-in resources and, added and removed as
 * their CustomResourceDefinitions come and go, the custom ones. `generation`
 * moves with every change, so what is built from the list (OpenAPI documents) knows when to rebuild.
 */
export class Registry {
  private readonly custom = new Map<string, ResourceDef[]>();
  private current: ResourceDef[] = RESOURCES;
  generation = 0;

  all(): ResourceDef[] {
    return this.current;
  }

  find(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.current.find((r) => r.group === group && r.version === version && r.resource === resource);
  }

  findByKind(apiVersion: string, kind: string): ResourceDef | undefined {
    return this.current.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
  }

  /** The resource as stored: a built-in, or a custom resource's storage version. */
  stored(group: string, resource: string): ResourceDef | undefined {
    return this.current.find(
      (r) => r.group === group && r.resource === resource && (!r.custom || r.custom.storageVersion === r.version),
    );
  }

  /** Serves (or stops serving, with []) the versions of one CustomResourceDefinition. */
  setCustom(crd: string, defs: ResourceDef[]): void {
    if (defs.length) this.custom.set(crd, defs);
    else if (!this.custom.delete(crd)) return;
    this.current = [...RESOURCES, ...[...this.custom.values()].flat()];
    this.generation++;
  }

  customs(): ResourceDef[] {
    return [...this.custom.values()].flat();
  }
}

export function storageKey(r: ResourceDef, namespace: string, name: string): string {
  return `${r.group}/${r.resource}/${r.namespaced ? namespace : ''}/${name}`;
}

export function storagePrefix(r: ResourceDef, namespace?: string): string {
  return namespace && r.namespaced ? `${r.group}/${r.resource}/${namespace}/` : `${r.group}/${r.resource}/`;
}
