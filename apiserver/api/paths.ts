// REST paths -> resource, namespace, name and subresource, shared by the
// HTTPS server and the in-process client the controllers use.
import type { Registry, ResourceDef } from '../resources.js';

export interface Route {
  r: ResourceDef;
  namespace?: string;
  name?: string;
  sub?: string;
  /** What follows the subresource (a proxy's path), still split. */
  tail?: string[];
}

/** segs: the path split on '/', decoded. */
export function parseResourcePath(segs: string[], registry: Pick<Registry, 'find'>): Route | undefined {
  const findResource = registry.find.bind(registry);
  // segs start after the group/version: [namespaces, ns, resource, name?, sub?] | [resource, name?, sub?]
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api' && segs[1] === 'v1') {
    group = '';
    version = 'v1';
    rest = segs.slice(2);
  } else if (segs[0] === 'apis' && segs.length >= 3) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return undefined;
  if (rest.length === 0) return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const r = findResource(group, version, rest[2]!);
    if (r && r.namespaced) return { r, namespace: rest[1], name: rest[3], sub: rest[4], tail: rest.slice(5) };
    if (group === '' && rest.length === 3) {
      const ns = findResource('', 'v1', 'namespaces')!;
      return { r: ns, name: rest[1], sub: rest[2] };
    }
    return undefined;
  }
  const r = findResource(group, version, rest[0]!);
  if (!r) return undefined;
  return { r, name: rest[1], sub: rest[2], tail: rest.slice(3) };
}
