// Runs inside a throwaway network namespace (bench/dns.ts starts it): a dev
// apiserver, `tskube dns` as its own process, and Debian's dnsmasq answering
// the same names from a hosts file (the floor). dnsperf (Debian) drives both
// with the same query files; its per-query report (-v) gives the latencies.
// With the CoreDNS fixture built, CoreDNS (a Corefile as kubeadm's) answers
// the same names too. Then 10,000 Services are created and the servers'
// memory is read. Prints JSON.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { REPO } from '../e2e/harness.js';
import { upstreamDir } from '../scripts/upstream-plan.js';
import { startTestApiServer } from '../testing/apiserver.js';
import { percentile, rssKiB, runBench } from './stats.js';

const DNS_PORT = 5300;
const FLOOR_PORT = 5301;
const COREDNS_PORT = 5302;
const COREDNS = path.join(upstreamDir(), 'coredns');

/** kubeadm's Corefile (its CoreDNS addon), on this benchmark's ports, forwarding to the floor as tskube dns does. */
export function corefile(kubeconfig: string, upstream: string, port: number): string {
  return `.:${port} {
    bind 127.0.0.1
    errors
    health 127.0.0.1:18080 {
       lameduck 5s
    }
    ready 127.0.0.1:18181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       kubeconfig ${kubeconfig}
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus 127.0.0.1:19153
    forward . ${upstream} {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`;
}
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SERVICES = Number(process.env.BENCH_SERVICES ?? 10_000);

export interface Row {
  name: string;
  server: 'tskube' | 'dnsmasq' | 'coredns';
  qps: number;
  p50ms: number;
  p99ms: number;
  lost: number;
}

function dig(port: number, name: string): string {
  return execFileSync('dig', ['@127.0.0.1', '-p', String(port), '+short', '+time=1', '+tries=1', name], {
    encoding: 'utf8',
  }).trim();
}

function dnsperf(port: number, file: string): { qps: number; latencies: number[]; lost: number } {
  const out = execFileSync(
    'dnsperf',
    ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(SECONDS), '-c', '4', '-q', '20', '-v'],
    { encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1]);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const latencies: number[] = [];
  for (const m of out.matchAll(/^> \S+ \S+ \S+ ([\d.]+)$/gm)) latencies.push(Number(m[1]) * 1000);
  return { qps, latencies, lost };
}

async function until(what: string, f: () => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (f()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main(): Promise<void> {
  execFileSync('ip', ['link', 'set', 'lo', 'up']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-dns-'));
  const api = await startTestApiServer('bench');
  const children: ChildProcess[] = [];
  try {
    const admin = api.admin;
    await admin.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'web' },
      spec: { ports: [{ name: 'http', port: 80 }] },
    });
    await admin.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'db' },
      spec: { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] },
    });
    const dbIPs = ['10.244.0.11', '10.244.0.12', '10.244.0.13'];
    await admin.create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      metadata: { name: 'db-1', labels: { 'kubernetes.io/service-name': 'db' } },
      addressType: 'IPv4',
      ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
      endpoints: dbIPs.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    });
    const webIP = (await admin.get('/api/v1/namespaces/default/services/web')).spec.clusterIP as string;

    const dnsLog = fs.openSync(path.join(dir, 'dns.log'), 'a');
    const dns = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO, 'cli/tskube.ts'),
        'dns',
        `--kubeconfig=${api.srv.kubeconfigs['kubernetes-admin']!}`,
        `--dns-address=127.0.0.1:${DNS_PORT}`,
        '--health-address=127.0.0.1:0',
        '--ready-address=127.0.0.1:0',
        '--metrics-address=127.0.0.1:0',
        `--upstream=127.0.0.1:${FLOOR_PORT}`,
      ],
      { stdio: ['ignore', dnsLog, dnsLog], cwd: REPO },
    );
    children.push(dns);
    // The floor: dnsmasq answering the same names from a hosts file, authoritative for cluster.local (NXDOMAIN for the rest of it).
    const hosts = path.join(dir, 'hosts');
    fs.writeFileSync(
      hosts,
      [`${webIP} web.default.svc.cluster.local`, ...dbIPs.map((ip) => `${ip} db.default.svc.cluster.local`)].join(
        '\n',
      ) + '\n',
    );
    const floor = spawn(
      'dnsmasq',
      [
        '--keep-in-foreground',
        '--no-resolv',
        '--no-hosts',
        '--conf-file=/dev/null',
        `--addn-hosts=${hosts}`,
        '--local=/cluster.local/',
        '--listen-address=127.0.0.1',
        '--bind-interfaces',
        `--port=${FLOOR_PORT}`,
        '--user=root',
        '--group=root',
        `--pid-file=${path.join(dir, 'dnsmasq.pid')}`,
        '--cache-size=0',
      ],
      { stdio: 'ignore' },
    );
    children.push(floor);
    const withCoreDNS = fs.existsSync(COREDNS);
    let coredns: ChildProcess | undefined;
    if (withCoreDNS) {
      const conf = path.join(dir, 'Corefile');
      fs.writeFileSync(
        conf,
        corefile(api.srv.kubeconfigs['kubernetes-admin']!, `127.0.0.1:${FLOOR_PORT}`, COREDNS_PORT),
      );
      const log = fs.openSync(path.join(dir, 'coredns.log'), 'a');
      coredns = spawn(COREDNS, ['-conf', conf], { stdio: ['ignore', log, log], cwd: dir });
      children.push(coredns);
    }
    await until('the servers answering', () => {
      try {
        return [DNS_PORT, FLOOR_PORT, ...(withCoreDNS ? [COREDNS_PORT] : [])].every(
          (port) => dig(port, 'web.default.svc.cluster.local') === webIP,
        );
      } catch {
        return false;
      }
    });

    const queries: [string, string][] = [
      ['Service (ClusterIP)', 'web.default.svc.cluster.local A'],
      ['headless (3 endpoints)', 'db.default.svc.cluster.local A'],
      ['NXDOMAIN', 'nope.default.svc.cluster.local A'],
    ];
    const rows: Row[] = [];
    for (const [name, line] of queries) {
      const file = path.join(dir, `${name.replace(/\W+/g, '-')}.txt`);
      fs.writeFileSync(file, `${line}\n`);
      for (const [server, port] of [
        ['dnsmasq', FLOOR_PORT],
        ['tskube', DNS_PORT],
        ...(withCoreDNS ? ([['coredns', COREDNS_PORT]] as const) : []),
      ] as const) {
        const r = dnsperf(port, file);
        rows.push({
          name,
          server,
          qps: r.qps,
          p50ms: percentile(r.latencies, 50),
          p99ms: percentile(r.latencies, 99),
          lost: r.lost,
        });
      }
    }

    const rssBefore = rssKiB(dns.pid!);
    const corednsBefore = coredns ? rssKiB(coredns.pid!) : undefined;
    const t0 = Date.now();
    // 10,000 Services with their EndpointSlices, created 50 at a time.
    for (let i = 0; i < SERVICES; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, SERVICES - i) }, async (_, j) => {
          const n = i + j;
          await admin.create('/api/v1/namespaces/default/services', {
            metadata: { name: `s${n}` },
            spec: { ports: [{ name: 'http', port: 80 }] },
          });
          await admin.create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
            metadata: { name: `s${n}-1`, labels: { 'kubernetes.io/service-name': `s${n}` } },
            addressType: 'IPv4',
            ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
            endpoints: [
              { addresses: [`10.${100 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`], conditions: { ready: true } },
            ],
          });
        }),
      );
    }
    const createMs = Date.now() - t0;
    await until('the last Service to resolve', () => {
      try {
        return [DNS_PORT, ...(withCoreDNS ? [COREDNS_PORT] : [])].every(
          (port) => dig(port, `s${SERVICES - 1}.default.svc.cluster.local`) !== '',
        );
      } catch {
        return false;
      }
    });
    global.gc?.();
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfter = rssKiB(dns.pid!);
    const coreDNSRss =
      coredns && corednsBefore !== undefined ? { beforeKiB: corednsBefore, afterKiB: rssKiB(coredns.pid!) } : undefined;
    process.stdout.write(
      `${JSON.stringify({ rows, rssBeforeKiB: rssBefore, rssAfterKiB: rssAfter, coreDNSRss, services: SERVICES, createMs, seconds: SECONDS })}\n`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await api.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
