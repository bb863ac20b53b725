// Server-side dry run writes nothing, query
// parameters are parsed as upstream (ParseBool, ParseInt, resourceVersionMatch,
// 504 ahead of the store), watch headers go out at once, legacy watch paths.
import assert from 'node:assert/strict';
import https from 'node:https';
import { test } from 'node:test';

import { type KObj, KubeApiError } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';

const s = useTestApiServer('n1', { authorizationModes: ['Node', 'RBAC'], admissionPlugins: ['NodeRestriction'] });

const raw = async (
  method: string,
  path: string,
  o: { body?: unknown; contentType?: string; headersOnly?: boolean } = {},
) => {
  const r = await rawRequest(s.api, method, path, o);
  return { code: r.code, body: r.text, req: r.req };
};

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_r, rej) => setTimeout(() => rej(new Error(`${what}: nothing within ${ms} ms`)), ms)),
  ]);

test('dryRun=All: create, update, patch and delete answer as the write would, store nothing, consume no resourceVersion, send no event', async () => {
  const events: string[] = [];
  const ac = new AbortController();
  const watching = (async () => {
    for await (const e of s.api.admin.watch('/api/v1/namespaces/default/configmaps', {}, ac.signal))
      events.push(`${e.type} ${e.object.metadata?.name}`);
  })().catch(() => undefined);
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'live' }, data: { a: '1' } });
  const rvBefore = s.api.srv.api.store.resourceVersion;
  const created = JSON.parse(
    (
      await raw('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', {
        body: { metadata: { name: 'dry' }, data: { a: '1' } },
      })
    ).body,
  ) as KObj;
  assert.equal(created.metadata.name, 'dry');
  assert.match(created.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.equal(created.metadata.resourceVersion, undefined);
  await assert.rejects(
    s.api.admin.get('/api/v1/namespaces/default/configmaps/dry'),
    (e: KubeApiError) => e.code === 404,
  );
  const patched = JSON.parse(
    (
      await raw('PATCH', '/api/v1/namespaces/default/configmaps/live?dryRun=All', {
        body: { data: { a: '2' } },
        contentType: 'application/merge-patch+json',
      })
    ).body,
  ) as KObj;
  assert.equal(patched.data.a, '2');
  const put = JSON.parse(
    (
      await raw('PUT', '/api/v1/namespaces/default/configmaps/live?dryRun=All', {
        body: { metadata: { name: 'live' }, data: { a: '3' } },
      })
    ).body,
  ) as KObj;
  assert.equal(put.data.a, '3');
  const del = await raw('DELETE', '/api/v1/namespaces/default/configmaps/live', {
    body: { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] },
  });
  assert.equal(del.code, 200);
  // A Service's dry run shows a ClusterIP but keeps none.
  const svc = JSON.parse(
    (
      await raw('POST', '/api/v1/namespaces/default/services?dryRun=All', {
        body: { metadata: { name: 'dry-svc' }, spec: { ports: [{ port: 80 }] } },
      })
    ).body,
  ) as KObj;
  assert.match(svc.spec.clusterIP, /^10\.9[6-9]\./);
  const real = await s.api.admin.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'real-svc' },
    spec: { clusterIP: svc.spec.clusterIP, ports: [{ port: 80 }] },
  });
  assert.equal(real.spec.clusterIP, svc.spec.clusterIP, 'the dry-run IP is still free');
  await s.api.admin.delete('/api/v1/namespaces/default/services/real-svc');
  assert.equal(
    s.api.srv.api.store.resourceVersion,
    rvBefore + 2,
    'only the real Service create and delete consumed resourceVersions',
  );
  assert.equal((await s.api.admin.get('/api/v1/namespaces/default/configmaps/live')).data.a, '1');
  const unknown = await raw('POST', '/api/v1/namespaces/default/configmaps?dryRun=Some', {
    body: { metadata: { name: 'x' } },
  });
  assert.equal(unknown.code, 400);
  assert.equal(JSON.parse(unknown.body).message, 'dryRun: Unsupported value: "Some": supported values: "All"');
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'marker' } });
  await new Promise((r) => setTimeout(r, 100));
  ac.abort();
  await watching;
  assert.deepEqual(
    events.filter((e) => !e.endsWith('kube-root-ca.crt')),
    ['ADDED live', 'ADDED marker'],
  );
});

test('booleans parse as strconv.ParseBool (Python sends watch=True), integers strictly; headers of a quiet watch arrive at once', async () => {
  const w = await within(
    raw('GET', '/api/v1/namespaces/kube-public/secrets?watch=True&allowWatchBookmarks=True&timeoutSeconds=1'),
    5000,
    'watch=True',
  );
  assert.equal(w.code, 200);
  assert.equal(w.body, '', 'a watch stream (nothing happened), not a list');
  const quiet = await within(
    raw('GET', '/api/v1/namespaces/kube-public/secrets?watch=1&timeoutSeconds=30', { headersOnly: true }),
    5000,
    'watch headers',
  );
  assert.equal(quiet.code, 200);
  quiet.req.destroy();
  for (const [q, msg] of [
    ['watch=yes', 'watch: strconv.ParseBool: parsing "yes": invalid syntax'],
    ['watch=1&timeoutSeconds=abc', 'timeoutSeconds: strconv.ParseInt: parsing "abc": invalid syntax'],
    ['limit=ten', 'limit: strconv.ParseInt: parsing "ten": invalid syntax'],
    ['watch=1&resourceVersion=garbage', 'invalid resource version: "garbage"'],
  ]) {
    const r = await raw('GET', `/api/v1/configmaps?${q}`);
    assert.equal(r.code, 400, q);
    assert.equal(JSON.parse(r.body).message, msg);
  }
});

test('resourceVersionMatch as ValidateListOptions; Exact lists the past; a resourceVersion ahead of the store is 504 after a wait', async () => {
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'v1' } });
  const rv = Number((await s.api.admin.get('/api/v1/namespaces/default/configmaps')).metadata.resourceVersion);
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'v2' } });
  const past = await s.api.admin.get('/api/v1/namespaces/default/configmaps', {
    resourceVersion: String(rv),
    resourceVersionMatch: 'Exact',
  });
  assert.equal(past.metadata.resourceVersion, String(rv));
  assert.ok(
    past.items.some((o: KObj) => o.metadata.name === 'v1') && !past.items.some((o: KObj) => o.metadata.name === 'v2'),
  );
  const bad = await raw('GET', '/api/v1/configmaps?resourceVersionMatch=Exact');
  assert.equal(bad.code, 422);
  assert.equal(
    JSON.parse(bad.body).message,
    'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
  );
  const ahead = s.api.srv.api.store.resourceVersion + 1000;
  const far = await raw('GET', `/api/v1/configmaps?resourceVersion=${ahead}`);
  assert.equal(far.code, 504);
  assert.match(
    JSON.parse(far.body).message,
    new RegExp(`^Timeout: Too large resource version: ${ahead}, current: \\d+$`),
  );
  const farWatch = await raw('GET', `/api/v1/configmaps?watch=1&resourceVersion=${ahead}`);
  assert.equal(farWatch.code, 504);
});

test('legacy /watch/ paths stream like ?watch=1, for a collection and for one object', async () => {
  const ac = new AbortController();
  const got: string[] = [];
  const auth = loadKubeconfig(s.api.srv.kubeconfigs['kubernetes-admin']!);
  const stream = (path: string) =>
    new Promise<void>((resolve) => {
      const req = https.request(
        `${s.api.srv.url}${path}`,
        { cert: auth.cert, key: auth.key, ca: auth.ca, signal: ac.signal },
        (res) => {
          got.push(`${path} ${res.statusCode}`);
          res.on('data', (c: Buffer) => {
            for (const line of c.toString().split('\n').filter(Boolean))
              got.push(`${path} ${JSON.parse(line).type} ${JSON.parse(line).object.metadata.name}`);
          });
          res.on('close', () => resolve());
          resolve();
        },
      );
      req.on('error', () => resolve());
      req.end();
    });
  await stream('/api/v1/watch/namespaces/default/configmaps');
  await stream('/api/v1/watch/namespaces/default/configmaps/legacy-one');
  await stream('/apis/apps/v1/watch/deployments');
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'legacy-one' } });
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'legacy-two' } });
  const { waitFor } = await import('../../testing/wait.js');
  await waitFor(
    () => got.includes('/api/v1/watch/namespaces/default/configmaps ADDED legacy-two'),
    5000,
    20,
    'legacy collection watch',
  );
  ac.abort();
  assert.ok(got.includes('/api/v1/watch/namespaces/default/configmaps/legacy-one ADDED legacy-one'), got.join('\n'));
  assert.ok(
    !got.includes('/api/v1/watch/namespaces/default/configmaps/legacy-one ADDED legacy-two'),
    'the named watch sees only its object',
  );
  assert.ok(got.includes('/apis/apps/v1/watch/deployments 200'));
});

test('a node may read only its own Lease and list pods only with its spec.nodeName selector', async () => {
  await s.node.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
    metadata: { name: 'n1' },
    spec: { holderIdentity: 'n1' },
  });
  await s.node.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1');
  await s.api.admin.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
    metadata: { name: 'other' },
    spec: {},
  });
  await assert.rejects(
    s.node.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/other'),
    (e: KubeApiError) => e.code === 403,
  );
  await assert.rejects(
    s.node.get('/api/v1/pods'),
    (e: KubeApiError) =>
      e.code === 403 && /can only list\/watch pods with spec.nodeName field selector/.test(e.message),
  );
  await s.node.get('/api/v1/pods', { fieldSelector: 'spec.nodeName=n1' });
  await assert.rejects(
    s.node.get('/api/v1/pods', { fieldSelector: 'spec.nodeName=n2' }),
    (e: KubeApiError) => e.code === 403,
  );
});

test('a node keeps its own CSINode, reads CSIDrivers and lists only its PodCertificateRequests (as upstream kubelets do)', async () => {
  const csinodes = '/apis/storage.k8s.io/v1/csinodes';
  await s.node.create(csinodes, { metadata: { name: 'n1' }, spec: { drivers: [] } });
  await s.node.patch(`${csinodes}/n1`, {
    metadata: { annotations: { 'storage.alpha.kubernetes.io/migrated-plugins': '' } },
  });
  await assert.rejects(
    s.node.create(csinodes, { metadata: { name: 'n2' }, spec: { drivers: [] } }),
    (e: KubeApiError) =>
      e.code === 403 && /can only access CSINode with the same name as the requesting node/.test(e.message),
  );
  assert.deepEqual((await s.node.get('/apis/storage.k8s.io/v1/csidrivers')).items, []);
  const pcrs = '/apis/certificates.k8s.io/v1/podcertificaterequests';
  await s.node.get(pcrs, { fieldSelector: 'spec.nodeName=n1' });
  await assert.rejects(
    s.node.get(pcrs),
    (e: KubeApiError) =>
      e.code === 403 && /can only list\/watch podcertificaterequests with nodeName field selector/.test(e.message),
  );
  assert.deepEqual((await s.api.admin.get('/apis/networking.k8s.io/v1/servicecidrs')).kind, 'ServiceCIDRList');
});

test('the default ServiceCIDR holds the service range and is Ready, as kube-apiserver makes it', async () => {
  const c = await s.api.admin.get('/apis/networking.k8s.io/v1/servicecidrs/kubernetes');
  assert.deepEqual(c.spec.cidrs, ['10.96.0.0/12']);
  assert.deepEqual(
    c.status.conditions.map((x: { type: string; status: string; message: string }) => [x.type, x.status, x.message]),
    [['Ready', 'True', 'Kubernetes default Service CIDR is ready']],
  );
});

test('PodTemplates, VolumeAttachments (with status) and the DRA kinds are stored and served', async () => {
  const a = s.api.admin;
  await a.create('/api/v1/namespaces/default/podtemplates', {
    metadata: { name: 'pt', labels: { t: '1' } },
    template: { spec: { containers: [{ name: 'c', image: 'x' }] } },
  });
  assert.equal((await a.get('/api/v1/namespaces/default/podtemplates', { labelSelector: 't=1' })).items.length, 1);
  const va = '/apis/storage.k8s.io/v1/volumeattachments';
  await a.create(va, {
    metadata: { name: 'va' },
    spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv' } },
  });
  const st = await a.patch(`${va}/va/status`, { status: { attached: true } }, 'merge');
  assert.equal(st.status.attached, true);
  await a.create('/apis/resource.k8s.io/v1/deviceclasses', { metadata: { name: 'gpu' }, spec: {} });
  await a.create('/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates', {
    metadata: { name: 'rct' },
    spec: { spec: { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'gpu' } }] } } },
  });
  await a.create('/apis/resource.k8s.io/v1/namespaces/default/resourceclaims', {
    metadata: { name: 'rc' },
    spec: { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'gpu' } }] } },
  });
  await a.create('/apis/resource.k8s.io/v1/resourceslices', {
    metadata: { name: 'rs' },
    spec: { driver: 'gpu.example.com', nodeName: 'n1', pool: { name: 'p', generation: 1, resourceSliceCount: 1 } },
  });
  const slices = await a.get('/apis/resource.k8s.io/v1/resourceslices', { fieldSelector: 'spec.nodeName=n1' });
  assert.deepEqual(
    slices.items.map((x: KObj) => x.metadata.name),
    ['rs'],
  );
});

test("a status write takes the request's labels and annotations, as upstream's status strategies", async () => {
  const a = s.api.admin;
  await a.create('/apis/batch/v1/namespaces/default/jobs', {
    metadata: { name: 'st' },
    spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
  });
  const cond = { type: 'StatusUpdate', status: 'True', lastTransitionTime: '2026-12-07T10:00:00Z' };
  const p = await a.patch(
    '/apis/batch/v1/namespaces/default/jobs/st/status',
    { metadata: { annotations: { patchedstatus: 'true' } }, spec: { suspend: false }, status: { conditions: [cond] } },
    'merge',
  );
  assert.deepEqual(p.metadata.annotations, { patchedstatus: 'true' });
  assert.deepEqual(p.status.conditions, [cond]);
  assert.equal(p.spec.suspend, true, 'the spec is not written through status');
});
