// ServiceAccount tokens: TokenRequest issues JWTs (ES256, signed with the
// apiserver's sa.key) in upstream's claim layout, optionally bound to a Pod;
// the authenticator accepts them only while the ServiceAccount (and the bound
// Pod) still exist with the same UID.
import { createHash, createPublicKey, randomUUID } from 'node:crypto';
import fs from 'node:fs';

import { type CryptoKey, exportJWK, importPKCS8, importSPKI, type JWK, jwtVerify, SignJWT } from 'jose';

import type { User } from '../api/admission.js';
import type { Obj } from '../storage/store.js';

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';
const ALG = 'ES256';

export interface TokenClaims {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  pod?: { name: string; uid: string };
  node?: { name: string; uid: string };
  audiences: string[];
  expirationSeconds: number;
}

/** Looks objects up (by resource, namespace, name) for the liveness checks of bound tokens. */
export type Lookup = (resource: 'serviceaccounts' | 'pods' | 'nodes', ns: string, name: string) => Obj | undefined;

export const saUserName = (ns: string, name: string): string => `system:serviceaccount:${ns}:${name}`;

export class ServiceAccountTokens {
  private constructor(
    private readonly priv: CryptoKey,
    private readonly pub: CryptoKey,
    /** The key's id, as upstream's: base64url(sha256(DER of the public key)). */
    readonly kid: string,
    readonly issuer: string,
    readonly apiAudiences: string[],
    private readonly lookup: Lookup,
  ) {}

  static async load(
    keyFile: string,
    pubFile: string,
    lookup: Lookup,
    issuer = DEFAULT_ISSUER,
    apiAudiences = [issuer],
  ): Promise<ServiceAccountTokens> {
    const priv = await importPKCS8(fs.readFileSync(keyFile, 'utf8'), ALG);
    const pem = fs.readFileSync(pubFile, 'utf8');
    const pub = await importSPKI(pem, ALG);
    const der = createPublicKey(pem).export({ type: 'spki', format: 'der' });
    const kid = createHash('sha256').update(der).digest('base64url');
    return new ServiceAccountTokens(priv, pub, kid, issuer, apiAudiences, lookup);
  }

  /** The OIDC discovery document of the issuer (upstream's /.well-known/openid-configuration). */
  discovery(jwksUri: string): Record<string, unknown> {
    return {
      issuer: this.issuer,
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [ALG],
    };
  }

  /** The key set tokens are verified with (/openid/v1/jwks). */
  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: [{ ...(await exportJWK(this.pub)), kid: this.kid, use: 'sig', alg: ALG }] };
  }

  async issue(c: TokenClaims, now = Date.now()): Promise<{ token: string; expiresAt: Date }> {
    const iat = Math.floor(now / 1000);
    const exp = iat + c.expirationSeconds;
    const k8s: Record<string, unknown> = { namespace: c.namespace, serviceaccount: c.serviceAccount };
    if (c.pod) k8s.pod = c.pod;
    if (c.node) k8s.node = c.node;
    const token = await new SignJWT({ 'kubernetes.io': k8s })
      .setProtectedHeader({ alg: ALG, kid: this.kid })
      .setIssuer(this.issuer)
      .setSubject(saUserName(c.namespace, c.serviceAccount.name))
      .setAudience(c.audiences.length ? c.audiences : this.apiAudiences)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.priv);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** The token's user, for audiences `audiences` (default: the API's), or undefined. */
  async verify(token: string, audiences = this.apiAudiences): Promise<{ user: User; audiences: string[] } | undefined> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.pub, { issuer: this.issuer, algorithms: [ALG] }));
    } catch {
      return undefined;
    }
    const aud = (Array.isArray(payload.aud) ? payload.aud : [payload.aud]).filter(
      (a): a is string => typeof a === 'string',
    );
    const matched = aud.filter((a) => audiences.includes(a));
    if (!matched.length) return undefined;
    const k = payload['kubernetes.io'] as
      | {
          namespace?: string;
          serviceaccount?: { name?: string; uid?: string };
          pod?: { name?: string; uid?: string };
          node?: { name?: string; uid?: string };
        }
      | undefined;
    if (!k?.namespace || !k.serviceaccount?.name) return undefined;
    const ns = k.namespace;
    const sa = this.lookup('serviceaccounts', ns, k.serviceaccount.name);
    if (!sa || sa.metadata.uid !== k.serviceaccount.uid) return undefined;
    if (k.pod) {
      const pod = this.lookup('pods', ns, k.pod.name ?? '');
      if (!pod || pod.metadata.uid !== k.pod.uid) return undefined;
    }
    const extra: Record<string, string[]> = {
      'authentication.kubernetes.io/credential-id': [`JTI=${String(payload.jti)}`],
    };
    if (k.pod) {
      extra['authentication.kubernetes.io/pod-name'] = [k.pod.name!];
      extra['authentication.kubernetes.io/pod-uid'] = [k.pod.uid!];
    }
    if (k.node) {
      extra['authentication.kubernetes.io/node-name'] = [k.node.name!];
      extra['authentication.kubernetes.io/node-uid'] = [k.node.uid!];
    }
    const user: User = {
      name: saUserName(ns, sa.metadata.name),
      uid: sa.metadata.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
      extra,
    };
    return { user, audiences: matched };
  }
}
