// Authentication: client certificates signed by the cluster CA (CN is the
// user, O the groups), bearer tokens from tokens.csv, and, with
// --anonymous-auth, system:anonymous. Every authenticated user is also in
// system:authenticated, as upstream. The same token check answers TokenReviews.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { User } from '../api/admission.js';

export const ANONYMOUS: User = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

export type TokenTable = Map<string, { user: string; groups: string[] }>;

const withAuthenticated = (name: string, groups: string[]): User => ({ name, groups: groups.includes('system:authenticated') ? groups : [...groups, 'system:authenticated'] });

export class Authenticator {
  constructor(
    private readonly tokens: TokenTable,
    private readonly anonymous: boolean,
  ) {}

  /** A bearer token's user, or undefined. */
  token(token: string): User | undefined {
    const t = this.tokens.get(token.trim());
    return t ? withAuthenticated(t.user, t.groups) : undefined;
  }

  /** The request's user; undefined means 401. */
  request(req: IncomingMessage): User | undefined {
    const sock = req.socket as TLSSocket;
    if (sock.authorized) {
      const cert = sock.getPeerCertificate();
      const cn = cert?.subject?.CN;
      if (cn) {
        const o = cert.subject.O;
        return withAuthenticated(Array.isArray(cn) ? cn[0]! : cn, o === undefined ? [] : Array.isArray(o) ? o : [o]);
      }
    }
    const auth = String(req.headers.authorization ?? '');
    // A token that does not check out is a 401 even when anonymous requests are allowed, as upstream.
    if (auth.startsWith('Bearer ')) return this.token(auth.slice(7));
    return this.anonymous ? ANONYMOUS : undefined;
  }
}
