// Who is calling the kubelet API, and may they: x509 client certificates
// against --client-ca-file, bearer tokens by TokenReview, anonymous only when
// enabled; then AlwaysAllow or a SubjectAccessReview on nodes/<subresource>,
// with upstream's verb and path mapping and its cache TTLs.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

import { type KubeApi, KubeApiError } from '../../kube/client.js';

export interface User {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface Attributes {
  user: User;
  verb: string;
  resource: 'nodes';
  subresource: string;
  name: string;
}

export interface AuthOptions {
  anonymous: boolean;
  /** Check bearer tokens with TokenReview (needs `client`). */
  webhookAuthn: boolean;
  tokenCacheTtlMs: number;
  mode: 'AlwaysAllow' | 'Webhook';
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  client?: KubeApi;
}

const VERBS: Record<string, string> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

/** Upstream GetRequestAttributes: the verb from the method, the subresource from the path's prefix. */
export function requestAttributes(user: User, method: string, path: string, nodeName: string): Attributes {
  const prefixes: [string, string][] = [
    ['/stats', 'stats'],
    ['/metrics', 'metrics'],
    ['/logs', 'log'],
    ['/spec', 'spec'],
    ['/checkpoint', 'checkpoint'],
  ];
  const sub = prefixes.find(([p]) => path === p || path.startsWith(`${p}/`))?.[1] ?? 'proxy';
  return { user, verb: VERBS[method] ?? method.toLowerCase(), resource: 'nodes', subresource: sub, name: nodeName };
}

export const forbiddenMessage = (a: Attributes): string =>
  `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;

class TtlCache<V> {
  private readonly m = new Map<string, { v: V; until: number }>();
  get(k: string): V | undefined {
    const e = this.m.get(k);
    if (!e) return undefined;
    if (e.until > Date.now()) return e.v;
    this.m.delete(k);
    return undefined;
  }
  set(k: string, v: V, ttl: number): void {
    if (ttl <= 0) return;
    if (this.m.size > 10_000) this.m.clear(); // bounded: a flood of distinct tokens must not grow memory
    this.m.set(k, { v, until: Date.now() + ttl });
  }
}

/** Upstream's DefaultShouldRetry for webhooks: connection resets, timeouts, 5xx and 429 are transient. */
export function transientWebhookError(e: unknown): boolean {
  if (e instanceof KubeApiError) return e.code >= 500 || e.code === 429;
  const code = (e as NodeJS.ErrnoException | undefined)?.code ?? '';
  const msg = (e as Error | undefined)?.message ?? '';
  return (
    ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ERR_SOCKET_CLOSED'].includes(code) ||
    /socket hang up|timed out/.test(msg)
  );
}

/** Upstream's DefaultAuthWebhookRetryBackoff: 500 ms, ×1.5, jitter 0.2, 5 attempts. A rotated client certificate closes
 * the connections a review is in flight on, so one transient failure must not become a 500 for the caller. */
export async function withWebhookRetry<T>(
  call: () => Promise<T>,
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): Promise<T> {
  let delay = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= 5 || !transientWebhookError(e)) throw e;
      await sleep(delay * (1 + Math.random() * 0.2));
      delay *= 1.5;
    }
  }
}

export class KubeletAuth {
  private readonly tokens = new TtlCache<User | null>();
  private readonly decisions = new TtlCache<{ allowed: boolean; reason: string }>();

  constructor(private readonly o: AuthOptions) {}

  /** The user, or undefined for 401. */
  async authenticate(req: IncomingMessage): Promise<User | undefined> {
    const sock = req.socket as TLSSocket;
    if (sock.authorized) {
      const cert = sock.getPeerCertificate();
      const subj = cert?.subject as unknown as Record<string, string | string[]> | undefined;
      const cn = subj?.CN;
      if (typeof cn === 'string' && cn) {
        const o = subj?.O;
        return { name: cn, groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'] };
      }
    }
    const auth = req.headers.authorization ?? '';
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m && this.o.webhookAuthn && this.o.client) {
      const u = await this.reviewToken(m[1]!);
      if (u) return u;
    }
    if (this.o.anonymous && !m) return { name: 'system:anonymous', groups: ['system:unauthenticated'] };
    return undefined;
  }

  private async reviewToken(token: string): Promise<User | undefined> {
    const hit = this.tokens.get(token);
    if (hit !== undefined) return hit ?? undefined;
    const r = await withWebhookRetry(() =>
      this.o.client!.create('/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      }),
    );
    const st = r.status ?? {};
    const user: User | null = st.authenticated
      ? { name: st.user?.username ?? '', uid: st.user?.uid, groups: st.user?.groups ?? [], extra: st.user?.extra }
      : null;
    this.tokens.set(token, user, this.o.tokenCacheTtlMs);
    return user ?? undefined;
  }

  /** Allowed, or the reason it is not. */
  async authorize(a: Attributes): Promise<{ allowed: boolean; reason: string }> {
    if (this.o.mode === 'AlwaysAllow') return { allowed: true, reason: '' };
    if (!this.o.client)
      return {
        allowed: false,
        reason:
          'authorization mode Webhook needs a kubeconfig; set authorization.mode: AlwaysAllow for a standalone kubelet',
      };
    const key = JSON.stringify(a);
    const hit = this.decisions.get(key);
    if (hit) return hit;
    const client = this.o.client;
    const r = await withWebhookRetry(() =>
      client.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: a.user.name,
          uid: a.user.uid,
          groups: a.user.groups,
          extra: a.user.extra,
          resourceAttributes: { verb: a.verb, resource: a.resource, subresource: a.subresource, name: a.name },
        },
      }),
    );
    const d = { allowed: r.status?.allowed === true, reason: String(r.status?.reason ?? '') };
    this.decisions.set(key, d, d.allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs);
    return d;
  }
}
