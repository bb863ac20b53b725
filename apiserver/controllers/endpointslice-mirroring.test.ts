import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { EndpointSliceMirroringController, mirroredSlices, shouldMirror } from './endpointslice-mirroring.js';

test('mirrored slices: one per subset and family, not-ready addresses not ready; only selectorless Services', () => {
  const ep = {
    metadata: { name: 'ext' },
    subsets: [
      {
        ports: [{ name: 'http', port: 80 }],
        addresses: [{ ip: '10.1.2.3', hostname: 'a' }, { ip: 'fd00::1' }],
        notReadyAddresses: [{ ip: '10.1.2.4' }],
      },
    ],
  };
  assert.deepEqual(mirroredSlices(ep), [
    {
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.1.2.3'], conditions: { ready: true }, hostname: 'a' },
        { addresses: ['10.1.2.4'], conditions: { ready: false } },
      ],
    },
    {
      addressType: 'IPv6',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      endpoints: [{ addresses: ['fd00::1'], conditions: { ready: true } }],
    },
  ]);
  assert.equal(shouldMirror({ spec: {} }, ep), true);
  assert.equal(shouldMirror({ spec: { selector: { app: 'x' } } }, ep), false);
  assert.equal(shouldMirror(undefined, ep), false);
  assert.equal(
    shouldMirror({ spec: {} }, { ...ep, metadata: { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } } }),
    false,
  );
});

test('custom Endpoints of a selectorless Service are mirrored through create, update and delete', async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const mc = new EndpointSliceMirroringController(client, memoryLogger());
  await mc.start();
  const slices = async (): Promise<KObj[]> =>
    (
      await client.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        labelSelector: 'kubernetes.io/service-name=ext',
      })
    ).items as KObj[];
  try {
    await client.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'ext' },
      spec: { ports: [{ port: 80 }] },
    });
    const eps = '/api/v1/namespaces/default/endpoints';
    await client.create(eps, {
      metadata: { name: 'ext' },
      subsets: [{ ports: [{ port: 80 }], addresses: [{ ip: '10.1.2.3' }] }],
    });
    await waitFor(async () => (await slices()).length === 1, 3000, 20, 'mirrored');
    const [s] = await slices();
    assert.deepEqual(s!.endpoints, [{ addresses: ['10.1.2.3'], conditions: { ready: true } }]);
    assert.equal(
      s!.metadata.labels['endpointslice.kubernetes.io/managed-by'],
      'endpointslicemirroring-controller.k8s.io',
    );
    assert.equal(s!.metadata.ownerReferences[0].kind, 'Endpoints');

    await client.patch(
      `${eps}/ext`,
      { subsets: [{ ports: [{ port: 80 }], addresses: [{ ip: '10.2.3.4' }] }] },
      'merge',
    );
    await waitFor(
      async () => (await slices()).map((x) => x.endpoints[0].addresses[0]).join() === '10.2.3.4',
      3000,
      20,
      'updated',
    );
    await client.delete(`${eps}/ext`);
    await waitFor(async () => (await slices()).length === 0, 3000, 20, 'removed');
  } finally {
    await mc.stop();
  }
});
