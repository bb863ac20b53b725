// Runs inside a throwaway network namespace (bench/join.ts starts it): a dev
// apiserver with N simulated Nodes, the agent's host-gw pod network watching
// them, and the time from one more Node's create to its route in the kernel,
// beside the time of one `ip route replace` (the floor). Prints JSON.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { execIp, type IpCommand, PodNetwork } from '../agent/network/network.js';
import { createLogger } from '../kube/log.js';
import { startTestApiServer } from '../testing/apiserver.js';
import { runBench } from './stats.js';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ip = (args: string[]): string => execFileSync('ip', args, { encoding: 'utf8' });

// Node i: podCIDR 10.(64 + i/256).(i%256).0/24, reached via 10.200.(i/250).(i%250 + 2) on a veth.
const podCIDR = (i: number): string => `10.${64 + Math.floor(i / 256)}.${i % 256}.0/24`;
const nodeIP = (i: number): string => `10.200.${Math.floor(i / 250)}.${(i % 250) + 2}`;
const nodeObj = (i: number) => ({
  metadata: { name: `sim-${i}` },
  spec: { podCIDR: podCIDR(i), podCIDRs: [podCIDR(i)] },
  status: { addresses: [{ type: 'InternalIP', address: nodeIP(i) }] },
});

/** `ip` that tells when a given route replace has finished. */
class Watched implements IpCommand {
  private waiters = new Map<string, () => void>();
  run(args: string[], bin?: 'ip' | 'bridge', input?: string): Promise<string> {
    return execIp.run(args, bin, input).then((out) => {
      const lines = input
        ? input
            .trim()
            .split('\n')
            .map((l) => l.split(' '))
        : [args];
      for (const a of lines) if (a[0] === 'route' && a[1] === 'replace') this.waiters.get(a[2]!)?.();
      return out;
    });
  }
  when(dst: string): Promise<void> {
    return new Promise((r) => this.waiters.set(dst, r));
  }
}

async function main(): Promise<void> {
  ip(['link', 'add', 'bench0', 'type', 'veth', 'peer', 'name', 'bench1']);
  ip(['addr', 'add', '10.200.0.1/16', 'dev', 'bench0']);
  ip(['link', 'set', 'bench0', 'up']);
  ip(['link', 'set', 'bench1', 'up']);
  // The floor: one `ip route replace`, as the reconciler runs it.
  const floor: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    ip(['route', 'replace', '10.250.0.0/24', 'via', '10.200.0.2', 'proto', '77']);
    floor.push(performance.now() - t);
  }
  ip(['route', 'del', '10.250.0.0/24', 'proto', '77']);
  const sizes = (process.env.BENCH_NODES ?? '10,100,1000').split(',').map(Number);
  const results: { nodes: number; initialMs: number; addMs: number[] }[] = [];
  for (const n of sizes) {
    const api = await startTestApiServer('self', { controllers: [] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bench-net-'));
    const watched = new Watched();
    try {
      await api.admin.create('/api/v1/nodes', {
        metadata: { name: 'self' },
        spec: { podCIDR: '10.63.0.0/24', podCIDRs: ['10.63.0.0/24'] },
        status: { addresses: [{ type: 'InternalIP', address: '10.200.0.1' }] },
      });
      for (let i = 0; i < n; i++) await api.admin.create('/api/v1/nodes', nodeObj(i));
      const net = new PodNetwork({
        mode: 'host-gw',
        nodeName: 'self',
        nodeIP: '10.200.0.1',
        client: api.admin,
        cniConfDir: dir,
        log: createLogger('bench', { sink: () => {} }),
        ip: watched,
      });
      const last = watched.when(podCIDR(n - 1));
      const t0 = performance.now();
      await net.start();
      await last;
      const initialMs = performance.now() - t0;
      const addMs: number[] = [];
      for (let k = 0; k < 5; k++) {
        const i = n + k;
        const done = watched.when(podCIDR(i));
        const t = performance.now();
        await api.admin.create('/api/v1/nodes', nodeObj(i));
        await done;
        addMs.push(performance.now() - t);
      }
      const routes = ip(['route', 'show', 'proto', '77']).trim().split('\n').length;
      if (routes !== n + 5) throw new Error(`expected ${n + 5} routes, found ${routes}`);
      results.push({ nodes: n, initialMs, addMs });
      await net.stop();
    } finally {
      await api.stop();
      ip(['route', 'flush', 'proto', '77']);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stdout.write(`${JSON.stringify({ floorMs: median(floor), results })}\n`);
}

runBench(main);
