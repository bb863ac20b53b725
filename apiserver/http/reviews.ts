// TokenReview, SubjectAccessReview, SelfSubjectAccessReview, SelfSubjectReview
// and SelfSubjectRulesReview: create-only objects that are answered at once
// and never stored. The first two are what a kubelet's webhook authenticator
// and authorizer call; the others are `kubectl auth can-i|whoami`.
import type { User } from '../api/admission.js';
import { errors } from '../api/errors.js';
import type { AuthorizerChain, AuthzAttributes, PolicyRule } from '../authz/authorizer.js';
import type { ResourceDef } from '../resources.js';
import { apiVersionOf } from '../resources.js';
import type { Obj } from '../storage/store.js';
import type { Authenticator } from './authn.js';

function attributesOf(spec: Obj, user: User): AuthzAttributes {
  const ra = spec.resourceAttributes as Obj | undefined;
  const na = spec.nonResourceAttributes as Obj | undefined;
  if (ra)
    return {
      user,
      verb: ra.verb ?? '',
      resourceRequest: true,
      apiGroup: ra.group ?? '',
      resource: ra.resource ?? '',
      subresource: ra.subresource ?? '',
      namespace: ra.namespace ?? '',
      name: ra.name ?? '',
      path: '',
    };
  if (na)
    return {
      user,
      verb: na.verb ?? '',
      resourceRequest: false,
      apiGroup: '',
      resource: '',
      subresource: '',
      namespace: '',
      name: '',
      path: na.path ?? '',
    };
  throw errors.invalid('SubjectAccessReview', 'authorization.k8s.io', '', [
    {
      field: 'spec.resourceAttributes',
      message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    },
  ]);
}

/** The rules a user holds in a namespace (SelfSubjectRulesReview), and whether that list may be incomplete. */
export type RulesResolver = (user: User, namespace: string) => { rules: PolicyRule[]; incomplete: boolean };

export async function review(
  r: ResourceDef,
  body: Obj,
  requester: User,
  authn: Authenticator,
  authz: AuthorizerChain,
  rulesFor?: RulesResolver,
): Promise<Obj> {
  const spec = (body?.spec ?? {}) as Obj;
  const base = {
    apiVersion: apiVersionOf(r),
    kind: r.kind,
    metadata: { ...(body?.metadata ?? {}), creationTimestamp: null },
    spec,
  };
  if (r.resource === 'selfsubjectreviews') {
    // `kubectl auth whoami`: who the request was authenticated (or impersonated) as.
    const u = requester;
    return {
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      metadata: { creationTimestamp: null },
      status: {
        userInfo: {
          username: u.name,
          ...(u.uid ? { uid: u.uid } : {}),
          groups: u.groups,
          ...(u.extra ? { extra: u.extra } : {}),
        },
      },
    };
  }
  if (r.resource === 'selfsubjectrulesreviews') {
    // `kubectl auth can-i --list`: the rules the requester holds in spec.namespace.
    const { rules, incomplete } = rulesFor?.(requester, String(spec.namespace ?? '')) ?? {
      rules: [],
      incomplete: true,
    };
    const resourceRules = rules
      .filter((x) => !x.nonResourceURLs?.length)
      .map((x) => ({
        verbs: x.verbs,
        ...(x.apiGroups ? { apiGroups: x.apiGroups } : {}),
        ...(x.resources ? { resources: x.resources } : {}),
        ...(x.resourceNames?.length ? { resourceNames: x.resourceNames } : {}),
      }));
    const nonResourceRules = rules
      .filter((x) => x.nonResourceURLs?.length)
      .map((x) => ({ verbs: x.verbs, nonResourceURLs: x.nonResourceURLs }));
    return { ...base, status: { resourceRules, nonResourceRules, incomplete } };
  }
  if (r.resource === 'tokenreviews') {
    const r =
      typeof spec.token === 'string'
        ? await authn.token(spec.token, spec.audiences as string[] | undefined)
        : undefined;
    if (!r) return { ...base, status: { authenticated: false, user: {}, error: 'invalid bearer token' } };
    const u = r.user;
    return {
      ...base,
      status: {
        authenticated: true,
        user: {
          username: u.name,
          ...(u.uid ? { uid: u.uid } : {}),
          groups: u.groups,
          ...(u.extra ? { extra: u.extra } : {}),
        },
        audiences: r.audiences,
      },
    };
  }
  const subject: User =
    r.resource === 'selfsubjectaccessreviews'
      ? requester
      : { name: spec.user ?? '', groups: (spec.groups ?? []) as string[] };
  const d = authz.authorize(attributesOf(spec, subject));
  return { ...base, status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) } };
}
