import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { KubeApiError, KubeClient } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { type RunningApiServer, startApiServer } from '../main.js';

let dir: string;
let srv: RunningApiServer;
let client: KubeClient;
const pod = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i:1' }], ...extra },
});
const quiet = () => {};

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-as-'));
  srv = await startApiServer({
    certDir: path.join(dir, 'pki'),
    bindAddress: '127.0.0.1',
    securePort: 0,
    advertiseAddress: '',
    serviceClusterIpRange: '10.96.0.0/12',
    nodeNames: ['n1'],
    historySize: 50,
    bookmarkIntervalSec: 1,
    controllers: [],
    log: quiet,
  });
  client = new KubeClient(loadKubeconfig(srv.kubeconfigs['kubernetes-admin']!));
});

after(async () => {
  client.close();
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rawStatus = (
  method: string,
  p: string,
  body?: string,
  headers: Record<string, string> = {},
  auth = true,
): Promise<{ code: number; body: any; headers: IncomingHttpHeaders }> => {
  const a = loadKubeconfig(srv.kubeconfigs['kubernetes-admin']!);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: srv.port,
        method,
        path: p,
        ca: a.ca,
        ...(auth ? { cert: a.cert, key: a.key } : {}),
        headers,
      },
      (res) => {
        let t = '';
        res.on('data', (d) => (t += d));
        res.on('end', () =>
          resolve({ code: res.statusCode!, body: t.startsWith('{') ? JSON.parse(t) : t, headers: res.headers }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
};

test('HTTPS with the generated CA; client certificates and bearer tokens authenticate; anonymous is 401', async () => {
  const ca = fs.readFileSync(path.join(dir, 'pki', 'pki', 'ca.crt'), 'utf8');
  assert.match(ca, /BEGIN CERTIFICATE/);
  const nodeCfg = loadKubeconfig(srv.kubeconfigs['system:node:n1']!);
  assert.ok(nodeCfg.cert && nodeCfg.key);
  const nodeClient = new KubeClient(nodeCfg);
  assert.equal((await nodeClient.get('/api/v1/namespaces/default')).metadata.name, 'default');
  nodeClient.close();
  const tokenLine = fs
    .readFileSync(path.join(dir, 'pki', 'tokens.csv'), 'utf8')
    .split('\n')
    .find((l) => l.includes('kube-proxy'))!;
  const tokClient = new KubeClient({ server: srv.url, ca: nodeCfg.ca, token: tokenLine.split(',')[0] });
  assert.equal((await tokClient.get('/api/v1/namespaces')).kind, 'NamespaceList');
  tokClient.close();
  const anon = await rawStatus('GET', '/api/v1/pods', undefined, {}, false);
  assert.equal(anon.code, 401);
  assert.equal(anon.body.reason, 'Unauthorized');
  assert.equal((await rawStatus('GET', '/healthz', undefined, {}, false)).body, 'ok');
});

test('discovery and version', async () => {
  assert.deepEqual((await client.get('/api')).versions, ['v1']);
  const groups = (await client.get('/apis')).groups.map((g: any) => g.name);
  for (const g of ['apps', 'coordination.k8s.io', 'discovery.k8s.io']) assert.ok(groups.includes(g), g);
  const core = (await client.get('/api/v1')).resources.map((r: any) => r.name);
  for (const r of [
    'pods',
    'pods/status',
    'pods/binding',
    'nodes',
    'nodes/status',
    'services',
    'endpoints',
    'events',
    'configmaps',
    'secrets',
    'serviceaccounts',
    'namespaces',
  ])
    assert.ok(core.includes(r), r);
  // Aggregated discovery (what kubectl 1.37 asks for first): every group, its versions and resources in one document.
  const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
  const agg = await rawStatus('GET', '/apis', undefined, { Accept: accept });
  assert.equal(agg.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
  const apps = agg.body.items.find((g: { metadata: { name?: string } }) => g.metadata.name === 'apps');
  const deployments = apps.versions[0].resources.find((r: { resource: string }) => r.resource === 'deployments');
  assert.equal(deployments.scope, 'Namespaced');
  assert.deepEqual(
    deployments.subresources.map((x: { subresource: string; responseKind: { kind: string } }) => [
      x.subresource,
      x.responseKind.kind,
    ]),
    [
      ['status', 'Deployment'],
      ['scale', 'Scale'],
    ],
  );
  const legacy = await rawStatus('GET', '/api', undefined, { Accept: accept });
  assert.equal(legacy.body.items[0].versions[0].version, 'v1');
  assert.ok(legacy.body.items[0].versions[0].resources.some((r: { resource: string }) => r.resource === 'namespaces'));
  const v = await client.get('/version');
  // The release the agents are built against, so a tskube kubelet is never newer than its apiserver.
  assert.deepEqual(
    [v.major, v.minor, v.emulationMinor, v.minCompatibilityMinor, v.gitVersion],
    ['1', '37', '37', '36', 'v1.37.2-tskube'],
  );
});

test('errors are metav1.Status with the right code and reason', async () => {
  const cases: [string, string, string | undefined, Record<string, string>, number, string][] = [
    ['GET', '/api/v1/namespaces/default/pods/none', undefined, {}, 404, 'NotFound'],
    ['POST', '/api/v1/namespaces/default/pods', '{not json', { 'Content-Type': 'application/json' }, 400, 'BadRequest'],
    [
      'POST',
      '/api/v1/namespaces/default/pods',
      'kind: Pod\nmetadata: {name: [\n',
      { 'Content-Type': 'application/yaml' },
      400,
      'BadRequest',
    ],
    [
      'POST',
      '/api/v1/namespaces/default/pods',
      '- just\n- a list\n',
      { 'Content-Type': 'application/yaml' },
      400,
      'BadRequest',
    ],
    [
      'POST',
      '/api/v1/namespaces/default/pods',
      JSON.stringify({ kind: 'Service', apiVersion: 'v1', metadata: { name: 'x' } }),
      { 'Content-Type': 'application/json' },
      400,
      'BadRequest',
    ],
    [
      'POST',
      '/api/v1/namespaces/default/pods',
      JSON.stringify(pod('x')),
      { 'Content-Type': 'text/plain' },
      415,
      'UnsupportedMediaType',
    ],
    [
      'POST',
      '/api/v1/namespaces/default/pods',
      JSON.stringify({ metadata: { name: 'x' }, spec: {} }),
      { 'Content-Type': 'application/json' },
      422,
      'Invalid',
    ],
    ['GET', '/api/v1/pods?labelSelector=a%20in%20(', undefined, {}, 400, 'BadRequest'],
    ['PATCH', '/api/v1/namespaces/default', '{}', { 'Content-Type': 'application/xml' }, 415, 'UnsupportedMediaType'],
  ];
  for (const [m, p, b, h, code, reason] of cases) {
    const r = await rawStatus(m, p, b, h);
    assert.equal(r.code, code, `${m} ${p}`);
    assert.equal(r.body.kind, 'Status');
    assert.equal(r.body.reason, reason, `${m} ${p}`);
    assert.equal(r.body.code, code);
  }
  const big = await rawStatus(
    'POST',
    '/api/v1/namespaces/default/configmaps',
    JSON.stringify({ metadata: { name: 'big' }, data: { a: 'x'.repeat(3 * 1024 * 1024) } }),
    { 'Content-Type': 'application/json' },
  );
  assert.equal(big.code, 413);
  await client.create('/api/v1/namespaces/default/pods', pod('dup'));
  await assert.rejects(
    client.create('/api/v1/namespaces/default/pods', pod('dup')),
    (e: unknown) => e instanceof KubeApiError && e.code === 409 && e.reason === 'AlreadyExists',
  );
  // The server is still fine after all that.
  assert.equal((await client.get('/api/v1/namespaces/default/pods/dup')).metadata.name, 'dup');
});

test('YAML bodies, Table output and PATCH types over HTTP', async () => {
  const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fromyaml}\ndata: {k: v}\n';
  assert.equal(
    (await rawStatus('POST', '/api/v1/namespaces/default/configmaps', yaml, { 'Content-Type': 'application/yaml' }))
      .code,
    201,
  );
  await client.create('/api/v1/namespaces/default/pods', pod('tbl', { nodeName: 'n1' }));
  const t = await rawStatus('GET', '/api/v1/namespaces/default/pods', undefined, {
    Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  });
  assert.equal(t.body.kind, 'Table');
  const review = await rawStatus(
    'POST',
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    JSON.stringify({ spec: { nonResourceAttributes: { path: '/', verb: 'get' } } }),
    { 'Content-Type': 'application/json', Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
  );
  assert.equal(review.code, 406, 'a review has no Table');
  assert.deepEqual(t.body.columnDefinitions.map((c: any) => c.name).slice(0, 5), [
    'Name',
    'Ready',
    'Status',
    'Restarts',
    'Age',
  ]);
  const row = t.body.rows.find((r: any) => r.cells[0] === 'tbl');
  assert.deepEqual(row.cells.slice(1, 4), ['0/1', 'Pending', '0']);
  assert.equal(row.cells[6], 'n1');
  const p = await client.patch(
    '/api/v1/namespaces/default/pods/tbl/status',
    { status: { podIP: '10.0.0.9', phase: 'Running' } },
    'strategic',
  );
  assert.equal(p.status.podIP, '10.0.0.9');
  const j = await client.patch(
    '/api/v1/namespaces/default/pods/tbl',
    [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }],
    'json',
  );
  assert.deepEqual(j.metadata.labels, { a: 'b' });
});

test('watch streams events, sends bookmarks when asked, and honours timeoutSeconds', async () => {
  const list = await client.get('/api/v1/namespaces/default/pods');
  const seen: string[] = [];
  const t0 = Date.now();
  const watching = (async () => {
    for await (const ev of client.watch('/api/v1/namespaces/default/pods', {
      resourceVersion: list.metadata.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: 2,
    }))
      seen.push(`${ev.type}${ev.type === 'BOOKMARK' ? '' : ` ${ev.object.metadata.name}`}`);
  })();
  await new Promise((r) => setTimeout(r, 100));
  await client.create('/api/v1/namespaces/default/pods', pod('w1'));
  await client.delete('/api/v1/namespaces/default/pods/w1');
  await watching;
  const took = Date.now() - t0;
  assert.ok(took >= 1900 && took < 5000, `ended by timeoutSeconds (${took} ms)`);
  assert.deepEqual(
    seen.filter((s) => s !== 'BOOKMARK'),
    ['ADDED w1', 'DELETED w1'],
  );
  assert.ok(seen.includes('BOOKMARK'));
});

test('a watch from an expired resourceVersion gets an ERROR event with a 410 Expired Status', async () => {
  const old = (await client.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'old' } })).metadata
    .resourceVersion;
  for (let i = 0; i < 60; i++)
    await client.patch('/api/v1/namespaces/default/configmaps/old', { data: { i: String(i) } }, 'merge');
  const evs = [];
  for await (const ev of client.watch('/api/v1/namespaces/default/configmaps', { resourceVersion: old })) evs.push(ev);
  assert.equal(evs.length, 1);
  assert.equal(evs[0]!.type, 'ERROR');
  assert.equal(evs[0]!.object.code, 410);
  assert.equal(evs[0]!.object.reason, 'Expired');
});

test('the informer relists after 410 and ends up with the same state as the server', async () => {
  await client.create('/api/v1/namespaces/default/secrets', { metadata: { name: 's0' } });
  const first = new Informer(client, { path: '/api/v1/namespaces/default/secrets' });
  await first.start();
  await first.stop();
  assert.deepEqual([...first.cache.keys()], ['default/s0']);
  // While nobody watches: s0 goes, s1 comes, and enough other writes push that RV out of history.
  await client.delete('/api/v1/namespaces/default/secrets/s0');
  await client.create('/api/v1/namespaces/default/secrets', { metadata: { name: 's1' } });
  for (let i = 0; i < 60; i++)
    await client.patch('/api/v1/namespaces/default/configmaps/old', { data: { j: String(i) } }, 'merge');
  const adds: string[] = [];
  const dels: string[] = [];
  const inf = new Informer(client, {
    path: '/api/v1/namespaces/default/secrets',
    resume: { resourceVersion: first.resourceVersion, items: first.list() },
    onAdd: (o) => adds.push(o.metadata.name),
    onDelete: (o) => dels.push(o.metadata.name),
    backoffInitialMs: 20,
  });
  await inf.start();
  const end = Date.now() + 5000;
  while (inf.lists === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  await inf.stop();
  assert.equal(inf.lists, 1, 'one relist after the 410');
  assert.deepEqual([...inf.cache.keys()], ['default/s1']);
  assert.deepEqual(adds, ['s1']);
  assert.deepEqual(dels, ['s0'], 'the relist noticed s0 is gone');
});

test('the informer follows changes and reconnects after the watch ends', async () => {
  const seen: string[] = [];
  const inf = new Informer(client, {
    path: '/api/v1/namespaces/default/configmaps',
    fieldSelector: 'metadata.name=follow',
    minWatchSec: 1,
    maxWatchSec: 1,
    onAdd: (o) => seen.push(`add ${o.data?.v ?? ''}`),
    onUpdate: (o) => seen.push(`update ${o.data?.v}`),
    onDelete: () => seen.push('delete'),
  });
  await inf.start();
  await client.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'follow' }, data: { v: '1' } });
  await new Promise((r) => setTimeout(r, 1500)); // the first watch times out and a new one starts
  await client.patch('/api/v1/namespaces/default/configmaps/follow', { data: { v: '2' } }, 'merge');
  await client.delete('/api/v1/namespaces/default/configmaps/follow');
  const end = Date.now() + 5000;
  while (!seen.includes('delete') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  await inf.stop();
  assert.deepEqual(seen, ['add 1', 'update 2', 'delete']);
  assert.ok(inf.watches >= 2, 'reconnected after the server ended the watch');
  assert.equal(inf.lists, 1, 'no relist needed');
});

test('--anonymous-auth: the unauthenticated may discover, and get upstream 403s for everything else', async () => {
  const anonDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-anon-'));
  const s2 = await startApiServer({
    certDir: anonDir,
    bindAddress: '127.0.0.1',
    securePort: 0,
    advertiseAddress: '',
    serviceClusterIpRange: '10.96.0.0/12',
    nodeNames: [],
    anonymousAuth: true,
    controllers: [],
    log: quiet,
  });
  const ca = fs.readFileSync(path.join(anonDir, 'pki', 'ca.crt'));
  const get = (p: string, method = 'GET'): Promise<{ code: number; body: any }> =>
    new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port: s2.port, method, path: p, ca }, (res) => {
        let t = '';
        res.on('data', (d) => (t += d));
        res.on('end', () => resolve({ code: res.statusCode!, body: JSON.parse(t) }));
      });
      req.on('error', reject);
      req.end();
    });
  try {
    assert.equal((await get('/version')).code, 200);
    assert.equal((await get('/api/v1')).code, 200);
    assert.equal((await get('/apis/apps/v1')).code, 200);
    const list = await get('/api/v1/namespaces/default/pods');
    assert.equal(list.code, 403);
    assert.equal(list.body.reason, 'Forbidden');
    assert.equal(
      list.body.message,
      'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    const nodes = await get('/api/v1/nodes/n1', 'DELETE');
    assert.equal(
      nodes.body.message,
      'nodes "n1" is forbidden: User "system:anonymous" cannot delete resource "nodes" in API group "" at the cluster scope',
    );
    const deploy = await get('/apis/apps/v1/namespaces/default/deployments?watch=1');
    assert.equal(
      deploy.body.message,
      'deployments.apps is forbidden: User "system:anonymous" cannot watch resource "deployments" in API group "apps" in the namespace "default"',
    );
    assert.equal((await get('/metrics')).code, 403);
    // A client certificate from another CA is a 401, not anonymous (upstream: anonymous only when nothing failed).
    const forged = path.join(anonDir, 'forged');
    fs.mkdirSync(forged);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/O=system:masters/CN=kubernetes-admin',
        '-keyout',
        path.join(forged, 'k.pem'),
        '-out',
        path.join(forged, 'c.pem'),
      ],
      { stdio: 'ignore' },
    );
    const code = await new Promise<number>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: s2.port,
          path: '/api/v1/secrets',
          ca,
          cert: fs.readFileSync(path.join(forged, 'c.pem')),
          key: fs.readFileSync(path.join(forged, 'k.pem')),
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(code, 401);
  } finally {
    await s2.stop();
    fs.rmSync(anonDir, { recursive: true, force: true });
  }
});
