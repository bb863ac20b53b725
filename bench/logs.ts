// Benchmark: kubectl logs on a 100 MB container log (BENCH_LOG_MB), full and
// --tail=100, each against `cat`/`tail -n 100` of the same file; the kubelet's
// own share (the /containerLogs request straight to :10250); and `kubectl logs
// -f` while 10k lines/s (BENCH_LINES_PER_SEC) are appended for 10 s, against
// `tail -F` of the same file in the same run. Real apiserver, kubelet and
// containerd in a throwaway node namespace. Run as root: npm run bench:logs
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { TestCluster } from '../e2e/cluster.js';
import { APP_IMAGE } from '../e2e/harness.js';
import { waitFor } from '../e2e/proc.js';
import { runBench } from './bench-node.js';

const MB = Number(process.env.BENCH_LOG_MB ?? 100);
const RATE = Number(process.env.BENCH_LINES_PER_SEC ?? 10_000);
const FOLLOW_SECONDS = Number(process.env.BENCH_FOLLOW_SECONDS ?? 10);
const RUNS = 3;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

runBench(async () => {
  const cluster = new TestCluster();
  try {
    await cluster.start();
    const ns = cluster.node.netns;
    const inNs = (cmd: string, args: string[]): [string, string[]] => [
      'nsenter',
      [`--net=/run/netns/${ns}`, cmd, ...args],
    ];
    /** Wall time of one command, its stdout counted by `wc -c` (the same pipe for every row). */
    const time = (cmd: string, args: string[], minBytes = 1): number => {
      const [c, a] = inNs('sh', ['-c', '"$@" | wc -c', 'sh', cmd, ...args]);
      const t0 = performance.now();
      const r = spawnSync(c, a, { encoding: 'utf8', timeout: 300_000 });
      const ms = performance.now() - t0;
      if (r.status !== 0 || !(Number(r.stdout) >= minBytes))
        throw new Error(`${cmd} ${args.join(' ')}: ${r.stdout.trim()} bytes; ${r.stderr}`);
      return ms;
    };
    const kc = (args: string[]): [string, string[]] => ['kubectl', [`--kubeconfig=${cluster.as.kubeconfig}`, ...args]];

    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'logbench' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: APP_IMAGE, command: ['/bin/sleep', '3600'] }],
      },
    });
    await waitFor(() => /Running/.test(cluster.kubectl(['get', 'pod', 'logbench'])), 60_000, 300, 'logbench Running');
    const uid = cluster.kubectl(['get', 'pod', 'logbench', '-o', 'jsonpath={.metadata.uid}']);
    const file = path.join(cluster.node.podLogsDir, `default_logbench_${uid}`, 'c', '0.log');

    // 100 MB of CRI log lines, written as the runtime would.
    const payload = 'x'.repeat(60);
    const chunk: string[] = [];
    let bytes = 0;
    let n = 0;
    const fd = fs.openSync(file, 'a');
    while (bytes < MB * 1024 * 1024) {
      const l = `2026-12-02T10:00:00.${String(n % 1e9).padStart(9, '0')}Z stdout F line ${n} ${payload}\n`;
      chunk.push(l);
      bytes += l.length;
      n++;
      if (chunk.length === 10_000) fs.writeSync(fd, chunk.splice(0).join(''));
    }
    fs.writeSync(fd, chunk.join(''));
    fs.closeSync(fd);
    const size = fs.statSync(file).size;
    const token = cluster.as.token('kubernetes-admin');
    const direct = `https://127.0.0.1:10250/containerLogs/default/logbench/c`;

    const rows: [string, number, number][] = [];
    const measure = (label: string, subject: () => number, baseline: () => number): void => {
      subject(); // warm the page cache and connections
      const s = median(Array.from({ length: RUNS }, subject));
      const b = median(Array.from({ length: RUNS }, baseline));
      rows.push([label, s, b]);
    };
    measure(
      'kubectl logs (full)',
      () => time(...kc(['logs', 'logbench']), size / 2),
      () => time('cat', [file]),
    );
    measure(
      'kubectl logs --tail=100',
      () => time(...kc(['logs', 'logbench', '--tail=100'])),
      () => time('tail', ['-n', '100', file]),
    );
    measure(
      'kubelet /containerLogs (full)',
      () => time('curl', ['-skf', '-H', `Authorization: Bearer ${token}`, direct], size / 2),
      () => time('cat', [file]),
    );
    measure(
      'kubelet /containerLogs?tailLines=100',
      () => time('curl', ['-skf', '-H', `Authorization: Bearer ${token}`, `${direct}?tailLines=100`]),
      () => time('tail', ['-n', '100', file]),
    );

    process.stdout.write(
      `logs: ${(size / 1024 / 1024).toFixed(0)} MB CRI log, ${n} lines; median of ${RUNS} runs; containerd ${(await cluster.node.cri.version()).runtime_version}\n\n`,
    );
    process.stdout.write('                                      |     time ms |  MB/s | baseline ms | ratio\n');
    for (const [label, s, b] of rows) {
      process.stdout.write(
        `${label.padEnd(37)} | ${s.toFixed(0).padStart(11)} | ${(size / 1024 / 1024 / (s / 1000)).toFixed(0).padStart(5)} | ${b.toFixed(1).padStart(11)} | ${(s / b).toFixed(1)}\n`,
      );
    }
    process.stdout.write(
      "each command's output goes through the same pipe to wc -c. baseline: cat (full) or tail -n 100 of the same file. kubectl rows include kubectl start-up, the apiserver hop and TLS twice.\n\n",
    );

    // Follow: both readers see the same appends.
    const follow = (label: string, cmd: string, args: string[]) => {
      const [c, a] = inNs(cmd, args);
      const child = spawn(c, a, { stdio: ['ignore', 'pipe', 'ignore'] });
      const lat: number[] = [];
      let rest = '';
      let last = -1;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        const now = Date.now();
        const lines = (rest + d).split('\n');
        rest = lines.pop()!;
        for (const l of lines) {
          const m = /^f (\d+) (\d+)/.exec(l.replace(/^\S+ stdout F /, ''));
          if (!m) continue;
          last = Number(m[1]);
          lat.push(now - Number(m[2]));
        }
      });
      return {
        label,
        child,
        lat,
        get last() {
          return last;
        },
      };
    };
    const readers = [
      follow('kubectl logs -f', ...kc(['logs', '-f', 'logbench', '--tail=0'])),
      follow('tail -F', 'tail', ['-F', '-n', '0', file]),
    ];
    await new Promise((r) => setTimeout(r, 3000)); // both attached
    const total = RATE * FOLLOW_SECONDS;
    let seq = 0;
    const t0 = Date.now();
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const due = Math.min(total, Math.round(((Date.now() - t0) / 1000) * RATE));
        const out: string[] = [];
        const now = Date.now();
        while (seq < due) out.push(`${new Date(now).toISOString()} stdout F f ${seq++} ${now} ${payload}\n`);
        if (out.length) fs.appendFileSync(file, out.join(''));
        if (seq >= total) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    const wrote = (Date.now() - t0) / 1000;
    await waitFor(() => readers.every((r) => r.last >= total - 1), 60_000, 100, 'readers caught up').catch(
      () => undefined,
    );
    for (const r of readers) r.child.kill();
    process.stdout.write(
      `follow: ${total} lines appended at ${(total / wrote).toFixed(0)} lines/s for ${wrote.toFixed(1)} s\n`,
    );
    process.stdout.write('                 | received | lines/s | latency p50 ms | p99 ms | max ms\n');
    for (const r of readers) {
      process.stdout.write(
        `${r.label.padEnd(16)} | ${String(r.lat.length).padStart(8)} | ${(r.lat.length / wrote).toFixed(0).padStart(7)} | ${String(pct(r.lat, 50)).padStart(14)} | ${String(pct(r.lat, 99)).padStart(6)} | ${String(Math.max(...r.lat)).padStart(6)}\n`,
      );
    }
    const [k, t] = readers;
    process.stdout.write(
      `ratio kubectl/tail: p99 latency ${(pct(k!.lat, 99) / Math.max(1, pct(t!.lat, 99))).toFixed(1)}, lines received ${(k!.lat.length / Math.max(1, t!.lat.length)).toFixed(2)}\n`,
    );
  } finally {
    await cluster.cleanup();
  }
});
