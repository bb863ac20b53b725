// TokenReview, SubjectAccessReview and SelfSubjectAccessReview: create-only
// objects that are answered at once and never stored. They are what a
// kubelet's webhook authenticator and authorizer call.
import type { User } from '../api/admission.js';
import type { ResourceDef } from '../resources.js';
import { apiVersionOf } from '../resources.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';
import type { Authenticator } from './authn.js';
import type { AuthorizerChain, AuthzAttributes } from '../authz/authorizer.js';

function attributesOf(spec: Obj, user: User): AuthzAttributes {
  const ra = spec.resourceAttributes as Obj | undefined;
  const na = spec.nonResourceAttributes as Obj | undefined;
  if (ra) return { user, verb: ra.verb ?? '', resourceRequest: true, apiGroup: ra.group ?? '', resource: ra.resource ?? '', subresource: ra.subresource ?? '', namespace: ra.namespace ?? '', name: ra.name ?? '', path: '' };
  if (na) return { user, verb: na.verb ?? '', resourceRequest: false, apiGroup: '', resource: '', subresource: '', namespace: '', name: '', path: na.path ?? '' };
  throw errors.invalid('SubjectAccessReview', 'authorization.k8s.io', '', [{ field: 'spec.resourceAttributes', message: 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified' }]);
}

export async function review(r: ResourceDef, body: Obj, requester: User, authn: Authenticator, authz: AuthorizerChain): Promise<Obj> {
  const spec = (body?.spec ?? {}) as Obj;
  const base = { apiVersion: apiVersionOf(r), kind: r.kind, metadata: { ...(body?.metadata ?? {}), creationTimestamp: null }, spec };
  if (r.resource === 'tokenreviews') {
    const r = typeof spec.token === 'string' ? await authn.token(spec.token, spec.audiences as string[] | undefined) : undefined;
    if (!r) return { ...base, status: { authenticated: false, user: {}, error: 'invalid bearer token' } };
    const u = r.user;
    return { ...base, status: { authenticated: true, user: { username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra ? { extra: u.extra } : {}) }, audiences: r.audiences } };
  }
  const subject: User = r.resource === 'selfsubjectaccessreviews' ? requester : { name: spec.user ?? '', groups: (spec.groups ?? []) as string[] };
  const d = authz.authorize(attributesOf(spec, subject));
  return { ...base, status: { allowed: d.allowed, ...(d.reason ? { reason: d.reason } : {}) } };
}
