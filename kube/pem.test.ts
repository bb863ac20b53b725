import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodePem, encodePem } from './pem.js';

test('PEM blocks: decoded in order past surrounding text, encoded in 64-character lines as Go writes them', () => {
  const a = { type: 'CERTIFICATE', bytes: Buffer.alloc(100, 1) };
  const b = { type: 'PRIVATE KEY', bytes: Buffer.from('key') };
  const pemA = encodePem(a);
  assert.equal(pemA.split('\n')[1]!.length, 64);
  assert.ok(pemA.startsWith('-----BEGIN CERTIFICATE-----\n') && pemA.endsWith('-----END CERTIFICATE-----\n'));
  const text = `comment\n${pemA}between\r\n${encodePem(b).replace(/\n/g, '\r\n')}`;
  assert.deepEqual(decodePem(text), [a, b]);
  // A block without its END line, or with a body that is not base64, ends the decoding.
  assert.deepEqual(decodePem(`${pemA}-----BEGIN X-----\nAAAA\n`), [a]);
  assert.deepEqual(decodePem(`-----BEGIN X-----\n*not base64*\n-----END X-----\n${pemA}`), []);
});
