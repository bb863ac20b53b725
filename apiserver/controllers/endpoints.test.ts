import assert from 'node:assert/strict';
import { test } from 'node:test';

import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { Store } from '../storage/store.js';
import { EndpointsController, EndpointSliceController } from './endpoint-controllers.js';
import { desiredSlices, desiredSubsets } from './endpoints-model.js';

const pod = (name: string, ip: string | undefined, ready: boolean, extra: Record<string, any> = {}) => ({
  metadata: { name, labels: { app: 'web' }, ...(extra.metadata ?? {}) },
  spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i:1', ports: [{ name: 'http', containerPort: 8080 }] }] },
  status: {
    phase: 'Running',
    ...(ip ? { podIP: ip } : {}),
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  },
});

async function createPod(client: LocalClient, p: ReturnType<typeof pod>): Promise<void> {
  const created = await client.create('/api/v1/namespaces/default/pods', { metadata: p.metadata, spec: p.spec });
  await client.patch(`/api/v1/namespaces/default/pods/${p.metadata.name}/status`, {
    metadata: { uid: created.metadata.uid },
    status: p.status,
  });
}

const slices = async (client: LocalClient) =>
  (
    await client.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      labelSelector: 'kubernetes.io/service-name=web',
    })
  ).items;

test('EndpointSlices and Endpoints follow the selected pods: addresses, conditions, nodeName, targetRef, named ports', async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const log = memoryLogger();
  const svc = await client.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'web', labels: { tier: 'front' } },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
  });
  await createPod(client, pod('a', '10.244.0.2', true));
  await createPod(client, pod('b', '10.244.0.3', false));
  await createPod(client, pod('no-ip', undefined, false));
  await client.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'other', labels: { app: 'db' } },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  const sc = new EndpointSliceController(client, log);
  const ec = new EndpointsController(client, log);
  await sc.start();
  await ec.start();
  try {
    const [s] = await waitFor(
      async () => ((await slices(client)).length === 1 ? slices(client) : undefined),
      3000,
      20,
      'slice',
    );
    assert.equal(s.addressType, 'IPv4');
    assert.deepEqual(s.metadata.labels, {
      tier: 'front',
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    assert.match(s.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(s.metadata.ownerReferences, [
      {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'web',
        uid: svc.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.ok(Date.parse(s.metadata.annotations['endpoints.kubernetes.io/last-change-trigger-time']));
    assert.deepEqual(s.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    assert.deepEqual(
      s.endpoints.map((e: any) => [e.addresses[0], e.conditions, e.nodeName, e.targetRef.name]),
      [
        ['10.244.0.2', { ready: true, serving: true, terminating: false }, 'n1', 'a'],
        ['10.244.0.3', { ready: false, serving: false, terminating: false }, 'n1', 'b'],
      ],
    );
    const ep = await waitFor(
      () => client.get('/api/v1/namespaces/default/endpoints/web').catch(() => undefined),
      3000,
      20,
      'endpoints',
    );
    assert.deepEqual(ep.subsets, [
      {
        addresses: [
          {
            ip: '10.244.0.2',
            nodeName: 'n1',
            targetRef: { kind: 'Pod', namespace: 'default', name: 'a', uid: s.endpoints[0].targetRef.uid },
          },
        ],
        notReadyAddresses: [
          {
            ip: '10.244.0.3',
            nodeName: 'n1',
            targetRef: { kind: 'Pod', namespace: 'default', name: 'b', uid: s.endpoints[1].targetRef.uid },
          },
        ],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
    ]);
    // b becomes ready: the same slice is updated in place.
    await client.patch('/api/v1/namespaces/default/pods/b/status', {
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const [s2] = await waitFor(
      async () => {
        const l = await slices(client);
        return l[0]?.endpoints.every((e: any) => e.conditions.ready) ? l : undefined;
      },
      3000,
      20,
      'b ready in the slice',
    );
    assert.equal(s2.metadata.name, s.metadata.name);
    // a is being deleted (bound pods are only marked): terminating, serving, not ready; gone from Endpoints.
    await client.delete('/api/v1/namespaces/default/pods/a');
    await waitFor(
      async () =>
        (await slices(client))[0]?.endpoints.find((e: any) => e.targetRef.name === 'a')?.conditions.terminating ===
        true,
      3000,
      20,
      'a terminating',
    );
    assert.deepEqual((await slices(client))[0].endpoints.find((e: any) => e.targetRef.name === 'a').conditions, {
      ready: false,
      serving: true,
      terminating: true,
    });
    await waitFor(
      async () => (await client.get('/api/v1/namespaces/default/endpoints/web')).subsets[0].addresses.length === 1,
      3000,
      20,
      'a gone from Endpoints',
    );
    // The Service goes: so do its slices and Endpoints.
    await client.delete('/api/v1/namespaces/default/services/web');
    await waitFor(async () => (await slices(client)).length === 0, 3000, 20, 'slices deleted');
    await waitFor(
      () =>
        client.get('/api/v1/namespaces/default/endpoints/web').then(
          () => false,
          () => true,
        ),
      3000,
      20,
      'endpoints deleted',
    );
  } finally {
    await sc.stop();
    await ec.stop();
  }
});

test("a headless Service's slice carries service.kubernetes.io/headless; a relabelled pod moves between Services", async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  await client.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'web' },
    spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ port: 80 }] },
  });
  await client.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'db' },
    spec: { selector: { app: 'db' }, ports: [{ port: 5432 }] },
  });
  await createPod(client, pod('a', '10.244.0.2', true));
  const sc = new EndpointSliceController(client, memoryLogger());
  await sc.start();
  const of = async (svc: string) =>
    (
      await client.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        labelSelector: `kubernetes.io/service-name=${svc}`,
      })
    ).items;
  try {
    const [s] = await waitFor(
      async () => ((await of('web'))[0]?.endpoints?.length === 1 ? of('web') : undefined),
      3000,
      20,
      'headless slice',
    );
    assert.equal(s.metadata.labels['service.kubernetes.io/headless'], '');
    assert.equal((await of('db'))[0]?.metadata.labels['service.kubernetes.io/headless'], undefined);
    await client.patch('/api/v1/namespaces/default/pods/a', { metadata: { labels: { app: 'db' } } }, 'merge');
    await waitFor(
      async () => (await of('web'))[0]?.endpoints?.length === 0 && (await of('db'))[0]?.endpoints?.length === 1,
      3000,
      20,
      'pod a moved from web to db',
    );
  } finally {
    await sc.stop();
  }
});

test('slices hold at most 100 endpoints; pods with different resolved ports get different slices; no endpoints is one empty slice', () => {
  const svc = {
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { app: 'web' }, ports: [{ name: '', port: 80, targetPort: 'http', protocol: 'TCP' }] },
  };
  const pods = Array.from({ length: 250 }, (_, i) => ({
    ...pod(`p${String(i).padStart(3, '0')}`, `10.1.${Math.floor(i / 200)}.${(i % 200) + 1}`, true),
    metadata: { name: `p${String(i).padStart(3, '0')}`, namespace: 'default', uid: `u${i}`, labels: { app: 'web' } },
  }));
  const out = desiredSlices(svc, pods);
  assert.deepEqual(
    out.map((s) => s.endpoints.length),
    [100, 100, 50],
  );
  const odd = {
    ...pods[0]!,
    metadata: { ...pods[0]!.metadata, name: 'zz' },
    spec: { ...pods[0]!.spec, containers: [{ name: 'c', image: 'i', ports: [{ name: 'http', containerPort: 9090 }] }] },
  };
  const mixed = desiredSlices(svc, [pods[1]!, odd]);
  assert.deepEqual(
    mixed.map((s) => s.ports[0]!.port),
    [8080, 9090],
  );
  assert.deepEqual(desiredSlices(svc, []), [{ addressType: 'IPv4', ports: [], endpoints: [] }]);
});

test("a dual-stack Service gets IPv4 and IPv6 slices from the pods' podIPs; a pod without an IPv6 address is only in the IPv4 one; Endpoints follow the primary family", async () => {
  const api = new Api(new Store(), '10.96.0.0/12,fd00:10:96::/108');
  const client = new LocalClient(api);
  await client.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'web' },
    spec: {
      ipFamilyPolicy: 'RequireDualStack',
      ipFamilies: ['IPv6', 'IPv4'],
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    },
  });
  const dual = pod('a', '10.244.0.2', true);
  (dual.status as Record<string, unknown>).podIPs = [{ ip: '10.244.0.2' }, { ip: 'fd00:10:244::2' }];
  await createPod(client, dual);
  await createPod(client, pod('b', '10.244.0.3', true));
  const sc = new EndpointSliceController(client, memoryLogger());
  await sc.start();
  try {
    const byType = async () =>
      Object.fromEntries(
        (await slices(client)).map((s: any) => [
          s.addressType,
          s.endpoints.map((e: any) => `${e.targetRef.name} ${e.addresses[0]}`),
        ]),
      );
    await waitFor(async () => Object.keys(await byType()).length === 2, 3000, 20, 'two slices');
    assert.deepEqual(await byType(), { IPv4: ['a 10.244.0.2', 'b 10.244.0.3'], IPv6: ['a fd00:10:244::2'] });
    // Back to single stack: the IPv6 slice goes; the IPv4 one is kept as it is.
    const v4 = (await slices(client)).find((s: any) => s.addressType === 'IPv4');
    await client.patch(
      '/api/v1/namespaces/default/services/web',
      { spec: { ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv6'] } },
      'merge',
    );
    await waitFor(
      async () => JSON.stringify(Object.keys(await byType())) === '["IPv6"]',
      3000,
      20,
      'only the IPv6 slice left',
    );
    assert.ok(!(await slices(client)).some((s: any) => s.metadata.name === v4.metadata.name));
  } finally {
    await sc.stop();
  }
  const svc = {
    metadata: { name: 'web', namespace: 'default' },
    spec: { ipFamilies: ['IPv6', 'IPv4'], selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
  };
  const both = { ...dual, metadata: { ...dual.metadata, namespace: 'default', uid: 'u1' } };
  assert.deepEqual(
    desiredSubsets(svc, [both]).map((s: any) => s.addresses.map((a: any) => a.ip)),
    [['fd00:10:244::2']],
    'Endpoints carry the primary family',
  );
});
