// The key pair and empty PKCS#10 request the kubelet makes for a podCertificate projected volume source (upstream's
// generateKeyAndProof): the request has no subject and no attributes, only the public key and the signature that
// proves the kubelet holds the private key.
import { createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

import { CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import { AsnConvert } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Name, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';

/** The key types a podCertificate source may ask for. */
export const KEY_TYPES = ['RSA3072', 'RSA4096', 'ECDSAP256', 'ECDSAP384', 'ECDSAP521', 'ED25519'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** How each key type is made and signs: Go's x509 picks SHA-256 for RSA, the curve's size for ECDSA. */
const KINDS: Record<KeyType, { make: () => KeyObject; hash: string | null; oid: string; nullParams: boolean }> = {
  RSA3072: { make: () => rsa(3072), hash: 'sha256', oid: '1.2.840.113549.1.1.11', nullParams: true },
  RSA4096: { make: () => rsa(4096), hash: 'sha256', oid: '1.2.840.113549.1.1.11', nullParams: true },
  ECDSAP256: { make: () => ec('prime256v1'), hash: 'sha256', oid: '1.2.840.10045.4.3.2', nullParams: false },
  ECDSAP384: { make: () => ec('secp384r1'), hash: 'sha384', oid: '1.2.840.10045.4.3.3', nullParams: false },
  ECDSAP521: { make: () => ec('secp521r1'), hash: 'sha512', oid: '1.2.840.10045.4.3.4', nullParams: false },
  ED25519: { make: () => generateKeyPairSync('ed25519').privateKey, hash: null, oid: '1.3.101.112', nullParams: false },
};

function rsa(modulusLength: number): KeyObject {
  return generateKeyPairSync('rsa', { modulusLength }).privateKey;
}

function ec(namedCurve: string): KeyObject {
  return generateKeyPairSync('ec', { namedCurve }).privateKey;
}

export interface KeyAndRequest {
  /** The private key as a PKCS#8 PRIVATE KEY PEM block. */
  keyPem: string;
  /** The DER of the signed, empty certificate request. */
  requestDer: Buffer;
}

/** A new key of `keyType` and its stub certificate request; an unknown key type is an error naming it. */
export function keyAndStubRequest(keyType: string): KeyAndRequest {
  const kind = KINDS[keyType as KeyType];
  if (!kind) throw new Error(`unknown key type "${keyType}": must be one of ${KEY_TYPES.join(', ')}`);
  const key = kind.make();
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const info = new CertificationRequestInfo({
    subject: new Name(),
    subjectPKInfo: AsnConvert.parse(spki, SubjectPublicKeyInfo),
  });
  const infoDer = Buffer.from(AsnConvert.serialize(info));
  const signature = sign(kind.hash, infoDer, key);
  const req = new CertificationRequest({
    certificationRequestInfo: info,
    signatureAlgorithm: new AlgorithmIdentifier({
      algorithm: kind.oid,
      ...(kind.nullParams ? { parameters: null } : {}),
    }),
    signature: new Uint8Array(signature).buffer,
  });
  return {
    keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    requestDer: Buffer.from(AsnConvert.serialize(req)),
  };
}
