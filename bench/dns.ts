// Benchmark: the cluster DNS server. In a throwaway network
// namespace, dnsperf (Debian) sends the same queries to `tskube dns` and to
// dnsmasq answering the same names from a hosts file (the floor): queries per
// second and p50/p99 latency for a Service name, a headless name and an
// NXDOMAIN, with the ratios, and CoreDNS beside them when its fixture is built;
// then the servers' memory with 10,000 Services.
// Run as root: npm run bench:dns (BENCH_SECONDS, BENCH_SERVICES to change).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { REPO } from '../e2e/harness.js';
import { sh } from '../e2e/proc.js';
import type { Row } from './dns-runner.js';

const f1 = (n: number): string => n.toFixed(1);
const ms = (n: number): string => `${n.toFixed(3)} ms`;

function main(): void {
  if (process.getuid?.() !== 0) throw new Error('run as root (network namespaces)');
  for (const c of ['dnsperf', 'dnsmasq', 'dig'])
    if (!sh('sh', ['-c', `command -v ${c}`], { allowFail: true }).trim())
      throw new Error(`${c} missing: run scripts/install-deps.sh`);
  const netns = `tskube-bench-${randomBytes(3).toString('hex')}`;
  sh('ip', ['netns', 'add', netns]);
  let r: {
    rows: Row[];
    rssBeforeKiB: number;
    rssAfterKiB: number;
    coreDNSRss?: { beforeKiB: number; afterKiB: number };
    services: number;
    createMs: number;
    seconds: number;
  };
  try {
    const out = execFileSync(
      'nsenter',
      [`--net=/run/netns/${netns}`, process.execPath, '--import', 'tsx', path.join(REPO, 'bench/dns-runner.ts')],
      {
        cwd: REPO,
        encoding: 'utf8',
        maxBuffer: 16 << 20,
        timeout: 1_800_000,
        env: process.env,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    r = JSON.parse(out.trim().split('\n').pop()!) as typeof r;
  } finally {
    sh('ip', ['netns', 'del', netns], { allowFail: true });
  }
  const core = (name: string): Row | undefined => r.rows.find((x) => x.name === name && x.server === 'coredns');
  const withCoreDNS = r.rows.some((x) => x.server === 'coredns');
  process.stdout.write(
    `\n== cluster DNS: tskube dns against ${withCoreDNS ? 'CoreDNS (a Corefile as kubeadm v1.37 writes) and ' : ''}dnsmasq from a hosts file (the floor), dnsperf -c 4 -q 20 for ${r.seconds} s each, UDP on loopback ==\n`,
  );
  if (!withCoreDNS)
    process.stdout.write('CoreDNS columns skipped: no CoreDNS fixture (npm run upstream -- build coredns builds it)\n');
  process.stdout.write(
    `| query | dnsmasq qps | tskube qps |${withCoreDNS ? ' CoreDNS qps | tskube/CoreDNS qps (goal ≥ 1.0) |' : ''} tskube/dnsmasq qps | dnsmasq p50 | tskube p50 |${withCoreDNS ? ' CoreDNS p50 | CoreDNS p99 |' : ''} dnsmasq p99 | tskube p99 |${withCoreDNS ? ' tskube/CoreDNS p99 (goal ≤ 1.0) |' : ''} lost (tskube) |\n|${'---|'.repeat(withCoreDNS ? 14 : 9)}\n`,
  );
  const verdict = (x: number, ok: boolean): string => `${x.toFixed(2)} ${ok ? 'met' : 'NOT met'}`;
  for (const name of [...new Set(r.rows.map((x) => x.name))]) {
    const floor = r.rows.find((x) => x.name === name && x.server === 'dnsmasq')!;
    const ts = r.rows.find((x) => x.name === name && x.server === 'tskube')!;
    const c = core(name);
    const qps = c ? ts.qps / c.qps : 0;
    const p99 = c ? ts.p99ms / c.p99ms : 0;
    process.stdout.write(
      `| ${name} | ${f1(floor.qps)} | ${f1(ts.qps)} |${c ? ` ${f1(c.qps)} | ${verdict(qps, qps >= 1)} |` : ''} ${(ts.qps / floor.qps).toFixed(2)} | ${ms(floor.p50ms)} | ${ms(ts.p50ms)} |${c ? ` ${ms(c.p50ms)} | ${ms(c.p99ms)} |` : ''} ${ms(floor.p99ms)} | ${ms(ts.p99ms)} |${c ? ` ${verdict(p99, p99 <= 1)} |` : ''} ${ts.lost} |\n`,
    );
  }
  const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
  process.stdout.write(
    `\nmemory (RSS) of tskube dns: ${mib(r.rssBeforeKiB)} with 3 Services; ${mib(r.rssAfterKiB)} with ${r.services} more Services and their EndpointSlices (+${((r.rssAfterKiB - r.rssBeforeKiB) / r.services).toFixed(2)} KiB each); creating them took ${(r.createMs / 1000).toFixed(1)} s\n`,
  );
  if (r.coreDNSRss)
    process.stdout.write(
      `memory (RSS) of CoreDNS: ${mib(r.coreDNSRss.beforeKiB)} with 3 Services; ${mib(r.coreDNSRss.afterKiB)} with ${r.services} more (+${((r.coreDNSRss.afterKiB - r.coreDNSRss.beforeKiB) / r.services).toFixed(2)} KiB each); tskube/CoreDNS at ${r.services}: ${(r.rssAfterKiB / r.coreDNSRss.afterKiB).toFixed(2)}\n`,
    );
}

main();
