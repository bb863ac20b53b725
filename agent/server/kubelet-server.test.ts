import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import tls from 'node:tls';

import * as grpc from '@grpc/grpc-js';

import type { KObj, KubeApi } from '../../kube/client.js';
import { LogEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { CriClient, CriError } from '../cri/client.js';
import { FakeRuntime } from '../cri/fake-runtime.js';
import { Kubelet } from '../kubelet.js';
import { KubeletMetrics } from '../metrics.js';
import { podLogDir } from '../pods/cri-config.js';
import { toStaticPod } from '../sources/manifest.js';
import { KubeletAuth } from './auth.js';
import { alwaysOk, syncLoopCheck } from './healthz.js';
import type { ServerHost } from './host.js';
import { type RunningKubeletServer, startKubeletServer } from './kubelet-server.js';
import { loadServingCert } from './serving-cert.js';
import { StatsProvider } from './stats.js';

let dir: string;
let rt: FakeRuntime;
let cri: CriClient;
let kubelet: Kubelet;
let server: RunningKubeletServer;
let debugOff: RunningKubeletServer;
let host: ServerHost;
let webLog: string;
let streaming: http.Server;
const seenUpgrades: { url: string; headers: http.IncomingHttpHeaders }[] = [];
const reviews = { tokens: 0, sars: [] as KObj[] };
let alice: { cert: Buffer; key: Buffer };
let mallory: { cert: Buffer; key: Buffer };
const logs = memoryLogger();

/** A stand-in apiserver: token "good" is bob; alice may do anything, bob only read metrics. */
const fakeApi = {
  create: async (p: string, body: KObj) => {
    if (p.endsWith('/tokenreviews')) {
      reviews.tokens++;
      return {
        status:
          body.spec.token === 'good'
            ? { authenticated: true, user: { username: 'bob', groups: ['devs', 'system:authenticated'] } }
            : { authenticated: false },
      };
    }
    reviews.sars.push(body.spec);
    const ra = body.spec.resourceAttributes;
    return { status: { allowed: body.spec.user === 'alice' || (ra.subresource === 'metrics' && ra.verb === 'get') } };
  },
} as unknown as KubeApi;

function openssl(args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A client certificate signed by `ca`. */
function clientCert(ca: string, name: string, subj: string): { cert: Buffer; key: Buffer } {
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-subj',
    subj,
    '-out',
    `${name}.csr`,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-days',
    '1',
    '-out',
    `${name}.crt`,
  ]);
  return { cert: fs.readFileSync(path.join(dir, `${name}.crt`)), key: fs.readFileSync(path.join(dir, `${name}.key`)) };
}

function get(
  s: RunningKubeletServer,
  p: string,
  o: { token?: string; who?: { cert: Buffer; key: Buffer }; method?: string } = {},
): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: s.port,
        path: p,
        method: o.method ?? 'GET',
        rejectUnauthorized: false,
        ...(o.who ?? {}),
        headers: o.token ? { Authorization: `Bearer ${o.token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-klsrv-'));
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-subj',
    '/CN=test-ca',
    '-days',
    '1',
  ]);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'other.key',
    '-out',
    'other.crt',
    '-subj',
    '/CN=other-ca',
    '-days',
    '1',
  ]);
  alice = clientCert('ca', 'alice', '/CN=alice/O=admins');
  mallory = clientCert('other', 'mallory', '/CN=alice/O=admins');

  // The runtime's streaming server: answers the upgrade and echoes upper-cased.
  streaming = http.createServer((_q, s) => s.writeHead(404).end());
  streaming.on('upgrade', (req, sock) => {
    seenUpgrades.push({ url: req.url ?? '', headers: req.headers });
    sock.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n');
    sock.on('data', (b: Buffer) => sock.write(b.toString().toUpperCase()));
  });
  await new Promise<void>((r) => streaming.listen(0, '127.0.0.1', r));

  rt = new FakeRuntime();
  rt.streamingBase = `http://127.0.0.1:${(streaming.address() as AddressInfo).port}`;
  rt.pullable.add('reg/app:1');
  cri = new CriClient({ endpoint: await rt.start(), timeoutMs: 5000 });
  const metrics = new KubeletMetrics().collectProcessMetrics();
  const node = {
    nodeName: 'n1',
    hostIP: '10.1.1.1',
    podLogsDir: path.join(dir, 'logs'),
    rootDir: path.join(dir, 'root'),
  };
  kubelet = new Kubelet({ cri, log: logs, events: new LogEventRecorder(logs), node, relistPeriodMs: 50, metrics });
  await kubelet.start();
  const pod = toStaticPod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: { containers: [{ name: 'main', image: 'reg/app:1' }] },
    },
    '/m/web.yaml',
    'file',
    'n1',
  );
  kubelet.setSource('file', [pod]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'), 5000, 20);
  const logDir = path.join(podLogDir(node.podLogsDir, pod), 'main');
  webLog = path.join(logDir, '0.log');
  fs.writeFileSync(
    webLog,
    [
      '2026-12-02T10:00:00Z stdout F first',
      '2026-12-02T10:00:01Z stderr F second',
      '2026-12-02T10:00:02Z stdout F third',
    ].join('\n') + '\n',
  );

  host = {
    nodeName: 'n1',
    cri,
    podLogsDir: node.podLogsDir,
    log: logs,
    metrics,
    pods: () => kubelet.desiredPods(),
    waitingReason: () => undefined,
    configz: () => ({ port: 10250 }),
    healthChecks: [alwaysOk('ping'), alwaysOk('log'), syncLoopCheck(() => kubelet.pleg.enteredAt, 60_000)],
  };
  const cert = await loadServingCert({ certDir: path.join(dir, 'pki'), hostnames: ['n1'], ips: ['127.0.0.1'] });
  const auth = new KubeletAuth({
    anonymous: false,
    webhookAuthn: true,
    tokenCacheTtlMs: 120_000,
    mode: 'Webhook',
    authorizedTtlMs: 300_000,
    unauthorizedTtlMs: 30_000,
    client: fakeApi,
  });
  const common = {
    host,
    auth,
    stats: new StatsProvider(cri, 'n1', dir),
    cert,
    clientCA: fs.readFileSync(path.join(dir, 'ca.crt')),
    address: '127.0.0.1',
    port: 0,
  };
  server = await startKubeletServer({ ...common, enableDebuggingHandlers: true });
  debugOff = await startKubeletServer({ ...common, enableDebuggingHandlers: false });
});

after(async () => {
  await server?.close();
  await debugOff?.close();
  await kubelet?.stop();
  cri?.close();
  await rt?.stop();
  streaming?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('no credentials, a bad token, or a certificate from another CA: 401 Unauthorized', async () => {
  assert.deepEqual(await get(server, '/pods'), { code: 401, body: 'Unauthorized\n' });
  assert.deepEqual(await get(server, '/pods', { token: 'bad' }), { code: 401, body: 'Unauthorized\n' });
  assert.deepEqual(await get(server, '/pods', { who: mallory }), { code: 401, body: 'Unauthorized\n' });
});

test('a token user without nodes/proxy gets the upstream 403; nodes/metrics is allowed; answers are cached', async () => {
  const tokensBefore = reviews.tokens;
  const r = await get(server, '/pods', { token: 'good' });
  assert.deepEqual(r, { code: 403, body: 'Forbidden (user=bob, verb=get, resource=nodes, subresource=proxy)\n' });
  const logsReq = await get(server, '/containerLogs/default/web-n1/main', { token: 'good' });
  assert.equal(logsReq.code, 403);
  const m = await get(server, '/metrics', { token: 'good' });
  assert.equal(m.code, 200);
  assert.match(m.body, /kubelet_runtime_operations_total\{operation_type="run_podsandbox"\} 1/);
  assert.match(m.body, /kubelet_running_pods 1/);
  assert.match(m.body, /^process_resident_memory_bytes \d+/m, 'the process figures');
  assert.match(m.body, /^nodejs_heap_size_used_bytes \d+/m);
  assert.match(
    m.body,
    /kubelet_http_requests_total\{method="GET",path="pods",server_type="readwrite",long_running="false"\}/,
  );
  const sarsBefore = reviews.sars.length;
  await get(server, '/metrics', { token: 'good' });
  await get(server, '/pods', { token: 'good' });
  assert.equal(reviews.sars.length, sarsBefore, 'SubjectAccessReviews are cached');
  assert.equal(reviews.tokens - tokensBefore, 1, 'the token is reviewed once');
  assert.deepEqual(
    JSON.parse(
      JSON.stringify(reviews.sars.find((s) => s.user === 'bob' && s.resourceAttributes.subresource === 'proxy')),
    ),
    {
      user: 'bob',
      groups: ['devs', 'system:authenticated'],
      resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'proxy', name: 'n1' },
    },
  );
  assert.equal(
    (await get(server, '/stats/summary', { token: 'good' })).body,
    'Forbidden (user=bob, verb=get, resource=nodes, subresource=stats)\n',
  );
});

test('a client certificate from the client CA authenticates as its CN and O', async () => {
  const r = await get(server, '/pods', { who: alice });
  assert.equal(r.code, 200);
  const list = JSON.parse(r.body);
  assert.equal(list.kind, 'PodList');
  assert.deepEqual(
    list.items.map((p: KObj) => p.metadata.name),
    ['web-n1'],
  );
  const sar = reviews.sars.find((s) => s.user === 'alice');
  assert.deepEqual(sar?.groups, ['admins', 'system:authenticated']);
  assert.deepEqual(await get(server, '/healthz', { who: alice }), { code: 200, body: 'ok' });
  assert.deepEqual(await get(server, '/healthz?verbose', { who: alice }), {
    code: 200,
    body: '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n',
  });
  assert.deepEqual(await get(server, '/healthz/syncloop', { who: alice }), { code: 200, body: 'ok' });
  assert.deepEqual(JSON.parse((await get(server, '/configz', { who: alice })).body), {
    kubeletconfig: { port: 10250 },
  });
});

test('containerLogs: output, tail, timestamps, and upstream errors', async () => {
  const l = (q: string) => get(server, `/containerLogs/default/web-n1/main${q}`, { who: alice });
  assert.deepEqual(await l(''), { code: 200, body: 'first\nsecond\nthird\n' });
  assert.deepEqual(await l('?tailLines=1&timestamps=true'), {
    code: 200,
    body: '2026-12-02T10:00:02.000000000Z third\n',
  });
  assert.deepEqual(await l('?previous=true'), {
    code: 400,
    body: 'previous terminated container "main" in pod "web-n1" not found\n',
  });
  assert.deepEqual(await l('?tailLines=-2'), {
    code: 400,
    body: 'tailLines: Invalid value: -2: must be greater than or equal to 0\n',
  });
  assert.deepEqual(await get(server, '/containerLogs/default/nope/main', { who: alice }), {
    code: 404,
    body: 'pod "nope" does not exist\n',
  });
  assert.deepEqual(await get(server, '/containerLogs/default/web-n1/other', { who: alice }), {
    code: 404,
    body: 'container "other" not found in pod "web-n1"\n',
  });
});

test('containerLogs follow: a failing ContainerStatus does not end the stream; NotFound does', async () => {
  const before = fs.readFileSync(webLog);
  const realCri = host.cri;
  const checks: number[] = [];
  let code = grpc.status.DEADLINE_EXCEEDED;
  let armed = false;
  // Only the API's runtime handle fails, once the stream is under way: the kubelet's own syncs keep the real one.
  host.cri = Object.assign(Object.create(realCri) as CriClient, {
    containerStatus: async (id: string) => {
      if (!armed) return realCri.containerStatus(id);
      checks.push(code);
      throw new CriError('ContainerStatus', code, `${code} for ${id}`);
    },
  });
  try {
    let body = '';
    const ended = new Promise<number>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/containerLogs/default/web-n1/main?follow=true',
          rejectUnauthorized: false,
          ...alice,
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    await waitFor(() => body.endsWith('third\n'), 10_000, 20, 'the log so far');
    armed = true;
    await waitFor(() => checks.length >= 2, 10_000, 20, 'two failed status checks');
    fs.appendFileSync(webLog, '2026-12-02T10:00:03Z stdout F fourth\n');
    await waitFor(() => body.endsWith('fourth\n'), 10_000, 20, 'the line written after the failures');
    code = grpc.status.NOT_FOUND;
    assert.equal(await ended, 200);
    assert.equal(body, 'first\nsecond\nthird\nfourth\n');
    assert.equal(checks.at(-1), grpc.status.NOT_FOUND, 'the stream ended on NotFound');
  } finally {
    host.cri = realCri;
    fs.writeFileSync(webLog, before);
  }
});

test('stats/summary and metrics/resource come from CRI container stats', async () => {
  const s = JSON.parse((await get(server, '/stats/summary', { who: alice })).body);
  assert.equal(s.node.nodeName, 'n1');
  assert.ok(s.node.memory.workingSetBytes > 0);
  const p = s.pods.find((x: KObj) => x.podRef.name === 'web-n1');
  assert.equal(p.containers[0].name, 'main');
  assert.equal(p.containers[0].cpu.usageCoreNanoSeconds, 1e9);
  assert.equal(p.memory.workingSetBytes, 1 << 20);
  const m = (await get(server, '/metrics/resource', { who: alice })).body;
  assert.match(m, /container_cpu_usage_seconds_total\{container="main",namespace="default",pod="web-n1"\} 1 \d+/);
  assert.match(m, /# TYPE node_memory_working_set_bytes gauge/);
  const c = (await get(server, '/metrics/cadvisor', { who: alice })).body;
  assert.match(
    c,
    /# TYPE container_cpu_usage_seconds_total counter\ncontainer_cpu_usage_seconds_total\{container="main",id="\/k8s\.io\/[^"]+",image="[^"]*",name="[^"]+",namespace="default",pod="web-n1",cpu="total"\} 1 \d+/,
  );
  assert.match(c, /container_memory_working_set_bytes\{container="main",[^}]*pod="web-n1"\} 1048576/);
  assert.match(c, /^machine_cpu_cores \d+$/m);
});

/** Sends an upgrade request over TLS and returns the socket once the status line is read. */
function upgrade(
  s: RunningKubeletServer,
  p: string,
  who?: { cert: Buffer; key: Buffer },
): Promise<{ head: string; sock: tls.TLSSocket }> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false, ...(who ?? {}) }, () => {
      sock.write(
        `POST ${p} HTTP/1.1\r\nHost: n1\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`,
      );
    });
    let buf = '';
    const onData = (b: Buffer): void => {
      buf += b.toString();
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      sock.off('data', onData);
      resolve({ head: buf, sock });
    };
    sock.on('data', onData);
    sock.on('error', reject);
  });
}

test('exec: CRI Exec gives the URL, and the upgraded stream is spliced to the runtime', async () => {
  const { head, sock } = await upgrade(
    server,
    '/exec/default/web-n1/main?command=sh&command=-c&command=id&input=1&output=1&tty=1&error=1',
    alice,
  );
  assert.match(head, /^HTTP\/1.1 101 Switching Protocols/);
  const echoed = new Promise<string>((r) => sock.once('data', (b: Buffer) => r(b.toString())));
  sock.write('hello');
  assert.equal(await echoed, 'HELLO');
  sock.destroy();
  const exec = rt.calls.filter((c) => c.method === 'Exec').at(-1)!.req;
  assert.deepEqual(exec.cmd, ['sh', '-c', 'id']);
  assert.deepEqual(
    [exec.tty, exec.stdin, exec.stdout, exec.stderr],
    [true, true, true, false],
    'with a tty, stderr goes with stdout',
  );
  const up = seenUpgrades.at(-1)!;
  assert.match(up.url, /^\/exec\/t\d+$/);
  assert.equal(up.headers['x-stream-protocol-version'], 'v4.channel.k8s.io');
  assert.equal(up.headers.authorization, undefined);
});

test('attach and portForward splice too; bad requests are refused before the runtime', async () => {
  const a = await upgrade(server, '/attach/default/web-n1/main?output=1', alice);
  assert.match(a.head, /^HTTP\/1.1 101/);
  a.sock.destroy();
  const pf = await upgrade(server, '/portForward/default/web-n1', alice);
  assert.match(pf.head, /^HTTP\/1.1 101/);
  pf.sock.destroy();
  assert.match(seenUpgrades.at(-1)!.url, /^\/portforward\/t\d+$/);
  assert.match(
    (await upgrade(server, '/exec/default/web-n1/main?command=ls', alice)).head,
    /^HTTP\/1.1 400[^]*you must specify at least 1 of stdin, stdout, stderr/,
  );
  assert.match(
    (await upgrade(server, '/exec/default/nope/main?command=ls&output=1', alice)).head,
    /^HTTP\/1.1 404[^]*pod does not exist/,
  );
  assert.match(
    (await upgrade(server, '/exec/default/web-n1/nope?command=ls&output=1', alice)).head,
    /^HTTP\/1.1 404[^]*container not found \("nope"\)/,
  );
  assert.match(
    (await upgrade(server, '/exec/default/web-n1/main?command=ls&output=1')).head,
    /^HTTP\/1.1 401[^]*Unauthorized/,
  );
});

test('with debugging handlers off, logs and exec answer 405', async () => {
  assert.deepEqual(await get(debugOff, '/containerLogs/default/web-n1/main', { who: alice }), {
    code: 405,
    body: 'Debug endpoints are disabled.\n',
  });
  assert.match(
    (await upgrade(debugOff, '/exec/default/web-n1/main?command=ls&output=1', alice)).head,
    /^HTTP\/1.1 405/,
  );
  assert.equal((await get(debugOff, '/pods', { who: alice })).code, 200);
});

test('run: POST /run executes a command and returns its output', async () => {
  const r = await get(server, '/run/default/web-n1/main?cmd=echo%20hi', { who: alice, method: 'POST' });
  assert.deepEqual(r, { code: 200, body: 'echo hi' });
});

test('setCertificate (serverTLSBootstrap): new connections get the new serving certificate', async () => {
  const peer = (port: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
        resolve(s.getPeerCertificate().fingerprint256);
        s.end();
      });
      s.on('error', reject);
    });
  const before = await peer(debugOff.port);
  const other = await loadServingCert({
    certDir: path.join(dir, 'pki-other'),
    hostnames: ['n1-new'],
    ips: ['127.0.0.1'],
  });
  debugOff.setCertificate(other);
  const after = await peer(debugOff.port);
  assert.notEqual(after, before);
  assert.equal(after, new X509Certificate(other.cert).fingerprint256);
});
