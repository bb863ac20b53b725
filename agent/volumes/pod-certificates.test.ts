import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { encodePem } from '../../kube/pem.js';
import { type PodCertificateApi, type PodCertificateRequest, PodCertificates } from './pod-certificates.js';
import { VolumeError } from './volume-error.js';

const pod: Pod = {
  metadata: { name: 'web', namespace: 'ns', uid: 'pod-uid' },
  spec: { serviceAccountName: 'app', containers: [{ name: 'c', image: 'i' }] },
};
const src = { signerName: 'example.com/spiffe', keyType: 'ECDSAP256', credentialBundlePath: 'bundle.pem' };
const cert = (n: number) => encodePem({ type: 'CERTIFICATE', bytes: Buffer.alloc(20, n) });

type RequestBody = { metadata: { ownerReferences: unknown }; spec: Record<string, string> };

function fakeApi() {
  const created: { name: string; body: RequestBody }[] = [];
  const pcrs = new Map<string, PodCertificateRequest>();
  const api: PodCertificateApi = {
    serviceAccountUid: async (ns, name) => `${ns}/${name}-uid`,
    nodeUid: async (name) => `${name}-uid`,
    createPodCertificateRequest: async (_ns, body) => {
      const name = `req-${created.length}`;
      created.push({ name, body: body as RequestBody });
      pcrs.set(name, { metadata: { name } });
      return { metadata: { name } };
    },
    podCertificateRequest: async (_ns, name) => pcrs.get(name),
  };
  const issue = (name: string, chain: string, beginRefreshAt: string) =>
    pcrs.set(name, {
      metadata: { name },
      status: { conditions: [{ type: 'Issued', status: 'True' }], certificateChain: chain, beginRefreshAt },
    });
  return { api, created, pcrs, issue };
}

test('a podCertificate source: one request to the signer, the pod waits until it is issued, then key and chain', async () => {
  const f = fakeApi();
  let now = Date.parse('2026-12-07T10:00:00Z');
  const certs = new PodCertificates(f.api, 'n1', () => now);
  await assert.rejects(certs.credentials(pod, 'tls', 0, src), VolumeError);
  assert.equal(f.created.length, 1);
  const spec = f.created[0]!.body.spec;
  assert.deepEqual(
    [
      spec.signerName,
      spec.podName,
      spec.podUID,
      spec.serviceAccountName,
      spec.serviceAccountUID,
      spec.nodeName,
      spec.nodeUID,
    ],
    ['example.com/spiffe', 'web', 'pod-uid', 'app', 'ns/app-uid', 'n1', 'n1-uid'],
  );
  assert.ok(Buffer.from(spec.stubPKCS10Request ?? '', 'base64').length > 0);
  assert.deepEqual(f.created[0]!.body.metadata.ownerReferences, [
    { apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-uid' },
  ]);
  await assert.rejects(certs.credentials(pod, 'tls', 0, src), /no credentials yet/);
  assert.equal(f.created.length, 1, 'still pending: no second request');

  // Issued: the chain without what surrounds its blocks, and the key the request was made with.
  f.issue('req-0', `leaf\n${cert(1)}junk\n${cert(2)}`, '2026-12-07T11:00:00Z');
  const first = await certs.credentials(pod, 'tls', 0, src);
  assert.equal(first.chain.toString(), cert(1) + cert(2));
  assert.ok(first.key.toString().startsWith('-----BEGIN PRIVATE KEY-----'));

  // From beginRefreshAt a new request goes out; the current credentials serve until it is issued.
  now = Date.parse('2026-12-07T11:00:01Z');
  assert.equal((await certs.credentials(pod, 'tls', 0, src)).chain.toString(), first.chain.toString());
  assert.equal(f.created.length, 2);
  f.issue('req-1', cert(3), '2026-12-07T12:00:00Z');
  const second = await certs.credentials(pod, 'tls', 0, src);
  assert.equal(second.chain.toString(), cert(3));
  assert.notEqual(second.key.toString(), first.key.toString(), 'a new key for a new certificate');

  certs.forgetPod('pod-uid');
  await assert.rejects(certs.credentials(pod, 'tls', 0, src), /no credentials yet/);
});

test('a request the signer denies keeps the pod waiting with the reason; no request is made again', async () => {
  const f = fakeApi();
  const certs = new PodCertificates(f.api, 'n1', () => 0);
  await assert.rejects(certs.credentials(pod, 'tls', 0, src));
  f.pcrs.set('req-0', {
    metadata: { name: 'req-0' },
    status: { conditions: [{ type: 'Denied', status: 'True', reason: 'UnsupportedKeyType', message: 'use ED25519' }] },
  });
  await assert.rejects(
    certs.credentials(pod, 'tls', 0, src),
    /PodCertificateRequest req-0 was denied, reason="UnsupportedKeyType", message="use ED25519"/,
  );
  await assert.rejects(certs.credentials(pod, 'tls', 0, src), /was denied/);
  assert.equal(f.created.length, 1);
});
