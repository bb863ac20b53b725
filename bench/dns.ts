// Benchmark: the cluster DNS server. In a throwaway network
// namespace, dnsperf (Debian) sends the same queries to `tskube dns` and to
// dnsmasq answering the same names from a hosts file (the floor): queries per
// second and p50/p99 latency for a Service name, a headless name and an
// NXDOMAIN, with the ratios; then the server's memory with 10,000 Services.
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
  process.stdout.write(
    `\n== cluster DNS: tskube dns against dnsmasq from a hosts file (the floor), dnsperf -c 4 -q 20 for ${r.seconds} s each, UDP on loopback ==\n`,
  );
  process.stdout.write(
    '| query | dnsmasq qps | tskube qps | qps ratio | dnsmasq p50 | tskube p50 | dnsmasq p99 | tskube p99 | p99 ratio | lost (tskube) |\n|---|---|---|---|---|---|---|---|---|---|\n',
  );
  for (const name of [...new Set(r.rows.map((x) => x.name))]) {
    const floor = r.rows.find((x) => x.name === name && x.server === 'dnsmasq')!;
    const ts = r.rows.find((x) => x.name === name && x.server === 'tskube')!;
    process.stdout.write(
      `| ${name} | ${f1(floor.qps)} | ${f1(ts.qps)} | ${(ts.qps / floor.qps).toFixed(2)} | ${ms(floor.p50ms)} | ${ms(ts.p50ms)} | ${ms(floor.p99ms)} | ${ms(ts.p99ms)} | ${(ts.p99ms / floor.p99ms).toFixed(2)} | ${ts.lost} |\n`,
    );
  }
  process.stdout.write(
    `\nmemory (RSS) of tskube dns: ${(r.rssBeforeKiB / 1024).toFixed(1)} MiB with 3 Services; ${(r.rssAfterKiB / 1024).toFixed(1)} MiB with ${r.services} more Services and their EndpointSlices (+${((r.rssAfterKiB - r.rssBeforeKiB) / r.services).toFixed(2)} KiB each); creating them took ${(r.createMs / 1000).toFixed(1)} s\n`,
  );
  process.stdout.write(
    'goal: none stated beyond printing these beside the floor; CoreDNS is commonly sized at 70 MiB plus about 1 KiB per Service\n',
  );
}

main();
