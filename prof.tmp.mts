// Scratch: CPU profile of the kubelet starting 30 API pods (deleted after use).
import fs from 'node:fs';
import path from 'node:path';
import { APP_IMAGE } from './e2e/harness.ts';
import { TestCluster } from './e2e/cluster.ts';
import { waitFor } from './e2e/proc.ts';
const dir = '/tmp/kprof';
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(dir);
const cluster = new TestCluster({ kubeletConfig: 'maxPods: 120\n', kubeletEnv: { NODE_OPTIONS: "--require /tmp/prof-preload.cjs" } });
try {
  await cluster.start(async (node) => void (await node.cri.pullImage(APP_IMAGE, null)));
  await waitFor(() => /\sReady/.test(cluster.kubectl(['get', 'nodes'])), 120_000, 500, 'node Ready');
  cluster.kubectl(['create', 'deployment', 'load', `--image=${APP_IMAGE}`, '--replicas=30', '--', 'sleep', '36000']);
  await waitFor(() => (cluster.kubectl(['get', 'pods', '--no-headers']).match(/1\/1\s+Running/g) ?? []).length === 30, 15 * 60_000, 500, '30 pods running');
  await new Promise((r) => setTimeout(r, 3000));
  await cluster.node.stopKubelet('SIGTERM');
} finally {
  await cluster.cleanup();
}
console.log(fs.readdirSync(dir));
