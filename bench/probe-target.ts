// bench/probes, the probes' target, run inside the node's network namespace:
// one HTTP listener (each pod's readiness probe asks for its own path) and one
// TCP listener per pod (its liveness probe), so the probe period error is read
// from when probes arrive, the same way for any prober (tskube's kubelet, the
// upstream kubelet, a bare script). Once a PID appears in <pidFile> and every
// probe has arrived a few times, it measures for <seconds>: the intervals, and
// that process's CPU and RSS. Prints one JSON line.
//   probe-target.ts <host> <port0> <n> <seconds> <pidFile>
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';

import { waitFor } from '../e2e/proc.js';
import { type ProbeWindow, probeWindow } from './probe-window.js';
import { childCpuSeconds, cpuSeconds, rssKiB } from './stats.js';

const [host, port0Arg, nArg, secArg, pidFile] = process.argv.slice(2) as [string, string, string, string, string];
const PORT0 = Number(port0Arg);
const N = Number(nArg);
const SECONDS = Number(secArg);
/** Arrivals each probe must have made before the window opens (the prober is past its start). */
const WARM = 3;

const arrivals = new Map<string, number[]>();
const arrived = (key: string): void => {
  let a = arrivals.get(key);
  if (!a) arrivals.set(key, (a = []));
  a.push(performance.now());
};

async function main(): Promise<void> {
  const servers: net.Server[] = [];
  const web = http.createServer((req, res) => {
    arrived(`http ${req.url ?? ''}`);
    res.end('ok');
  });
  web.keepAliveTimeout = 0;
  servers.push(web);
  for (let i = 0; i < N; i++)
    servers.push(
      net.createServer((s) => {
        arrived(`tcp ${i}`);
        s.end();
      }),
    );
  await Promise.all(servers.map((s, i) => new Promise<void>((r) => s.listen(PORT0 + i, host, () => r()))));
  process.stderr.write('listening\n');

  const pid = await waitFor(
    () => Number(fs.readFileSync(pidFile, 'utf8').trim() || 0) || undefined,
    600_000,
    100,
    'a prober PID',
  ).catch(() => {
    throw new Error(`no prober PID in ${pidFile}`);
  });
  await waitFor(
    () => arrivals.size >= 2 * N && [...arrivals.values()].every((a) => a.length >= WARM),
    900_000,
    200,
    `all ${2 * N} probes arriving`,
  );
  const cpu = (): number => cpuSeconds(pid) + childCpuSeconds(pid);
  const from = performance.now();
  const c0 = cpu();
  const rss: number[] = [];
  while (performance.now() - from < SECONDS * 1000) {
    rss.push(rssKiB(pid));
    await new Promise((r) => setTimeout(r, 1000));
  }
  const to = performance.now();
  const w: ProbeWindow = probeWindow(arrivals, 1000, from, to, {
    cpuSec: cpu() - c0,
    rssKiB: rss,
  });
  process.stdout.write(`${JSON.stringify(w)}\n`);
  for (const s of servers) s.close();
  process.exit(0);
}

main().catch((e: Error) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
