import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import { grpcProbe } from './grpc-probe.js';
import { httpProbe } from './http-probe.js';
import { PROBE_USER_AGENT, probeHeaders, resolvePort } from './prober.js';
import { tcpProbe } from './tcp-probe.js';

async function serve(handler: http.RequestListener): Promise<{ port: number; close: () => void }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as AddressInfo).port, close: () => srv.close() };
}

test('httpGet: 2xx succeeds, >=400 fails with the upstream message, default and user headers are sent', async () => {
  const seen: http.IncomingHttpHeaders[] = [];
  const s = await serve((req, res) => {
    seen.push(req.headers);
    if (req.url === '/ok') return res.end('fine');
    res.writeHead(req.url === '/missing' ? 404 : 500);
    res.end('no');
  });
  try {
    const url = (p: string) => new URL(`http://127.0.0.1:${s.port}${p}`);
    assert.deepEqual(await httpProbe({ url: url('/ok'), headers: probeHeaders(), timeoutMs: 1000 }), {
      result: 'success',
      output: 'fine',
    });
    assert.equal(seen[0]!['user-agent'], PROBE_USER_AGENT);
    assert.equal(PROBE_USER_AGENT, 'kube-probe/1.37');
    assert.equal(seen[0]!.accept, '*/*');
    assert.deepEqual(await httpProbe({ url: url('/missing'), headers: probeHeaders(), timeoutMs: 1000 }), {
      result: 'failure',
      output: 'HTTP probe failed with statuscode: 404',
    });
    await httpProbe({
      url: url('/ok'),
      headers: probeHeaders([
        { name: 'X-Custom', value: 'yes' },
        { name: 'accept', value: 'application/json' },
        { name: 'User-Agent', value: '' },
      ]),
      timeoutMs: 1000,
    });
    assert.equal(seen.at(-1)!['x-custom'], 'yes');
    assert.equal(seen.at(-1)!.accept, 'application/json', 'a user header replaces the default');
    assert.equal(seen.at(-1)!['user-agent'], undefined, 'an empty value removes the default');
  } finally {
    s.close();
  }
});

test('httpGet: redirects are followed on the same host only, at most 10; the body is read up to 10 KiB', async () => {
  const s = await serve((req, res) => {
    const m = /^\/hop(\d+)$/.exec(req.url ?? '');
    if (m) {
      res.writeHead(302, { Location: `/hop${Number(m[1]) + 1}` });
      return res.end();
    }
    if (req.url === '/to-ok') {
      res.writeHead(301, { Location: '/big' });
      return res.end();
    }
    if (req.url === '/away') {
      res.writeHead(302, { Location: 'http://elsewhere.invalid/' });
      return res.end('moved');
    }
    if (req.url === '/big') return res.end('x'.repeat(50_000));
    res.end();
  });
  try {
    const url = (p: string) => new URL(`http://127.0.0.1:${s.port}${p}`);
    const big = await httpProbe({ url: url('/to-ok'), headers: {}, timeoutMs: 2000 });
    assert.equal(big.result, 'success');
    assert.equal(big.output.length, 10 * 1024);
    assert.deepEqual(await httpProbe({ url: url('/away'), headers: {}, timeoutMs: 2000 }), {
      result: 'warning',
      output: 'Probe terminated redirects, Response body: moved',
    });
    const loop = await httpProbe({ url: url('/hop0'), headers: {}, timeoutMs: 2000 });
    assert.equal(loop.result, 'failure');
    assert.match(loop.output, /stopped after 10 redirects/);
  } finally {
    s.close();
  }
});

test('httpGet: a server that never answers fails at the timeout, not later; a closed port is refused', async () => {
  const sockets: net.Socket[] = [];
  const hang = net.createServer((c) => sockets.push(c));
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  try {
    const port = (hang.address() as AddressInfo).port;
    const t0 = Date.now();
    const r = await httpProbe({ url: new URL(`http://127.0.0.1:${port}/`), headers: {}, timeoutMs: 300 });
    const took = Date.now() - t0;
    assert.equal(r.result, 'failure');
    assert.match(r.output, /context deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)/);
    assert.ok(took >= 280 && took < 1500, `gave up after ${took} ms`);
  } finally {
    for (const c of sockets) c.destroy();
    hang.close();
  }
  const closed = await httpProbe({ url: new URL('http://127.0.0.1:1/healthz'), headers: {}, timeoutMs: 500 });
  assert.deepEqual(closed, {
    result: 'failure',
    output: 'Get "http://127.0.0.1:1/healthz": dial tcp 127.0.0.1:1: connect: connection refused',
  });
});

test('tcpSocket: connect succeeds on a listening port, is refused on a closed one', async () => {
  const srv = net.createServer((c) => c.end());
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  try {
    assert.equal((await tcpProbe('127.0.0.1', (srv.address() as AddressInfo).port, 1000)).result, 'success');
  } finally {
    srv.close();
  }
  assert.deepEqual(await tcpProbe('127.0.0.1', 1, 1000), {
    result: 'failure',
    output: 'dial tcp 127.0.0.1:1: connect: connection refused',
  });
});

test('grpc: grpc.health.v1 Check, SERVING succeeds; NOT_SERVING and no server fail with upstream messages', async () => {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../proto');
  const def = protoLoader.loadSync('grpc/health/v1/health.proto', {
    keepCase: true,
    enums: String,
    defaults: true,
    includeDirs: [dir],
  });
  const pkg = grpc.loadPackageDefinition(def) as any;
  const status: Record<string, string> = { '': 'SERVING', db: 'NOT_SERVING' };
  const server = new grpc.Server();
  server.addService(pkg.grpc.health.v1.Health.service, {
    Check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      const st = status[call.request.service];
      if (!st) return cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' } as grpc.ServiceError);
      cb(null, { status: st });
    },
  });
  const port = await new Promise<number>((r, j) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))),
  );
  try {
    assert.deepEqual(await grpcProbe('127.0.0.1', port, '', 2000), { result: 'success', output: '' });
    assert.deepEqual(await grpcProbe('127.0.0.1', port, 'db', 2000), {
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
  } finally {
    server.forceShutdown();
  }
  const none = await grpcProbe('127.0.0.1', 1, '', 500);
  assert.equal(none.result, 'failure');
  assert.match(none.output, /^timeout: failed to connect service "127\.0\.0\.1:1" within 0\.5s/);
});

test('ports by number, by container port name, or as a numeric string', () => {
  const c = { name: 'c', ports: [{ name: 'http', containerPort: 8080 }] };
  assert.equal(resolvePort(81, c), 81);
  assert.equal(resolvePort('http', c), 8080);
  assert.equal(resolvePort('9090', c), 9090);
  assert.throws(() => resolvePort('metrics', c), /couldn't find port: metrics/);
});
