// Benchmark: the dev apiserver. Creates 1,000 pods, lists them with the real
// kubectl, then runs 10 watchers while 1,000 writes happen; installs 100 CRDs
// and creates and lists 10,000 custom resources against as many ConfigMaps. The baseline,
// measured in the same run with the same client and concurrency, is a bare
// node:https server that answers every request with a small JSON object.
// Run: npm run bench:apiserver   (loopback only; the server is a child process)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { percentile, rssKiB } from './stats.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.BENCH_N ?? 1000);
const CONCURRENCY = 20;
const WATCHERS = 10;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function pool<T>(n: number, fn: (i: number) => Promise<T>): Promise<{ lat: number[]; ms: number }> {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        await fn(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  return { lat, ms: performance.now() - t0 };
}

const line = (what: string, r: { lat: number[]; ms: number }, n: number): string =>
  `${what.padEnd(34)} ${(n / (r.ms / 1000)).toFixed(0).padStart(7)} req/s   p50 ${percentile(r.lat, 50).toFixed(2).padStart(7)} ms   p99 ${percentile(r.lat, 99).toFixed(2).padStart(7)} ms`;

/** Starts `tskube apiserver` on a free port; resolves once its admin kubeconfig is written. */
async function startApiserver(
  dir: string,
  extra: string[] = [],
): Promise<{ child: ReturnType<typeof spawn>; kubeconfig: string }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(REPO, 'cli/tskube.ts'),
      'apiserver',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${dir}`,
      ...extra,
    ],
    { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  const end = Date.now() + 30_000;
  while (!fs.existsSync(kubeconfig) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 300));
  return { child, kubeconfig };
}

/**
 * The bounded load check: 1,000 writes of maximum-size ConfigMaps (1 MiB of data each, over 10 names) to a
 * persistent apiserver; its RSS and its data log must stay bounded (watch history 64 MiB, log compacted by size).
 */
async function boundedLoad(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-load-'));
  const { child, kubeconfig } = await startApiserver(dir, [`--data-dir=${path.join(dir, 'data')}`]);
  try {
    const client = new KubeClient(loadKubeconfig(kubeconfig));
    const rss0 = rssKiB(child.pid!);
    const names = 10;
    const blob = 'x'.repeat(1024 * 1024 - 16);
    const writes = Number(process.env.BENCH_LOAD_WRITES ?? 1000);
    let maxLog = 0;
    let maxRss = rss0;
    const checkpoints: string[] = [];
    for (let i = 0; i < writes; i++) {
      const name = `max-${i % names}`;
      const body = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name },
        data: { blob: `${blob}${String(i).padStart(8, '0')}` },
      };
      if (i < names) await client.create('/api/v1/namespaces/default/configmaps', body);
      else await client.update(`/api/v1/namespaces/default/configmaps/${name}`, body);
      if (i % 50 === 0) {
        maxRss = Math.max(maxRss, rssKiB(child.pid!));
        maxLog = Math.max(maxLog, fs.statSync(path.join(dir, 'data', 'objects.log')).size);
      }
      if ((i + 1) % Math.max(1, Math.floor(writes / 4)) === 0)
        checkpoints.push(`${i + 1}: ${(rssKiB(child.pid!) / 1024).toFixed(0)} MiB`);
    }
    const over = await client
      .create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'over' }, data: { blob: `${blob}${blob}` } })
      .then(
        () => 'accepted',
        (e: Error) => e.message.split(': ').slice(1).join(': '),
      );
    const rss = rssKiB(child.pid!);
    const log = fs.statSync(path.join(dir, 'data', 'objects.log')).size;
    client.close();
    const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
    const live = names * 1024 * 1024;
    process.stdout.write(
      `\nbounded load: ${writes} writes of 1 MiB ConfigMaps over ${names} names, persistent storage\n`,
    );
    process.stdout.write(
      `apiserver RSS: start ${mib(rss0 * 1024)}, peak ${mib(maxRss * 1024)}, end ${mib(rss * 1024)}; after writes ${checkpoints.join(', ')}\n`,
    );
    process.stdout.write(
      `  (bound: flat in the number of writes; what is held is the watch history, at most 64 MiB of JSON, plus the live data ${mib(live)}; the rest is V8 heap headroom)\n`,
    );
    process.stdout.write(
      `data log: peak ${mib(maxLog)}, end ${mib(log)}   (bound: compacted past max(64 MiB, 2 x live data) = ${mib(Math.max(64 * 1024 * 1024, 2 * live))})\n`,
    );
    process.stdout.write(`a 2 MiB ConfigMap: ${over}\n`);
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A definition for the CRD benchmark: a namespaced kind with a small schema, defaults, printer columns and both subresources. */
function benchCrd(i: number): object {
  const group = `g${i % 10}.bench.example.com`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widget${i}s.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: `widget${i}s`, singular: `widget${i}`, kind: `Widget${i}` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['size'],
                  properties: {
                    size: { type: 'integer', minimum: 0 },
                    color: { type: 'string', enum: ['red', 'green'], default: 'red' },
                    labels: { type: 'object', additionalProperties: { type: 'string' } },
                  },
                },
                status: { type: 'object', properties: { replicas: { type: 'integer' } } },
              },
            },
          },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.replicas' },
          },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Color', type: 'string', jsonPath: '.spec.color' },
          ],
        },
      ],
    },
  };
}

/**
 * 100 CRDs installed, then 10,000 custom resources of one of them created and listed,
 * against 10,000 ConfigMaps of about the same size on the same apiserver.
 */
async function customResourceBench(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-crd-'));
  const { child, kubeconfig } = await startApiserver(dir);
  const n = Number(process.env.BENCH_CR_N ?? 10_000);
  const crds = Number(process.env.BENCH_CRDS ?? 100);
  try {
    const client = new KubeClient(loadKubeconfig(kubeconfig));
    const kubectl = (args: string[]): number => {
      const t = performance.now();
      execFileSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { stdio: 'ignore', maxBuffer: 1 << 28 });
      return performance.now() - t;
    };
    const listMs = async (p: string): Promise<number> => {
      const t = performance.now();
      await client.get(p);
      return performance.now() - t;
    };
    const spec = (i: number) => ({ size: i, labels: { tier: 'bench', n: String(i % 10) } });
    const cms = await pool(n, (i) =>
      client.create('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${i}` },
        data: { size: String(i), color: 'red', tier: 'bench', n: String(i % 10) },
      }),
    );
    const cmList = [
      await listMs('/api/v1/namespaces/default/configmaps'),
      await listMs('/api/v1/namespaces/default/configmaps'),
    ];
    const cmTable = [kubectl(['get', 'configmaps']), kubectl(['get', 'configmaps'])];
    const rss0 = rssKiB(child.pid!);
    const t0 = performance.now();
    const install = await pool(crds, (i) =>
      client.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', benchCrd(i)),
    );
    // Established means served: the first list of the last definition's objects answers.
    await client.get(`/apis/g${(crds - 1) % 10}.bench.example.com/v1/namespaces/default/widget${crds - 1}s`);
    const installedMs = performance.now() - t0;
    const rssCrds = rssKiB(child.pid!);
    const discovery = kubectl(['api-resources']);
    const tOpenapi = performance.now();
    const docs = await openapiBytes(client, kubeconfig);
    const openapiMs = performance.now() - tOpenapi;
    const base = '/apis/g0.bench.example.com/v1/namespaces/default/widget0s';
    const crs = await pool(n, (i) =>
      client.create(base, {
        apiVersion: 'g0.bench.example.com/v1',
        kind: 'Widget0',
        metadata: { name: `w-${i}` },
        spec: spec(i),
      }),
    );
    const crList = [await listMs(base), await listMs(base)];
    const crTable = [kubectl(['get', 'widget0s']), kubectl(['get', 'widget0s'])];
    const rssEnd = rssKiB(child.pid!);
    client.close();
    const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;
    process.stdout.write(`
custom resources: ${crds} CRDs installed, then ${n} custom resources of one of them, against ${n} ConfigMaps
`);
    process.stdout.write(`${line(`create ConfigMap (baseline)`, cms, n)}
`);
    process.stdout
      .write(`${line(`create custom resource`, crs, n)}   (${ratio(crs.ms, cms.ms)} ConfigMap time; schema defaulting, pruning and validation included)
`);
    process.stdout
      .write(`list ${n}: ConfigMaps ${percentile(cmList, 50).toFixed(0)} ms, custom resources ${percentile(crList, 50).toFixed(0)} ms (${ratio(percentile(crList, 50), percentile(cmList, 50))})
`);
    process.stdout
      .write(`kubectl get (Table) ${n}: ConfigMaps ${percentile(cmTable, 50).toFixed(0)} ms, custom resources with printer columns ${percentile(crTable, 50).toFixed(0)} ms (${ratio(percentile(crTable, 50), percentile(cmTable, 50))})
`);
    process.stdout
      .write(`${crds} CRDs created and served in ${installedMs.toFixed(0)} ms (${(installedMs / crds).toFixed(1)} ms each, ${(install.ms / crds).toFixed(1)} ms of creates); apiserver RSS +${((rssCrds - rss0) / 1024).toFixed(1)} MiB
`);
    process.stdout
      .write(`kubectl api-resources with ${crds} CRDs: ${discovery.toFixed(0)} ms; OpenAPI documents rebuilt and served: ${(docs / 1024).toFixed(0)} KiB in ${openapiMs.toFixed(0)} ms
`);
    process.stdout
      .write(`apiserver RSS at the end: ${(rssEnd / 1024).toFixed(1)} MiB   (goal: custom resources within 2x of ConfigMaps for create and list)
`);
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Milliseconds from sending a watch of a quiet collection to its response headers (n sequential watches). */
async function watchTimeToFirstByte(kubeconfig: string, n: number): Promise<number[]> {
  const auth = loadKubeconfig(kubeconfig);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const req = https.request(
        `${auth.server}/api/v1/namespaces/kube-public/secrets?watch=1&timeoutSeconds=5`,
        { cert: auth.cert, key: auth.key, ca: auth.ca },
        (res) => {
          out.push(performance.now() - t0);
          res.destroy();
          resolve();
        },
      );
      req.on('error', (e) => (out.length > i ? resolve() : reject(e)));
      req.end();
    });
  }
  return out;
}

/** Fetches /openapi/v2 (JSON and protobuf) and every /openapi/v3 document; their total size. */
async function openapiBytes(client: KubeClient, kubeconfig: string): Promise<number> {
  let total = JSON.stringify(await client.get('/openapi/v2')).length;
  const root = (await client.get('/openapi/v3')) as unknown as { paths: Record<string, { serverRelativeURL: string }> };
  for (const p of Object.values(root.paths))
    total += JSON.stringify(await client.get(p.serverRelativeURL.split('?')[0]!)).length;
  return (
    total + (await rawLength(kubeconfig, '/openapi/v2', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'))
  );
}

function rawLength(kubeconfig: string, p: string, accept: string): Promise<number> {
  const auth = loadKubeconfig(kubeconfig);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${auth.server}${p}`,
      { cert: auth.cert, key: auth.key, ca: auth.ca, headers: { Accept: accept } },
      (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  // BENCH_ONLY=crd runs the custom resource part alone.
  if (process.env.BENCH_ONLY === 'crd') return customResourceBench();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-as-'));
  const { child, kubeconfig } = await startApiserver(dir);
  try {
    const auth = loadKubeconfig(kubeconfig);
    const client = new KubeClient(auth);

    // Baseline: the same client and TLS, against a server that does nothing.
    const base = https.createServer(
      {
        cert: fs.readFileSync(path.join(dir, 'pki/apiserver.crt')),
        key: fs.readFileSync(path.join(dir, 'pki/apiserver.key')),
      },
      (req, res) => {
        req.resume();
        req.on('end', () => {
          const b = '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"}}';
          res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': b.length });
          res.end(b);
        });
      },
    );
    await new Promise<void>((r) => base.listen(0, '127.0.0.1', r));
    const baseClient = new KubeClient({
      ...auth,
      server: `https://127.0.0.1:${(base.address() as net.AddressInfo).port}`,
      tlsServerName: 'localhost',
    });
    const pod = (i: number) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `bench-${i}`, labels: { app: 'bench', n: String(i % 10) } },
      spec: {
        nodeName: 'node-a',
        containers: [{ name: 'c', image: '127.0.0.1:5000/tskube/app:1', ports: [{ containerPort: 8080 }] }],
      },
    });
    const floor = await pool(N, (i) => baseClient.create('/api/v1/namespaces/default/pods', pod(i)));
    base.close();
    baseClient.close();

    const creates = await pool(N, (i) => client.create('/api/v1/namespaces/default/pods', pod(i)));
    const kubectl = (args: string[]): number => {
      const t = performance.now();
      execFileSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { stdio: 'ignore', maxBuffer: 1 << 28 });
      return performance.now() - t;
    };
    const getTable = [kubectl(['get', 'pods']), kubectl(['get', 'pods']), kubectl(['get', 'pods'])];
    const getJson = [kubectl(['get', 'pods', '-o', 'json']), kubectl(['get', 'pods', '-o', 'json'])];

    // Dry-run creates and server-side applies, next to the creates and patches.
    const dryCreates = await pool(N, (i) =>
      client.request('POST', '/api/v1/namespaces/default/pods', { body: pod(N + i), query: { dryRun: 'All' } }),
    );
    const applies = await pool(N, (i) =>
      client.request('PATCH', `/api/v1/namespaces/default/pods/bench-${i}`, {
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `bench-${i}`, labels: { applied: 'yes' } } },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'bench' },
      }),
    );
    const watchTtfb = await watchTimeToFirstByte(kubeconfig, 50);
    const rssBeforeOpenapi = rssKiB(child.pid!);
    const docs = await openapiBytes(client, kubeconfig);
    const rssAfterOpenapi = rssKiB(child.pid!);

    const list = await client.get('/api/v1/namespaces/default/pods');
    const sentAt = new Map<string, number>();
    const delivery: number[] = [];
    let received = 0;
    const aborts: AbortController[] = [];
    const watchers = Array.from({ length: WATCHERS }, async () => {
      const ac = new AbortController();
      aborts.push(ac);
      try {
        for await (const ev of client.watch(
          '/api/v1/namespaces/default/pods',
          { resourceVersion: list.metadata.resourceVersion },
          ac.signal,
        )) {
          const t = sentAt.get(`${ev.object.metadata.name}/${ev.object.metadata.labels?.round}`);
          if (t !== undefined) delivery.push(performance.now() - t);
          received++;
        }
      } catch {
        /* aborted */
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const writes = await pool(N, async (i) => {
      sentAt.set(`bench-${i}/1`, performance.now());
      await client.patch(
        `/api/v1/namespaces/default/pods/bench-${i}`,
        { metadata: { labels: { round: '1' } } },
        'merge',
      );
    });
    const endWait = Date.now() + 30_000;
    while (received < N * WATCHERS && Date.now() < endWait) await new Promise((r) => setTimeout(r, 20));
    for (const a of aborts) a.abort();
    await Promise.allSettled(watchers);
    const rss = rssKiB(child.pid!);
    client.close();

    process.stdout.write(
      `dev apiserver benchmark: ${N} objects, ${CONCURRENCY} concurrent requests, ${WATCHERS} watchers\n\n`,
    );
    process.stdout.write(`${line('baseline: bare https JSON server', floor, N)}\n`);
    process.stdout.write(
      `${line('create pod', creates, N)}   (${(creates.ms / floor.ms).toFixed(2)}x baseline time)\n`,
    );
    process.stdout.write(`${line(`merge-patch pod (${WATCHERS} watchers)`, writes, N)}\n`);
    process.stdout.write(
      `${line('create pod, dryRun=All', dryCreates, N)}   (${(dryCreates.ms / creates.ms).toFixed(2)}x create time; goal: no slower than a create)\n`,
    );
    process.stdout.write(
      `${line('server-side apply (labels, pod)', applies, N)}   (${(applies.ms / creates.ms).toFixed(2)}x create time; goal: within 2x of a create)\n`,
    );
    process.stdout.write(
      `watch time to first byte (quiet collection)  p50 ${percentile(watchTtfb, 50).toFixed(2)} ms   p99 ${percentile(watchTtfb, 99).toFixed(2)} ms   (goal: headers at once, not at the first event)\n`,
    );
    process.stdout.write(
      `OpenAPI documents served: ${(docs / 1024).toFixed(0)} KiB (v2 JSON + protobuf, all v3); apiserver RSS ${(rssBeforeOpenapi / 1024).toFixed(1)} -> ${(rssAfterOpenapi / 1024).toFixed(1)} MiB (+${((rssAfterOpenapi - rssBeforeOpenapi) / 1024).toFixed(1)} MiB; built on first use)\n`,
    );
    process.stdout.write(
      `watch delivery (write sent -> event)  p50 ${percentile(delivery, 50).toFixed(2)} ms   p99 ${percentile(delivery, 99).toFixed(2)} ms   events ${received}/${N * WATCHERS}\n`,
    );
    process.stdout.write(`kubectl get pods (${N}, Table)        p50 ${percentile(getTable, 50).toFixed(0)} ms\n`);
    process.stdout.write(`kubectl get pods -o json (${N})       p50 ${percentile(getJson, 50).toFixed(0)} ms\n`);
    process.stdout.write(`apiserver RSS after the run: ${(rss / 1024).toFixed(1)} MiB\n`);
  } finally {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await customResourceBench();
  await boundedLoad();
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
