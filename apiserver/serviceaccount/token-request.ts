// POST serviceaccounts/{name}/token (TokenRequest, what `kubectl create token`
// and kubelets send): validated and admitted like any write, then signed.
import { rfc3339 } from '../../kube/time.js';
import type { User } from '../api/admission.js';
import type { Api } from '../api/api.js';
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';
import type { ServiceAccountTokens, TokenClaims } from './tokens.js';

const MIN_SECONDS = 600;
const MAX_SECONDS = 2 ** 32;

/** Checks the request and works out the claims (synchronous: runs inside Api.runAs). */
export function tokenClaims(api: Api, tokens: ServiceAccountTokens, ns: string, name: string, body: Obj): TokenClaims {
  const spec = (body?.spec ?? {}) as Obj;
  const sa = api.get(api.res('', 'serviceaccounts'), ns, name);
  const exp = spec.expirationSeconds ?? 3600;
  if (!Number.isInteger(exp) || exp < MIN_SECONDS)
    throw errors.invalid('TokenRequest', 'authentication.k8s.io', name, [
      {
        field: 'spec.expirationSeconds',
        message: `Invalid value: ${JSON.stringify(exp)}: may not specify a duration less than 10 minutes`,
      },
    ]);
  if (exp > MAX_SECONDS)
    throw errors.invalid('TokenRequest', 'authentication.k8s.io', name, [
      {
        field: 'spec.expirationSeconds',
        message: `Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds`,
      },
    ]);
  const claims: TokenClaims = {
    namespace: ns,
    serviceAccount: { name, uid: sa.metadata.uid },
    audiences: (spec.audiences as string[] | undefined)?.length ? spec.audiences : tokens.apiAudiences,
    expirationSeconds: exp,
  };
  const ref = spec.boundObjectRef as Obj | undefined;
  if (ref) {
    if (ref.kind !== 'Pod' && ref.kind !== 'Node')
      throw errors.badRequest(`cannot bind token to object of type ${String(ref.kind)}`);
    const r = ref.kind === 'Pod' ? api.res('', 'pods') : api.res('', 'nodes');
    const obj = api.get(r, ref.kind === 'Pod' ? ns : '', String(ref.name ?? ''));
    if (ref.uid && ref.uid !== obj.metadata.uid)
      throw errors.conflict(
        r.resource,
        '',
        String(ref.name),
        `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    if (ref.kind === 'Pod') {
      // The pod must run as this very ServiceAccount; a mirror pod (none) can have no token at all.
      if (obj.spec?.serviceAccountName !== name)
        throw errors.badRequest(
          `cannot bind token for serviceaccount ${JSON.stringify(name)} to pod running with different serviceaccount name.`,
        );
      claims.pod = { name: obj.metadata.name, uid: obj.metadata.uid };
      const node = obj.spec?.nodeName ? api.find(api.res('', 'nodes'), '', String(obj.spec.nodeName)) : undefined;
      if (node) claims.node = { name: node.metadata.name, uid: node.metadata.uid };
    } else claims.node = { name: obj.metadata.name, uid: obj.metadata.uid };
  }
  return claims;
}

export async function requestToken(
  api: Api,
  tokens: ServiceAccountTokens,
  user: User,
  ns: string,
  name: string,
  body: Obj,
): Promise<Obj> {
  const claims = api.runAs(user, () => {
    api.admitSubresource(api.res('', 'serviceaccounts'), 'token', ns, name, body);
    return tokenClaims(api, tokens, ns, name, body);
  });
  const { token, expiresAt } = await tokens.issue(claims);
  const ref = body?.spec?.boundObjectRef as Obj | undefined;
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace: ns, creationTimestamp: null },
    spec: {
      audiences: claims.audiences,
      expirationSeconds: claims.expirationSeconds,
      boundObjectRef: ref ? { ...ref, uid: claims.pod?.uid ?? claims.node?.uid } : null,
    },
    status: { token, expirationTimestamp: rfc3339(expiresAt) },
  };
}
