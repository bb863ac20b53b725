// The RBAC authorizer: ClusterRoleBindings, and RoleBindings of the request's
// namespace, whose subjects match the user (by name, group, or as a
// ServiceAccount), grant the rules of the role they reference. Bindings and
// roles are indexed from the store and kept current by a store watch, so a
// request costs a walk over bindings, not over all objects.
import type { Obj, Store } from '../storage/store.js';
import { type Authorizer, type AuthzAttributes, type PolicyRule, ruleAllows } from './authorizer.js';

const PREFIX = 'rbac.authorization.k8s.io/';

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  private readonly objects = new Map<string, Obj>();

  constructor(store: Store) {
    for (const o of store.list(PREFIX).items) this.objects.set(this.key(o), o);
    store.watch(PREFIX, 0, (e) => {
      if (e.type === 'DELETED') this.objects.delete(this.key(e.object));
      else this.objects.set(this.key(e.object), e.object);
    });
  }

  private key(o: Obj): string {
    return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  }

  private rulesOf(ref: Obj, namespace: string): PolicyRule[] {
    return this.roleRules(ref, namespace) ?? [];
  }

  private applies(subjects: Obj[] | undefined, a: AuthzAttributes, bindingNs: string): boolean {
    return (subjects ?? []).some((s) => {
      if (s.kind === 'User') return s.name === a.user.name;
      if (s.kind === 'Group') return a.user.groups.includes(s.name);
      if (s.kind === 'ServiceAccount')
        return a.user.name === `system:serviceaccount:${s.namespace || bindingNs}:${s.name}`;
      return false;
    });
  }

  /** Every rule the user holds in `namespace` (cluster-wide bindings, plus RoleBindings there): the RuleResolver's RulesFor. */
  rulesFor(user: AuthzAttributes['user'], namespace: string): PolicyRule[] {
    const a = { user } as AuthzAttributes;
    const out: PolicyRule[] = [];
    for (const b of this.objects.values()) {
      if (b.kind === 'ClusterRoleBinding' && this.applies(b.subjects, a, '')) out.push(...this.rulesOf(b.roleRef, ''));
      else if (
        b.kind === 'RoleBinding' &&
        namespace &&
        b.metadata.namespace === namespace &&
        this.applies(b.subjects, a, namespace)
      )
        out.push(...this.rulesOf(b.roleRef, namespace));
    }
    return out;
  }

  /** The rules a roleRef points at, or undefined when the role does not exist. */
  roleRules(ref: Obj, namespace: string): PolicyRule[] | undefined {
    const o =
      ref?.kind === 'ClusterRole'
        ? this.objects.get(`ClusterRole//${ref.name}`)
        : this.objects.get(`Role/${namespace}/${ref?.name}`);
    return o ? ((o.rules ?? []) as PolicyRule[]) : undefined;
  }

  authorize(a: AuthzAttributes): { decision: 'allow' | 'noopinion'; reason: string } {
    for (const b of this.objects.values()) {
      if (b.kind === 'ClusterRoleBinding') {
        if (!this.applies(b.subjects, a, '')) continue;
        if (this.rulesOf(b.roleRef, '').some((r) => ruleAllows(a, r)))
          return {
            decision: 'allow',
            reason: `RBAC: allowed by ClusterRoleBinding "${b.metadata.name}" of ClusterRole "${b.roleRef.name}" to ${describe(a.user)}`,
          };
      } else if (b.kind === 'RoleBinding' && a.namespace && b.metadata.namespace === a.namespace) {
        if (!this.applies(b.subjects, a, b.metadata.namespace)) continue;
        if (this.rulesOf(b.roleRef, b.metadata.namespace).some((r) => ruleAllows(a, r)))
          return {
            decision: 'allow',
            reason: `RBAC: allowed by RoleBinding "${b.metadata.name}/${b.metadata.namespace}" of ${b.roleRef.kind} "${b.roleRef.name}" to ${describe(a.user)}`,
          };
      }
    }
    return { decision: 'noopinion', reason: '' };
  }
}

const describe = (u: { name: string; groups: string[] }): string =>
  u.name.startsWith('system:serviceaccount:')
    ? `ServiceAccount "${u.name.split(':')[3]}/${u.name.split(':')[2]}"`
    : `User "${u.name}"`;
