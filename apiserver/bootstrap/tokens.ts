// Bootstrap tokens as kubeadm makes them (Secret kube-system/bootstrap-token-<id>
// of type bootstrap.kubernetes.io/token) and what upstream does with them:
// bearer authentication as system:bootstrap:<id>, expiry, and the detached
// JWS kubeadm's bootstrap signer puts next to the cluster-info kubeconfig.
// Pure functions; the authenticator, controllers and CLI call them.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { rfc3339 } from '../../kube/time.js';
import type { User } from '../api/admission.js';

export const SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const SECRET_PREFIX = 'bootstrap-token-';
export const NAMESPACE = 'kube-system';
export const BOOTSTRAPPERS = 'system:bootstrappers';
export const DEFAULT_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
export const JWS_PREFIX = 'jws-kubeconfig-';

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

type Secret = {
  type?: string;
  metadata?: { name?: string; deletionTimestamp?: string };
  data?: Record<string, string>;
};

export const parseToken = (t: string): { id: string; secret: string } | undefined => {
  const m = TOKEN.exec(t.trim());
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
};

/** A Secret's data field, decoded (data is base64, as in any Secret). */
export const field = (s: Secret, k: string): string | undefined =>
  s.data?.[k] === undefined ? undefined : Buffer.from(s.data[k]!, 'base64').toString('utf8');

/** Whether the token Secret's expiration has passed (no expiration: never). */
export function expired(s: Secret, now = Date.now()): boolean {
  const exp = field(s, 'expiration');
  if (!exp) return false;
  const t = Date.parse(exp);
  return Number.isNaN(t) || t <= now;
}

/** The user a bearer token authenticates as, or why it does not (upstream's TokenAuthenticator rules). */
export function authenticate(
  token: string,
  lookup: (secretName: string) => Secret | undefined,
  now = Date.now(),
): { user: User } | { reason: string } | undefined {
  const t = parseToken(token);
  if (!t) return undefined; // not a bootstrap token: other authenticators may know it
  const s = lookup(`${SECRET_PREFIX}${t.id}`);
  if (!s) return { reason: `secret ${NAMESPACE}/${SECRET_PREFIX}${t.id} not found` };
  if (s.metadata?.deletionTimestamp) return { reason: 'token is being deleted' };
  if (s.type !== SECRET_TYPE) return { reason: `secret has wrong type ${JSON.stringify(s.type ?? '')}` };
  const secret = field(s, 'token-secret') ?? '';
  if (secret.length !== t.secret.length || !timingSafeEqual(Buffer.from(secret), Buffer.from(t.secret)))
    return { reason: 'token secret does not match' };
  if (field(s, 'token-id') !== t.id) return { reason: 'token id does not match' };
  if (expired(s, now)) return { reason: 'token has expired' };
  if (field(s, 'usage-bootstrap-authentication') !== 'true') return { reason: 'token not marked for authentication' };
  const extra = (field(s, 'auth-extra-groups') ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  if (extra.some((g) => !EXTRA_GROUP.test(g))) return { reason: 'token has invalid auth-extra-groups' };
  return { user: { name: `system:bootstrap:${t.id}`, groups: [BOOTSTRAPPERS, ...extra] } };
}

/** The detached JWS (header..signature, HS256, kid = token id) kubeadm's bootstrap signer computes over cluster-info's kubeconfig. */
export function detachedSignature(content: string, id: string, secret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: id })).toString('base64url');
  const payload = Buffer.from(content).toString('base64url');
  return `${header}..${createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url')}`;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const random = (n: number): string =>
  Array.from(randomBytes(n * 2))
    .filter((b) => b < 252)
    .slice(0, n)
    .map((b) => ALPHABET[b % 36])
    .join('');

/** A new token and its Secret, as `kubeadm token create` writes it. */
export function newTokenSecret(
  o: { ttlSeconds?: number; description?: string; groups?: string[]; now?: number; token?: string } = {},
): { token: string; secret: Record<string, unknown> } {
  const t = o.token ? parseToken(o.token) : { id: random(6), secret: random(16) };
  if (!t) throw new Error(`token ${JSON.stringify(o.token)} is not of the form [a-z0-9]{6}.[a-z0-9]{16}`);
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const data: Record<string, string> = {
    'token-id': b64(t.id),
    'token-secret': b64(t.secret),
    'usage-bootstrap-authentication': b64('true'),
    'usage-bootstrap-signing': b64('true'),
    'auth-extra-groups': b64((o.groups ?? [DEFAULT_GROUP]).join(',')),
  };
  if (o.ttlSeconds && o.ttlSeconds > 0)
    data.expiration = b64(rfc3339(new Date((o.now ?? Date.now()) + o.ttlSeconds * 1000)));
  if (o.description) data.description = b64(o.description);
  return {
    token: `${t.id}.${t.secret}`,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      type: SECRET_TYPE,
      metadata: { name: `${SECRET_PREFIX}${t.id}`, namespace: NAMESPACE },
      data,
    },
  };
}
