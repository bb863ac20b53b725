// The certificate request parser on requests made by openssl and on crafted ones (multi-valued name parts, repeated
// and extra attributes, strings Go refuses, key types it does not take, broken signatures), and each signer's rules.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { type CertificateRequest, parseCertificateRequest } from './csr-request.js';
import {
  signerVerdict,
  validateApiServerClient,
  validateKubeletClient,
  validateKubeletServing,
} from './signer-rules.js';

// A minimal DER writer, to craft requests no well-behaved tool would make.
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, body]);
}
function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const bytes = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const chunk = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}
const SEQ = (...c: Buffer[]) => tlv(0x30, ...c);
const SET = (...c: Buffer[]) => tlv(0x31, ...c);
const utf8 = (s: string | Buffer) => tlv(0x0c, Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8'));
const O = '2.5.4.10';
const CN = '2.5.4.3';
const OU = '2.5.4.11';
const attr = (type: string, value: Buffer) => SEQ(oid(type), value);
const rdn = (...attrs: Buffer[]) => SET(...attrs);

interface Crafted {
  subject: Buffer[];
  sans?: Buffer[];
  extraAttributes?: Buffer[];
  key?: 'ec' | 'rsa' | 'ed25519' | 'dsa' | 'secp256k1';
  /** The signature algorithm's OID, when not the one the key goes with. */
  sigOid?: string;
  corrupt?: boolean;
}

const keys = new Map<string, { publicKey: KeyObject; privateKey: KeyObject }>();
function keyPair(kind: NonNullable<Crafted['key']>) {
  if (!keys.has(kind)) {
    const k =
      kind === 'ec'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : kind === 'secp256k1'
          ? generateKeyPairSync('ec', { namedCurve: 'secp256k1' })
          : kind === 'rsa'
            ? generateKeyPairSync('rsa', { modulusLength: 2048 })
            : kind === 'dsa'
              ? generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 })
              : generateKeyPairSync('ed25519');
    keys.set(kind, k);
  }
  return keys.get(kind)!;
}

const SIG = {
  ec: ['1.2.840.10045.4.3.2', 'sha256'],
  secp256k1: ['1.2.840.10045.4.3.2', 'sha256'],
  rsa: ['1.2.840.113549.1.1.11', 'sha256'],
  dsa: ['2.16.840.1.101.3.4.3.2', 'sha256'],
  ed25519: ['1.3.101.112', null],
} as const;

function craft(c: Crafted): string {
  const kind = c.key ?? 'ec';
  const { publicKey, privateKey } = keyPair(kind);
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const ext = c.sans
    ? [SEQ(oid('1.2.840.113549.1.9.14'), SET(SEQ(SEQ(oid('2.5.29.17'), tlv(0x04, SEQ(...c.sans))))))]
    : [];
  const info = SEQ(
    tlv(0x02, Buffer.from([0])),
    SEQ(...c.subject),
    spki,
    tlv(0xa0, ...ext, ...(c.extraAttributes ?? [])),
  );
  const [sigOid, digest] = SIG[kind];
  const signature = sign(digest, info, privateKey);
  if (c.corrupt) signature[signature.length - 1]! ^= 0x01;
  const algo = kind === 'rsa' ? SEQ(oid(c.sigOid ?? sigOid), tlv(0x05)) : SEQ(oid(c.sigOid ?? sigOid));
  const der = SEQ(info, algo, tlv(0x03, Buffer.from([0]), signature));
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE REQUEST-----\n`;
}

const node = [rdn(attr(O, utf8('system:nodes'))), rdn(attr(CN, utf8('system:node:n1')))];

test('a request openssl makes: subject, SANs and key type; the multi-valued attack subject shows every O', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-csr-'));
  try {
    const key = path.join(tmp, 'k.pem');
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
    const req = (subj: string, ...more: string[]) =>
      execFileSync('openssl', ['req', '-new', '-key', key, '-subj', subj, ...more], { encoding: 'utf8' });
    const plain = parseCertificateRequest(
      req(
        '/O=system:nodes/CN=system:node:n1',
        '-addext',
        'subjectAltName=DNS:n1,IP:10.0.0.1,email:a@b.c,URI:spiffe://x/y',
      ),
    );
    assert.deepEqual(plain.subject, [
      [{ type: 'O', oid: O, value: 'system:nodes' }],
      [{ type: 'CN', oid: CN, value: 'system:node:n1' }],
    ]);
    assert.deepEqual(
      [plain.dnsNames, plain.ipAddresses, plain.emailAddresses, plain.uris],
      [['n1'], ['10.0.0.1'], ['a@b.c'], ['spiffe://x/y']],
    );
    assert.equal(plain.publicKeyAlgorithm, 'ECDSA');
    // The first review's attack: a second O hidden in a multi-valued name part.
    const attack = parseCertificateRequest(
      req('/O=system:nodes/OU=x+O=system:masters/CN=system:node:cp', '-multivalue-rdn'),
    );
    assert.deepEqual(attack.organizations, ['system:nodes', 'system:masters']);
    assert.equal(attack.subject[1]!.length, 2);
    assert.equal(
      validateKubeletClient(attack, ['digital signature', 'client auth']),
      'subject name parts must each hold one attribute',
    );
    const viaCn = parseCertificateRequest(req('/O=system:nodes/CN=system:node:mv+O=system:masters', '-multivalue-rdn'));
    assert.deepEqual(viaCn.organizations, ['system:nodes', 'system:masters']);
    assert.equal(viaCn.commonName, 'system:node:mv');
    assert.equal(
      validateKubeletClient(viaCn, ['digital signature', 'client auth']),
      'subject name parts must each hold one attribute',
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('crafted subjects: every attribute of every part is read; strings Go refuses are refused', () => {
  const multi = parseCertificateRequest(
    craft({
      subject: [
        rdn(attr(O, utf8('system:nodes')), attr(O, utf8('system:masters'))),
        rdn(attr(CN, utf8('system:node:n1'))),
      ],
    }),
  );
  assert.deepEqual(multi.organizations, ['system:nodes', 'system:masters']);
  const repeated = parseCertificateRequest(
    craft({
      subject: [
        rdn(attr(O, utf8('system:nodes'))),
        rdn(attr(O, utf8('system:masters'))),
        rdn(attr(CN, utf8('system:node:n1'))),
      ],
    }),
  );
  assert.deepEqual(repeated.organizations, ['system:nodes', 'system:masters']);
  const twoCns = parseCertificateRequest(craft({ subject: [...node, rdn(attr(CN, utf8('system:node:n2')))] }));
  assert.equal(twoCns.commonName, 'system:node:n2', 'the last CN, as Go');
  // Other string types: PrintableString, BMPString, T61String decode; an unknown OID keeps its dotted name.
  const types = parseCertificateRequest(
    craft({
      subject: [
        rdn(attr(O, tlv(0x13, Buffer.from('Acme Co')))),
        rdn(attr(OU, tlv(0x1e, Buffer.from('\u0000h\u0000i', 'latin1')))),
        rdn(attr('1.2.3.4', tlv(0x14, Buffer.from([0x41, 0xe9])))),
      ],
    }),
  );
  assert.deepEqual(
    types.subject.flat().map((a) => `${a.type}=${a.value}`),
    ['O=Acme Co', 'OU=hi', '1.2.3.4=A\u00e9'],
  );
  const refused: [Buffer, RegExp][] = [
    [utf8(Buffer.from([0x73, 0xff, 0xfe])), /invalid attribute value: invalid UTF-8 string$/],
    [tlv(0x13, Buffer.from('a@b')), /invalid attribute value: invalid PrintableString$/],
    [tlv(0x16, Buffer.from([0x61, 0x80])), /invalid attribute value: invalid IA5String$/],
    // The ASN.1 library refuses an odd-length BMPString before the name is read.
    [tlv(0x1e, Buffer.from([0x00, 0x61, 0x62])), /^Error: x509: malformed certificate request/],
    [tlv(0x1c, Buffer.from([0, 0, 0, 0x61])), /invalid attribute value: unsupported string type$/],
    [tlv(0x04, Buffer.from('x')), /invalid attribute value: unsupported string type$/],
  ];
  for (const [value, message] of refused)
    assert.throws(
      () => parseCertificateRequest(craft({ subject: [rdn(attr(O, value)), rdn(attr(CN, utf8('system:node:n1')))] })),
      message,
    );
});

test('crafted keys and signatures: only RSA, ECDSA on P-256/384/521 and Ed25519, signed by that key', () => {
  assert.equal(parseCertificateRequest(craft({ subject: node, key: 'rsa' })).publicKeyAlgorithm, 'RSA');
  assert.equal(parseCertificateRequest(craft({ subject: node, key: 'ed25519' })).publicKeyAlgorithm, 'Ed25519');
  assert.throws(
    () => parseCertificateRequest(craft({ subject: node, key: 'dsa' })),
    /^Error: x509: unsupported public key type dsa$/,
  );
  assert.throws(
    () => parseCertificateRequest(craft({ subject: node, key: 'secp256k1' })),
    /^Error: x509: unsupported elliptic curve$/,
  );
  assert.throws(
    () => parseCertificateRequest(craft({ subject: node, corrupt: true })),
    /^Error: x509: ECDSA verification failure$/,
  );
  assert.throws(
    () => parseCertificateRequest(craft({ subject: node, key: 'rsa', corrupt: true })),
    /^Error: crypto\/rsa: verification error$/,
  );
  assert.throws(
    () => parseCertificateRequest(craft({ subject: node, sigOid: '1.2.840.113549.1.1.11' })),
    /signature algorithm specifies an RSA public key, but have public key of type ECDSA/,
  );
  assert.throws(
    () => parseCertificateRequest(craft({ subject: node, sigOid: '1.2.840.113549.1.1.4' })),
    /algorithm unimplemented/,
  );
  // Other attributes (a challenge password) are passed over, as Go does.
  const challenge = SEQ(oid('1.2.840.113549.1.9.7'), SET(utf8('secret')));
  assert.equal(
    parseCertificateRequest(craft({ subject: node, extraAttributes: [challenge] })).commonName,
    'system:node:n1',
  );
  assert.throws(
    () => parseCertificateRequest('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
    /^Error: PEM block type must be CERTIFICATE REQUEST$/,
  );
  assert.throws(
    () => parseCertificateRequest('-----BEGIN CERTIFICATE REQUEST-----\nMAA=\n-----END CERTIFICATE REQUEST-----\n'),
    /^Error: x509: malformed certificate request/,
  );
});

const sans = {
  dns: tlv(0x82, Buffer.from('n1')),
  ip: tlv(0x87, Buffer.from([10, 0, 0, 1])),
  email: tlv(0x81, Buffer.from('a@b.c')),
  uri: tlv(0x86, Buffer.from('spiffe://x')),
};
const request = (subject: Buffer[], san: (keyof typeof sans)[] = []): CertificateRequest =>
  parseCertificateRequest(craft({ subject, sans: san.length ? san.map((k) => sans[k]) : undefined }));
const CLIENT = ['digital signature', 'client auth'];
const SERVING = ['digital signature', 'key encipherment', 'server auth'];

test("the kubelet client signer's rules, with upstream's messages", () => {
  const ok = request(node);
  assert.equal(validateKubeletClient(ok, CLIENT), undefined);
  assert.equal(validateKubeletClient(ok, ['key encipherment', 'digital signature', 'client auth']), undefined);
  assert.equal(
    validateKubeletClient(ok, ['digital signature', 'server auth']),
    'usages did not match [client auth digital signature key encipherment]',
  );
  const cases: [Buffer[], (keyof typeof sans)[], string][] = [
    [
      [rdn(attr(O, utf8('system:nodes')), attr(O, utf8('system:masters'))), rdn(attr(CN, utf8('system:node:n1')))],
      [],
      'subject name parts must each hold one attribute',
    ],
    [
      [rdn(attr(O, utf8('system:nodes'))), rdn(attr(O, utf8('system:masters'))), rdn(attr(CN, utf8('system:node:n1')))],
      [],
      'subject organization is not system:nodes',
    ],
    [
      [rdn(attr(O, utf8('system:nodes'))), rdn(attr(O, utf8('system:nodes'))), rdn(attr(CN, utf8('system:node:n1')))],
      [],
      'subject organization is not system:nodes',
    ],
    [[...node, rdn(attr(OU, utf8('x')))], [], 'subject may hold only O and CN, not OU'],
    [[...node, rdn(attr(CN, utf8('system:node:n2')))], [], 'subject must hold one common name'],
    [
      [rdn(attr(O, utf8('system:nodes'))), rdn(attr(CN, utf8('admin')))],
      [],
      'subject common name does not begin with system:node:',
    ],
    [node, ['dns'], 'DNS subjectAltNames are not allowed'],
    [node, ['email'], 'Email subjectAltNames are not allowed'],
    [node, ['ip'], 'IP subjectAltNames are not allowed'],
    [node, ['uri'], 'URI subjectAltNames are not allowed'],
  ];
  for (const [subject, san, why] of cases) assert.equal(validateKubeletClient(request(subject, san), CLIENT), why);
});

test("the kubelet serving and kube-apiserver-client signers' rules; signers not served are left alone", () => {
  assert.equal(validateKubeletServing(request(node, ['dns', 'ip']), SERVING), undefined);
  assert.equal(validateKubeletServing(request(node), SERVING), 'DNS or IP subjectAltName is required');
  assert.equal(validateKubeletServing(request(node, ['dns', 'uri']), SERVING), 'URI subjectAltNames are not allowed');
  assert.equal(
    validateKubeletServing(request(node, ['dns']), ['digital signature', 'server auth', 'client auth']),
    'usages did not match [digital signature key encipherment server auth]',
  );
  const masters = request([rdn(attr(O, utf8('system:masters'))), rdn(attr(CN, utf8('system:node:n1')))], ['dns']);
  assert.equal(validateKubeletServing(masters, SERVING), 'subject organization is not system:nodes');
  assert.equal(
    validateApiServerClient(request([rdn(attr(O, utf8('team'))), rdn(attr(CN, utf8('alice')))]), CLIENT),
    undefined,
  );
  assert.equal(
    validateApiServerClient(masters, CLIENT),
    'use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
  assert.equal(
    validateApiServerClient(request(node), ['client auth', 'server auth']),
    'invalid usage for client certificate: server auth',
  );
  assert.equal(
    validateApiServerClient(request(node), ['digital signature']),
    'missing required usage for client certificate: client auth',
  );
  assert.equal(signerVerdict('kubernetes.io/kubelet-serving', request(node, ['dns']), SERVING), '');
  assert.equal(
    signerVerdict('kubernetes.io/kubelet-serving', masters, ['digital signature', 'server auth', 'client auth']),
    'subject organization is not system:nodes',
  );
  assert.equal(signerVerdict('kubernetes.io/legacy-unknown', masters, CLIENT), undefined);
  assert.equal(signerVerdict('example.com/mine', masters, CLIENT), undefined);
});
