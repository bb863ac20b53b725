import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';
import { nodeTarget, podTarget, serviceTarget, splitSchemeNamePort } from './resource-proxy.js';

const s = useTestApiServer('n1');

test('proxy names split as Go SplitSchemeNamePort does', () => {
  assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
  assert.deepEqual(splitSchemeNamePort('web:8080'), { scheme: '', name: 'web', port: '8080' });
  assert.deepEqual(splitSchemeNamePort('https:web:443'), { scheme: 'https', name: 'web', port: '443' });
  assert.equal(splitSchemeNamePort('ftp:web:21'), undefined);
  assert.equal(splitSchemeNamePort(':80'), undefined);
  assert.equal(splitSchemeNamePort('a:b:c:d'), undefined);
});

test('a pod is proxied at its IP and first container port; a loopback or missing IP is not allowed', () => {
  const pod = {
    metadata: { name: 'web' },
    spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: 8080 }, { containerPort: 9090 }] }] },
    status: { podIP: '10.244.1.5' },
  };
  assert.deepEqual(podTarget(pod, '', ''), { scheme: 'http', host: '10.244.1.5', port: 8080 });
  assert.deepEqual(podTarget(pod, 'https', '443'), { scheme: 'https', host: '10.244.1.5', port: 443 });
  assert.throws(() => podTarget({ ...pod, status: {} }, '', ''), /address not allowed/);
  assert.throws(() => podTarget({ ...pod, status: { podIP: '127.0.0.1' } }, '', ''), /address not allowed/);
});

test("a node is proxied to its kubelet with the apiserver's client certificate unless another port is named", () => {
  const node = {
    status: {
      addresses: [
        { type: 'Hostname', address: 'vm-2' },
        { type: 'InternalIP', address: '192.0.2.2' },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    },
  };
  assert.deepEqual(nodeTarget(node, '', ''), { scheme: 'https', host: '192.0.2.2', port: 10250, kubeletCert: true });
  assert.deepEqual(nodeTarget(node, '', '9100'), { scheme: 'http', host: '192.0.2.2', port: 9100 });
});

test("a Service is proxied to a ready pod endpoint of the port named or numbered; none is upstream's 503", () => {
  const svc = { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } };
  const slices: EndpointSlice[] = [
    {
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080 }],
      endpoints: [
        { addresses: ['10.244.1.5'], conditions: { ready: false }, targetRef: { kind: 'Pod' } },
        { addresses: ['10.244.1.6'], conditions: { ready: true }, targetRef: { kind: 'Pod' } },
      ],
    },
  ];
  assert.deepEqual(
    serviceTarget(svc, slices, '', '80', () => 0),
    { scheme: 'http', host: '10.244.1.6', port: 8080 },
  );
  assert.deepEqual(
    serviceTarget(svc, slices, '', 'http', () => 0),
    { scheme: 'http', host: '10.244.1.6', port: 8080 },
  );
  assert.throws(() => serviceTarget(svc, slices, '', '81'), /no service port 81 found for service "web"/);
  assert.throws(() => serviceTarget(svc, [], '', ''), /no endpoints available for service "web"/);
});

test('GET and POST through nodes/proxy reach the named port with path, query and body; a refused dial is a 503 Status', async () => {
  const seen: string[] = [];
  const backend = http.createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body} auth=${req.headers.authorization ?? 'none'}`);
      res.writeHead(201, { 'X-Backend': 'yes' });
      res.end('hello');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
  const port = (backend.address() as AddressInfo).port;
  try {
    await s.api.admin.create('/api/v1/nodes', { metadata: { name: 'px' } });
    await s.api.admin.patch(
      '/api/v1/nodes/px/status',
      { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] } },
      'merge',
    );
    const get = await rawRequest(s.api, 'GET', `/api/v1/nodes/http:px:${port}/proxy/results/a@b?x=1`);
    assert.equal(get.code, 201);
    assert.equal(get.text, 'hello');
    const post = await rawRequest(s.api, 'POST', `/api/v1/nodes/px:${port}/proxy/`, {
      body: { a: 1 },
      contentType: 'application/json',
    });
    assert.equal(post.code, 201);
    assert.deepEqual(seen, ['GET /results/a@b?x=1  auth=none', 'POST / {"a":1} auth=none']);
    backend.close();
    const refused = await rawRequest(s.api, 'GET', `/api/v1/nodes/http:px:${port}/proxy/`);
    assert.equal(refused.code, 503);
    assert.match(JSON.parse(refused.text).message, /^error trying to reach service: connect ECONNREFUSED/);
  } finally {
    backend.close();
  }
});
