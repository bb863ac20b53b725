// Discovery documents (/api, /apis, /api/v1, /apis/<g>/<v>) and /version.
import { KUBERNETES_VERSION, majorMinor, TSKUBE_VERSION } from '../../kube/version.js';
import { type ResourceDef, type Subresource, verbsOf } from '../resources.js';

const { major, minor } = majorMinor(KUBERNETES_VERSION);

/** /version, as kube-apiserver's: the binary's version, the version it emulates, and the oldest it is compatible with. */
export const SERVER_VERSION = {
  major: String(major),
  minor: String(minor),
  emulationMajor: String(major),
  emulationMinor: String(minor),
  minCompatibilityMajor: String(major),
  minCompatibilityMinor: String(minor - 1),
  gitVersion: TSKUBE_VERSION,
  gitCommit: '',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'node',
  compiler: 'tsc',
  platform: 'linux/amd64',
};

const groups = (all: ResourceDef[]): string[] => [...new Set(all.filter((r) => r.group).map((r) => r.group))];

/** A group's versions, preferred first: a custom group's by upstream's version priority. */
function versionsOf(all: ResourceDef[], group: string): { groupVersion: string; version: string }[] {
  const rs = all.filter((r) => r.group === group);
  const vs = [...new Map(rs.map((r) => [r.version, r.custom?.priority ?? 0])).entries()]
    .sort((a, b) => a[1] - b[1])
    .map(([v]) => v);
  return vs.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
}

export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export function apiGroupList(all: ResourceDef[]): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups(all).map((g) => {
      const versions = versionsOf(all, g);
      return { name: g, versions, preferredVersion: versions[0] };
    }),
  };
}

export function apiGroup(all: ResourceDef[], group: string): object | undefined {
  const versions = versionsOf(all, group);
  if (!versions.length) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions, preferredVersion: versions[0] };
}

export function apiResourceList(all: ResourceDef[], group: string, version: string): object | undefined {
  const rs = all.filter((r) => r.group === group && r.version === version);
  if (!rs.length) return undefined;
  const resources: object[] = [];
  for (const r of rs) {
    resources.push({
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: verbsOf(r),
      ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
      ...(r.categories ? { categories: r.categories } : {}),
    });
    for (const sub of r.subresources) resources.push(subresource(r, sub));
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

const SUBRESOURCE_KINDS: Record<string, { kind: string; verbs: string[]; group?: string; version?: string }> = {
  binding: { kind: 'Binding', verbs: ['create'] },
  eviction: { kind: 'Eviction', verbs: ['create'], group: 'policy', version: 'v1' },
  finalize: { kind: 'Namespace', verbs: ['update'] },
  scale: { kind: 'Scale', verbs: ['get', 'patch', 'update'], group: 'autoscaling', version: 'v1' },
  token: { kind: 'TokenRequest', verbs: ['create'], group: 'authentication.k8s.io', version: 'v1' },
  log: { kind: 'Pod', verbs: ['get'] },
  exec: { kind: 'PodExecOptions', verbs: ['create', 'get'] },
  attach: { kind: 'PodAttachOptions', verbs: ['create', 'get'] },
  portforward: { kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
};

/** The kind a subresource's requests carry: its own (Scale, PodAttachOptions, …) or else the resource's. */
export function subresourceKind(r: ResourceDef, sub: string): { group: string; version: string; kind: string } {
  const k = SUBRESOURCE_KINDS[sub];
  if (!k) return { group: r.group, version: r.version, kind: r.kind };
  return { group: k.group ?? r.group, version: k.version ?? r.version, kind: k.kind };
}

function subresource(r: ResourceDef, sub: Subresource): object {
  const k = SUBRESOURCE_KINDS[sub];
  if (k)
    return {
      name: `${r.resource}/${sub}`,
      singularName: '',
      namespaced: r.namespaced,
      ...(k.group ? { group: k.group, version: k.version } : {}),
      kind: k.kind,
      verbs: k.verbs,
    };
  // status, approval, ephemeralcontainers, resize: the object itself, read and written.
  return {
    name: `${r.resource}/${sub}`,
    singularName: '',
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: ['get', 'patch', 'update'],
  };
}

/** The media type of aggregated discovery (apidiscovery.k8s.io/v2), asked for with Accept and answered with. */
export const AGGREGATED_DISCOVERY = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Whether an Accept header lists aggregated discovery v2 (parameters in any order, as Go's mime parser reads them). */
export function acceptsAggregated(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim());
    if (type !== 'application/json') return false;
    const p = new Map(params.map((x) => x.split('=').map((y) => y.trim()) as [string, string]));
    return p.get('g') === 'apidiscovery.k8s.io' && p.get('v') === 'v2' && p.get('as') === 'APIGroupDiscoveryList';
  });
}

function resourceDiscovery(r: ResourceDef): object {
  const subresources = r.subresources.map((sub) => {
    const k = SUBRESOURCE_KINDS[sub];
    return {
      subresource: sub,
      responseKind: { group: k?.group ?? '', version: k?.version ?? '', kind: k?.kind ?? r.kind },
      verbs: k?.verbs ?? ['get', 'patch', 'update'],
    };
  });
  return {
    resource: r.resource,
    responseKind: { group: '', version: '', kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: verbsOf(r),
    ...(r.shortNames.length ? { shortNames: r.shortNames } : {}),
    ...(r.categories ? { categories: r.categories } : {}),
    ...(subresources.length ? { subresources } : {}),
  };
}

/**
 * Aggregated discovery: every group (the core group for /api, the others for /apis) with its versions, preferred
 * first, and their resources in one document.
 */
export function aggregatedDiscovery(all: ResourceDef[], legacy: boolean): object {
  const names = legacy ? [''] : groups(all);
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: names.map((g) => ({
      metadata: { ...(g ? { name: g } : {}), creationTimestamp: null },
      versions: (g ? versionsOf(all, g).map((v) => v.version) : ['v1']).map((version) => ({
        version,
        resources: all.filter((r) => r.group === g && r.version === version).map(resourceDiscovery),
        freshness: 'Current',
      })),
    })),
  };
}
