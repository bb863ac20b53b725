// Discovery documents (/api, /apis, /api/v1, /apis/<g>/<v>) and /version.
import { RESOURCES, verbsOf, type ResourceDef, type Subresource } from '../resources.js';

export const SERVER_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-tskube', gitCommit: '', gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z', goVersion: 'node', compiler: 'tsc', platform: 'linux/amd64' };

const groups = (): string[] => [...new Set(RESOURCES.filter((r) => r.group).map((r) => r.group))];

export function apiVersions(serverAddress: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

export function apiGroupList(): object {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups().map((g) => {
      const v = RESOURCES.find((r) => r.group === g)!.version;
      return { name: g, versions: [{ groupVersion: `${g}/${v}`, version: v }], preferredVersion: { groupVersion: `${g}/${v}`, version: v } };
    }),
  };
}

export function apiGroup(group: string): object | undefined {
  const r = RESOURCES.find((x) => x.group === group);
  if (!r) return undefined;
  const gv = { groupVersion: `${group}/${r.version}`, version: r.version };
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [gv], preferredVersion: gv };
}

export function apiResourceList(group: string, version: string): object | undefined {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (!rs.length) return undefined;
  const resources: object[] = [];
  for (const r of rs) {
    resources.push({ name: r.resource, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: verbsOf(r), ...(r.shortNames.length ? { shortNames: r.shortNames } : {}), ...(r.categories ? { categories: r.categories } : {}) });
    for (const sub of r.subresources) resources.push(subresource(r, sub));
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
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

function subresource(r: ResourceDef, sub: Subresource): object {
  const k = SUBRESOURCE_KINDS[sub];
  if (k) return { name: `${r.resource}/${sub}`, singularName: '', namespaced: r.namespaced, ...(k.group ? { group: k.group, version: k.version } : {}), kind: k.kind, verbs: k.verbs };
  // status, approval, ephemeralcontainers, resize: the object itself, read and written.
  return { name: `${r.resource}/${sub}`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: ['get', 'patch', 'update'] };
}
