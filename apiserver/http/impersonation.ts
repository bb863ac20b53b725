// User impersonation (Impersonate-User, -Uid, -Group, -Extra-<key>; kubectl
// --as/--as-group/--as-uid), as kube-apiserver's WithImpersonation filter:
// every identity asked for needs the `impersonate` verb on users,
// serviceaccounts, groups, uids or userextras/<key>; then the request runs
// as that identity.
import type { IncomingMessage } from 'node:http';

import type { User } from '../api/admission.js';
import { errors } from '../api/errors.js';
import type { AuthorizerChain } from '../authz/authorizer.js';

interface Check {
  resource: string;
  apiGroup: string;
  namespace: string;
  name: string;
  subresource: string;
}

const values = (req: IncomingMessage, name: string): string[] =>
  (req.headersDistinct[name] ?? []).map((v) => v.trim()).filter((v) => v !== '');

/** The user a request acts as: `user` itself without impersonation headers; throws 400/403 as upstream. */
export function impersonatedUser(req: IncomingMessage, user: User, authz: AuthorizerChain, alwaysAllow: boolean): User {
  const names = values(req, 'impersonate-user');
  const uids = values(req, 'impersonate-uid');
  const groups = values(req, 'impersonate-group');
  const extra: Record<string, string[]> = {};
  for (const h of Object.keys(req.headersDistinct)) {
    if (!h.startsWith('impersonate-extra-')) continue;
    extra[decodeURIComponent(h.slice('impersonate-extra-'.length)).toLowerCase()] = values(req, h);
  }
  if (!names.length && !uids.length && !groups.length && !Object.keys(extra).length) return user;
  if (names.length > 1 || uids.length > 1)
    throw errors.badRequest('only one Impersonate-User and one Impersonate-Uid header may be given');
  const name = names[0];
  if (name === undefined)
    throw errors.badRequest(
      `requested ${[...groups.map((g) => `Group ${g}`), ...uids.map((u) => `UID ${u}`), ...Object.keys(extra).map((k) => `Extra ${k}`)].join(', ')} without impersonating a user`,
    );
  const checks: Check[] = [];
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(name);
  if (sa) checks.push({ resource: 'serviceaccounts', apiGroup: '', namespace: sa[1]!, name: sa[2]!, subresource: '' });
  else checks.push({ resource: 'users', apiGroup: '', namespace: '', name, subresource: '' });
  for (const g of groups) checks.push({ resource: 'groups', apiGroup: '', namespace: '', name: g, subresource: '' });
  for (const u of uids)
    checks.push({ resource: 'uids', apiGroup: 'authentication.k8s.io', namespace: '', name: u, subresource: '' });
  for (const [k, vs] of Object.entries(extra))
    for (const v of vs)
      checks.push({
        resource: 'userextras',
        apiGroup: 'authentication.k8s.io',
        namespace: '',
        name: v,
        subresource: k,
      });
  // AlwaysAllow lets every authenticated user impersonate, never the anonymous one.
  if (!alwaysAllow || user.name === 'system:anonymous') {
    for (const c of checks) {
      const d = alwaysAllow
        ? { allowed: false, reason: '' }
        : authz.authorize({
            user,
            verb: 'impersonate',
            resourceRequest: true,
            apiGroup: c.apiGroup,
            resource: c.resource,
            subresource: c.subresource,
            namespace: c.namespace,
            name: c.name,
            path: '',
          });
      if (!d.allowed)
        throw errors.forbidden(
          user.name,
          'impersonate',
          c.subresource ? `${c.resource}/${c.subresource}` : c.resource,
          c.apiGroup,
          c.namespace || undefined,
          c.name,
          d.reason,
        );
    }
  }
  const out = [...groups];
  if (sa && !groups.length) out.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]!}`);
  const everyone = name === 'system:anonymous' ? 'system:unauthenticated' : 'system:authenticated';
  if (!out.includes(everyone)) out.push(everyone);
  return { name, groups: out, ...(uids[0] ? { uid: uids[0] } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}
