import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodePem, encodePem } from '../../kube/pem.js';
import { bundlesOfSigner, type ClusterTrustBundle, normalizeTrustAnchors } from './trust-anchors.js';

const cert = (n: number): string => encodePem({ type: 'CERTIFICATE', bytes: Buffer.alloc(40, n) });
const ctb = (
  name: string,
  signerName: string,
  labels: Record<string, string>,
  ...certs: string[]
): ClusterTrustBundle => ({
  metadata: { name, labels },
  spec: { signerName, trustBundle: certs.join('\n') },
});

test('trust anchors: each certificate once over all bundles, re-encoded as CERTIFICATE blocks', () => {
  const out = normalizeTrustAnchors([ctb('a', 's', {}, cert(1), cert(2)), ctb('b', 's', {}, cert(2), cert(3))]);
  const blocks = decodePem(out.toString());
  assert.equal(blocks.length, 3);
  assert.deepEqual(blocks.map((b) => b.bytes[0]).sort(), [1, 2, 3]);
  assert.ok(blocks.every((b) => b.type === 'CERTIFICATE'));
  assert.equal(normalizeTrustAnchors([]).length, 0, 'nothing selected (optional): an empty file');
});

test("a signer's bundles: a missing selector selects none, an empty one all of the signer's, labels narrow", () => {
  const all = [
    ctb('one.a', 'example.com/one', { env: 'prod' }, cert(1)),
    ctb('one.b', 'example.com/one', { env: 'dev' }, cert(2)),
    ctb('two.a', 'example.com/two', { env: 'prod' }, cert(3)),
  ];
  const names = (bs: ClusterTrustBundle[]) => bs.map((b) => b.metadata!.name);
  assert.deepEqual(names(bundlesOfSigner(all, 'example.com/one', undefined)), []);
  assert.deepEqual(names(bundlesOfSigner(all, 'example.com/one', null)), []);
  assert.deepEqual(names(bundlesOfSigner(all, 'example.com/one', {})), ['one.a', 'one.b']);
  assert.deepEqual(names(bundlesOfSigner(all, 'example.com/one', { matchLabels: { env: 'prod' } })), ['one.a']);
});
