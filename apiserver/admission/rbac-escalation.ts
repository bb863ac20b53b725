// Upstream's RBAC registry checks, as an admission step: writing a Role or
// ClusterRole needs every permission in it (or `escalate` on it), writing a
// binding needs the referenced role's permissions (or `bind` on it), and an
// aggregated ClusterRole needs full authority. system:masters is exempt.
import type { AdmissionPlugin, Attributes } from '../api/admission.js';
import { errors } from '../api/errors.js';
import type { AuthorizerChain, PolicyRule } from '../authz/authorizer.js';
import { escalationError, FULL_AUTHORITY } from '../authz/escalation.js';
import type { RbacAuthorizer } from '../authz/rbac.js';

const RBAC = 'rbac.authorization.k8s.io';
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export function rbacEscalation(resolver: RbacAuthorizer, authz: AuthorizerChain): AdmissionPlugin {
  const allowed = (a: Attributes, verb: string, resource: string, namespace: string, name: string): boolean =>
    authz.authorize({
      user: a.user,
      verb,
      resourceRequest: true,
      apiGroup: RBAC,
      resource,
      subresource: '',
      namespace,
      name,
      path: '',
    }).allowed;
  const confirm = (a: Attributes, rules: PolicyRule[]): void => {
    const why = escalationError(a.user, resolver.rulesFor(a.user, a.namespace), rules);
    if (why) throw errors.forbiddenObject(a.resource.resource, RBAC, a.name, why);
  };
  return {
    name: 'RBACEscalation',
    admit(a): void {
      if (a.resource.group !== RBAC || a.subresource !== '' || (a.operation !== 'CREATE' && a.operation !== 'UPDATE'))
        return;
      if (a.user.groups.includes('system:masters')) return;
      const o = a.object!;
      const old = a.oldObject;
      if (a.resource.resource === 'roles' || a.resource.resource === 'clusterroles') {
        // Only changes to what the role grants are checked (upstream lets GC-only updates through).
        if (old && same(o.rules, old.rules) && same(o.aggregationRule, old.aggregationRule)) return;
        if (allowed(a, 'escalate', a.resource.resource, a.namespace, a.name)) return;
        if (o.aggregationRule && !same(o.aggregationRule, old?.aggregationRule)) confirm(a, FULL_AUTHORITY);
        confirm(a, (o.rules ?? []) as PolicyRule[]);
        return;
      }
      if (a.resource.resource !== 'rolebindings' && a.resource.resource !== 'clusterrolebindings') return;
      const ref = o.roleRef ?? {};
      const ns = a.resource.resource === 'rolebindings' ? a.namespace : '';
      if (allowed(a, 'bind', ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles', ns, String(ref.name ?? ''))) return;
      const rules = resolver.roleRules(ref, ns);
      if (!rules)
        throw errors.notFound(ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles', RBAC, String(ref.name ?? ''));
      confirm(a, rules);
    },
  };
}
