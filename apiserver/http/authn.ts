// Authentication: client certificates signed by the cluster CA (CN is the
// user, O the groups), bearer tokens from tokens.csv, bootstrap tokens
// (kube-system/bootstrap-token-<id> Secrets), ServiceAccount JWTs,
// and, with --anonymous-auth, system:anonymous. Every authenticated user is also in
// system:authenticated, as upstream. The same token check answers TokenReviews.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

import type { User } from '../api/admission.js';
import { authenticate as bootstrapToken } from '../bootstrap/tokens.js';
import type { ServiceAccountTokens } from '../serviceaccount/tokens.js';
import type { Obj } from '../storage/store.js';

export const ANONYMOUS: User = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

export type TokenTable = Map<string, { user: string; groups: string[] }>;

const withAuthenticated = (name: string, groups: string[]): User => ({
  name,
  groups: groups.includes('system:authenticated') ? groups : [...groups, 'system:authenticated'],
});

export class Authenticator {
  constructor(
    private readonly tokens: TokenTable,
    private readonly anonymous: boolean,
    private readonly serviceAccounts?: ServiceAccountTokens,
    /** Reads a kube-system Secret by name, for bootstrap tokens. */
    private readonly bootstrapSecret?: (name: string) => Obj | undefined,
  ) {}

  /** A bearer token's user (and the audiences it was accepted for), or undefined. */
  async token(token: string, audiences?: string[]): Promise<{ user: User; audiences: string[] } | undefined> {
    const t = this.tokens.get(token.trim());
    if (t) return { user: withAuthenticated(t.user, t.groups), audiences: audiences ?? [] };
    if (this.bootstrapSecret) {
      const b = bootstrapToken(token, this.bootstrapSecret);
      if (b)
        return 'user' in b
          ? { user: withAuthenticated(b.user.name, b.user.groups), audiences: audiences ?? [] }
          : undefined;
    }
    if (this.serviceAccounts && token.split('.').length === 3)
      return this.serviceAccounts.verify(token.trim(), audiences?.length ? audiences : undefined);
    return undefined;
  }

  /** The request's user; undefined means 401. */
  async request(req: IncomingMessage): Promise<User | undefined> {
    const sock = req.socket as TLSSocket;
    if (sock.authorized) {
      const cert = sock.getPeerCertificate();
      const cn = cert?.subject?.CN;
      if (cn) {
        const o = cert.subject.O;
        return withAuthenticated(Array.isArray(cn) ? cn[0]! : cn, o === undefined ? [] : Array.isArray(o) ? o : [o]);
      }
    }
    // A client certificate that does not verify is a 401 even when anonymous requests are allowed: upstream's
    // anonymous authenticator only runs when no other one failed (union.NewFailOnError).
    const presented = typeof sock.getPeerCertificate === 'function' ? sock.getPeerCertificate() : undefined;
    if (!sock.authorized && presented && Object.keys(presented).length > 0) return undefined;
    const auth = String(req.headers.authorization ?? '');
    // A token that does not check out is a 401 even when anonymous requests are allowed, as upstream.
    if (auth.startsWith('Bearer ')) return (await this.token(auth.slice(7)))?.user;
    return this.anonymous ? ANONYMOUS : undefined;
  }
}
