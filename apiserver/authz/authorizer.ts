// Authorization, as kube-apiserver's --authorization-mode: a chain of
// authorizers (AlwaysAllow, Node, RBAC) asked in order; the first that allows
// wins, and a request nobody allows is denied. The same chain answers
// SubjectAccessReviews, so a kubelet's webhook authorizer gets our decisions.
import type { User } from '../api/admission.js';

/** authorizer.Attributes: a resource request, or a request for a path (nonResourceURL). */
export interface AuthzAttributes {
  user: User;
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** For non-resource requests. */
  path: string;
  /** A list or watch's field selector (the Node authorizer narrows what nodes may list by it). */
  fieldSelector?: string;
}

export type Decision = 'allow' | 'deny' | 'noopinion';

export interface Authorizer {
  readonly name: string;
  authorize(a: AuthzAttributes): { decision: Decision; reason: string };
}

export const alwaysAllow: Authorizer = { name: 'AlwaysAllow', authorize: () => ({ decision: 'allow', reason: '' }) };

export class AuthorizerChain {
  constructor(readonly authorizers: Authorizer[]) {}

  authorize(a: AuthzAttributes): { allowed: boolean; reason: string } {
    const reasons: string[] = [];
    for (const z of this.authorizers) {
      const d = z.authorize(a);
      if (d.decision === 'allow') return { allowed: true, reason: d.reason };
      if (d.reason) reasons.push(d.reason);
      if (d.decision === 'deny') break;
    }
    return { allowed: false, reason: reasons.join(', ') };
  }
}

/** The verb of an HTTP request (as the apiserver's RequestInfo): get/list/watch by name and query, create, update... */
export function requestVerb(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/** A rule of a Role or ClusterRole (rbacv1.PolicyRule). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const has = (list: string[] | undefined, v: string): boolean => !!list && (list.includes('*') || list.includes(v));

/** rbac's RuleAllows. */
export function ruleAllows(a: AuthzAttributes, r: PolicyRule): boolean {
  if (!has(r.verbs, a.verb)) return false;
  if (!a.resourceRequest)
    return (r.nonResourceURLs ?? []).some(
      (u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))),
    );
  if (!has(r.apiGroups, a.apiGroup)) return false;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resources = r.resources ?? [];
  const resOk =
    resources.includes('*') || resources.includes(res) || (!!a.subresource && resources.includes(`*/${a.subresource}`));
  if (!resOk) return false;
  return !r.resourceNames?.length || r.resourceNames.includes(a.name);
}
