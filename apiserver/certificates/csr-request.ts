// A PKCS#10 certificate request, decoded from its DER with an ASN.1 library: every attribute of every name part,
// the SANs of its extension request, the key type, and its self-signature checked, as Go's
// x509.ParseCertificateRequest and CheckSignature do. Errors carry Go's texts where Go has one.
import { createPublicKey, type KeyObject, verify } from 'node:crypto';

import { CertificationRequest } from '@peculiar/asn1-csr';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Extensions, id_ce_subjectAltName, SubjectAlternativeName } from '@peculiar/asn1-x509';
import * as asn1js from 'asn1js';

import { decodePem } from '../../kube/pem.js';

/** One attribute of a name part: `O=system:nodes` is { type: 'O', oid: '2.5.4.10', value: 'system:nodes' }. */
export interface NameAttribute {
  type: string;
  oid: string;
  value: string;
}

export type PublicKeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';

export interface CertificateRequest {
  /** The subject's name parts (RDNs) in order, each with all of its attributes. */
  subject: NameAttribute[][];
  /** Every O of the subject, in order (Go's Subject.Organization). */
  organizations: string[];
  /** The subject's CN; the last one when there are several, as Go's pkix.Name. */
  commonName: string;
  dnsNames: string[];
  emailAddresses: string[];
  ipAddresses: string[];
  uris: string[];
  publicKeyAlgorithm: PublicKeyAlgorithm;
}

const ATTRIBUTE_TYPES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.5': 'SERIALNUMBER',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'STREET',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.17': 'POSTALCODE',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

/** Signature algorithms Go verifies on a request: digest and the key type they need. */
const SIGNATURE_ALGORITHMS: Record<string, { digest: string | null; key: PublicKeyAlgorithm }> = {
  '1.2.840.113549.1.1.5': { digest: 'sha1', key: 'RSA' },
  '1.2.840.113549.1.1.11': { digest: 'sha256', key: 'RSA' },
  '1.2.840.113549.1.1.12': { digest: 'sha384', key: 'RSA' },
  '1.2.840.113549.1.1.13': { digest: 'sha512', key: 'RSA' },
  '1.2.840.10045.4.1': { digest: 'sha1', key: 'ECDSA' },
  '1.2.840.10045.4.3.2': { digest: 'sha256', key: 'ECDSA' },
  '1.2.840.10045.4.3.3': { digest: 'sha384', key: 'ECDSA' },
  '1.2.840.10045.4.3.4': { digest: 'sha512', key: 'ECDSA' },
  '1.3.101.112': { digest: null, key: 'Ed25519' },
};

const EC_CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

/** The DER of the first PEM block when it is a CERTIFICATE REQUEST (Go's pem.Decode and its type check). */
export function requestDer(pem: string): Buffer {
  const [block] = decodePem(pem);
  if (block?.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  return block.bytes;
}

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?*&]*$/;

/** A name attribute's value as Go's parseASN1String reads it; throws for strings Go refuses. */
function decodeString(block: asn1js.AsnType): string {
  const { idBlock, lenBlock, valueBeforeDecodeView } = block as asn1js.BaseBlock;
  if (idBlock.tagClass !== 1 || idBlock.isConstructed || lenBlock.isIndefiniteForm)
    throw new Error('unsupported string type');
  // The content octets: the encoding after its tag and length.
  const bytes = Buffer.from(valueBeforeDecodeView.subarray(valueBeforeDecodeView.byteLength - lenBlock.length));
  switch (idBlock.tagNumber) {
    case 12: {
      const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
      try {
        return text.decode(bytes);
      } catch {
        throw new Error('invalid UTF-8 string');
      }
    }
    case 19: {
      const s = bytes.toString('latin1');
      if (!PRINTABLE.test(s)) throw new Error('invalid PrintableString');
      return s;
    }
    case 22: {
      if (bytes.some((b) => b > 0x7f)) throw new Error('invalid IA5String');
      return bytes.toString('latin1');
    }
    case 18: {
      const s = bytes.toString('latin1');
      if (!/^[0-9 ]*$/.test(s)) throw new Error('invalid NumericString');
      return s;
    }
    case 20:
      return bytes.toString('latin1');
    case 30: {
      if (bytes.length % 2 !== 0) throw new Error('invalid BMPString');
      let end = bytes.length;
      if (end >= 2 && bytes[end - 1] === 0 && bytes[end - 2] === 0) end -= 2;
      const units: number[] = [];
      for (let i = 0; i < end; i += 2) units.push(bytes.readUInt16BE(i));
      return String.fromCharCode(...units);
    }
    default:
      throw new Error('unsupported string type');
  }
}

/** The subject's RDNs from the DER of the request's info, strictly: each value a string Go accepts. */
function parseSubject(info: ArrayBuffer): NameAttribute[][] {
  const parsed = asn1js.fromBER(info);
  if (parsed.offset === -1) throw new Error('x509: malformed certificate request');
  const seq = parsed.result as asn1js.Sequence;
  const subject = seq.valueBlock.value[1];
  if (!(subject instanceof asn1js.Sequence)) throw new Error('x509: malformed subject');
  return subject.valueBlock.value.map((rdn) => {
    if (!(rdn instanceof asn1js.Set)) throw new Error('x509: invalid RDNSequence');
    return rdn.valueBlock.value.map((atv) => {
      if (!(atv instanceof asn1js.Sequence) || atv.valueBlock.value.length !== 2)
        throw new Error('x509: invalid RDNSequence: invalid attribute');
      const [type, value] = atv.valueBlock.value as [asn1js.AsnType, asn1js.AsnType];
      if (!(type instanceof asn1js.ObjectIdentifier))
        throw new Error('x509: invalid RDNSequence: invalid attribute type');
      const oid = type.valueBlock.toString();
      let text: string;
      try {
        text = decodeString(value);
      } catch (e) {
        throw new Error(`x509: invalid RDNSequence: invalid attribute value: ${(e as Error).message}`, { cause: e });
      }
      return { type: ATTRIBUTE_TYPES[oid] ?? oid, oid, value: text };
    });
  });
}

function keyAlgorithm(key: KeyObject): PublicKeyAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RSA';
    case 'ec':
      if (!EC_CURVES.has(key.asymmetricKeyDetails?.namedCurve ?? ''))
        throw new Error('x509: unsupported elliptic curve');
      return 'ECDSA';
    case 'ed25519':
      return 'Ed25519';
    default:
      throw new Error(`x509: unsupported public key type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

function checkSignature(req: CertificationRequest, key: KeyObject, keyType: PublicKeyAlgorithm): void {
  const algo = SIGNATURE_ALGORITHMS[req.signatureAlgorithm.algorithm];
  if (!algo) throw new Error('x509: cannot verify signature: algorithm unimplemented');
  if (algo.key !== keyType)
    throw new Error(
      `x509: signature algorithm specifies an ${algo.key} public key, but have public key of type ${keyType}`,
    );
  const signed = Buffer.from(req.certificationRequestInfoRaw!);
  const ok = verify(algo.digest, signed, key, Buffer.from(req.signature));
  if (!ok)
    throw new Error(keyType === 'RSA' ? 'crypto/rsa: verification error' : `x509: ${keyType} verification failure`);
}

function sans(
  req: CertificationRequest,
): Pick<CertificateRequest, 'dnsNames' | 'emailAddresses' | 'ipAddresses' | 'uris'> {
  const out = {
    dnsNames: [] as string[],
    emailAddresses: [] as string[],
    ipAddresses: [] as string[],
    uris: [] as string[],
  };
  for (const attr of req.certificationRequestInfo.attributes) {
    if (attr.type !== EXTENSION_REQUEST) continue;
    for (const value of attr.values) {
      for (const ext of AsnConvert.parse(value, Extensions)) {
        if (ext.extnID !== id_ce_subjectAltName) continue;
        for (const name of AsnConvert.parse(ext.extnValue, SubjectAlternativeName)) {
          if (name.dNSName !== undefined) out.dnsNames.push(name.dNSName);
          else if (name.rfc822Name !== undefined) out.emailAddresses.push(name.rfc822Name);
          else if (name.iPAddress !== undefined) out.ipAddresses.push(name.iPAddress);
          else if (name.uniformResourceIdentifier !== undefined) out.uris.push(name.uniformResourceIdentifier);
        }
      }
    }
  }
  return out;
}

/** Parses and verifies a PEM certificate request; throws with the reason it is refused. */
export function parseCertificateRequest(pem: string): CertificateRequest {
  const der = requestDer(pem);
  let req: CertificationRequest;
  try {
    req = AsnConvert.parse(der, CertificationRequest);
  } catch (e) {
    throw new Error(`x509: malformed certificate request: ${(e as Error).message}`, { cause: e });
  }
  if (!req.certificationRequestInfoRaw) throw new Error('x509: malformed certificate request');
  const subject = parseSubject(req.certificationRequestInfoRaw);
  let key: KeyObject;
  try {
    key = createPublicKey({
      key: Buffer.from(AsnConvert.serialize(req.certificationRequestInfo.subjectPKInfo)),
      format: 'der',
      type: 'spki',
    });
  } catch {
    throw new Error('x509: unsupported public key type');
  }
  const publicKeyAlgorithm = keyAlgorithm(key);
  checkSignature(req, key, publicKeyAlgorithm);
  let altNames;
  try {
    altNames = sans(req);
  } catch (e) {
    throw new Error(`x509: malformed extension request: ${(e as Error).message}`, { cause: e });
  }
  const attrs = subject.flat();
  return {
    subject,
    organizations: attrs.filter((a) => a.type === 'O').map((a) => a.value),
    commonName: attrs.filter((a) => a.type === 'CN').at(-1)?.value ?? '',
    ...altNames,
    publicKeyAlgorithm,
  };
}
