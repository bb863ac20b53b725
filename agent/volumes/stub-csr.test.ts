import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { CertificationRequest } from '@peculiar/asn1-csr';
import { AsnConvert } from '@peculiar/asn1-schema';

import { KEY_TYPES, keyAndStubRequest } from './stub-csr.js';

const HASH: Record<string, string | null> = {
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.3.101.112': null,
};

test('every key type: a PKCS#8 key and an empty request signed by it, which openssl verifies too', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-csr-'));
  for (const keyType of KEY_TYPES.filter((k) => k !== 'RSA4096')) {
    const { keyPem, requestDer } = keyAndStubRequest(keyType);
    assert.ok(keyPem.startsWith('-----BEGIN PRIVATE KEY-----'), keyType);
    const req = AsnConvert.parse(requestDer, CertificationRequest);
    assert.equal(req.certificationRequestInfo.subject.length, 0, `${keyType}: no subject`);
    assert.equal(req.certificationRequestInfo.attributes.length, 0, `${keyType}: no attributes`);
    const pub = createPublicKey(createPrivateKey(keyPem));
    const spki = Buffer.from(AsnConvert.serialize(req.certificationRequestInfo.subjectPKInfo));
    assert.deepEqual(spki, pub.export({ type: 'spki', format: 'der' }), `${keyType}: the key's public half`);
    const info = Buffer.from(AsnConvert.serialize(req.certificationRequestInfo));
    const hash = HASH[req.signatureAlgorithm.algorithm];
    assert.notEqual(hash, undefined, `${keyType}: a known signature algorithm`);
    assert.ok(verify(hash ?? null, info, pub, Buffer.from(req.signature)), `${keyType}: signed by the key`);
    const file = path.join(dir, `${keyType}.der`);
    fs.writeFileSync(file, requestDer);
    const openssl = spawnSync('openssl', ['req', '-inform', 'DER', '-in', file, '-verify', '-noout']);
    if (!openssl.error) assert.equal(openssl.status, 0, `${keyType}: openssl verifies it`);
  }
  fs.rmSync(dir, { recursive: true });
  assert.throws(() => keyAndStubRequest('DSA1024'), /unknown key type "DSA1024"/);
});
