// clusterTrustBundle projected volume sources read through the dev apiserver with the node's own credentials.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { decodePem, encodePem } from '../../kube/pem.js';
import { useTestApiServer } from '../../testing/apiserver.js';
import { ApiObjects } from './api-objects.js';
import { VolumeError, volumeFiles } from './projections.js';

const t = useTestApiServer('n1');
const cert = (n: number): string => encodePem({ type: 'CERTIFICATE', bytes: Buffer.alloc(40, n) });
const ctx = { podIP: '10.0.0.2', hostIP: '10.0.0.1' };

test('a bundle by name, a signer’s by labels, optional sources that match nothing, and the errors of required ones', async () => {
  for (const [name, labels, n] of [
    ['example.com:one:a', { env: 'prod' }, 1],
    ['example.com:one:b', { env: 'dev' }, 2],
  ] as const)
    await t.api.admin.create('/apis/certificates.k8s.io/v1/clustertrustbundles', {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'ClusterTrustBundle',
      metadata: { name, labels },
      spec: { signerName: 'example.com/one', trustBundle: cert(n) },
    });
  // The apiserver holds a signer's bundles to its name prefix, as upstream.
  await assert.rejects(
    t.api.admin.create('/apis/certificates.k8s.io/v1/clustertrustbundles', {
      metadata: { name: 'example.com:two:x' },
      spec: { signerName: 'example.com/one', trustBundle: cert(3) },
    }),
    /must be named with prefix example.com:one:/,
  );
  const pod = (): Pod => ({
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  const files = (sources: object[]) =>
    volumeFiles(pod(), { name: 'v', projected: { sources } }, new ApiObjects(t.node), ctx);
  const firstBytes = (b: Buffer | undefined) => decodePem(b!.toString()).map((x) => x.bytes[0]);

  const out = await files([
    { clusterTrustBundle: { name: 'example.com:one:b', path: 'by-name.pem' } },
    { clusterTrustBundle: { signerName: 'example.com/one', labelSelector: {}, path: 'all.pem' } },
    {
      clusterTrustBundle: {
        signerName: 'example.com/one',
        labelSelector: { matchLabels: { env: 'prod' } },
        path: 'prod.pem',
      },
    },
    { clusterTrustBundle: { name: 'missing', optional: true, path: 'none.pem' } },
    { clusterTrustBundle: { signerName: 'example.com/one', optional: true, path: 'no-selector.pem' } },
  ]);
  assert.deepEqual(firstBytes(out.get('by-name.pem')?.data), [2]);
  assert.deepEqual(firstBytes(out.get('all.pem')?.data).sort(), [1, 2]);
  assert.deepEqual(firstBytes(out.get('prod.pem')?.data), [1]);
  assert.equal(out.get('none.pem')?.data.length, 0);
  assert.equal(out.get('no-selector.pem')?.data.length, 0);

  await assert.rejects(files([{ clusterTrustBundle: { name: 'missing', path: 'x.pem' } }]), VolumeError);
  await assert.rejects(
    files([{ clusterTrustBundle: { signerName: 'example.com/none', labelSelector: {}, path: 'x.pem' } }]),
    /matched zero ClusterTrustBundles/,
  );
});
