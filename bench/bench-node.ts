// A benchmark's node: the e2e harness's throwaway namespace with containerd
// and the registry, the app image already pulled, cleaned up afterwards.
import fs from 'node:fs';
import path from 'node:path';

import { L_POD_UID } from '../agent/pods/labels.js';
import { APP_IMAGE, e2eSkipReason, REPO, sweepStale, TestNode } from '../e2e/harness.js';

export async function withBenchNode<T>(fn: (node: TestNode, imageRef: string) => Promise<T>): Promise<T> {
  const skip = e2eSkipReason();
  if (skip) throw new Error(skip);
  await sweepStale();
  const node = new TestNode('bench');
  try {
    await node.start();
    // Pre-pull, so that nothing measured includes the registry.
    const imageRef = await node.cri.pullImage(APP_IMAGE, null);
    return await fn(node, imageRef);
  } finally {
    await node.cleanup();
  }
}

export { runBench } from './stats.js';

/** tskube's agents as users run them, the compiled build (TSKUBE_CLI=tsx measures through tsx instead). */
export function useCompiledCli(): void {
  process.env.TSKUBE_CLI ??= 'compiled';
  if (process.env.TSKUBE_CLI === 'compiled' && !fs.existsSync(path.join(REPO, 'dist/cli/tskube.js')))
    throw new Error('no compiled build: run `npm run build` first (or TSKUBE_CLI=tsx)');
}

/** A static pod manifest for benchmarks; `containers` is the YAML list under spec.containers. */
export const podManifest = (name: string, containers: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
${containers}`;

/** A container that idles until SIGTERM, for the startup benchmarks. */
export const IDLE_CMD = "trap 'exit 0' TERM; while true; do sleep 1; done";

/**
 * The raw CRI floor: RunPodSandbox + CreateContainer + StartContainer for n
 * pods at once from a minimal script; ms from the start to each container
 * started. Run it before a kubelet starts: it would rightly remove these
 * pods as orphans.
 */
export async function criFloor(node: TestNode, n: number, imageRef: string): Promise<number[]> {
  const t0 = Date.now();
  const lat = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const uid = `floor-${n}-${i}-${Date.now()}`;
      const cfg = {
        metadata: { name: `floor-${i}`, uid, namespace: 'default', attempt: 0 },
        hostname: `floor-${i}`,
        log_directory: path.join(node.podLogsDir, uid),
        labels: { [L_POD_UID]: uid },
        linux: {
          security_context: {
            namespace_options: { network: 'POD' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const },
          },
        },
      };
      fs.mkdirSync(cfg.log_directory, { recursive: true });
      const sb = await node.cri.runPodSandbox(cfg, uid);
      const id = await node.cri.createContainer(
        sb,
        {
          metadata: { name: 'main', attempt: 0 },
          image: { image: imageRef },
          command: ['/bin/sh', '-c', IDLE_CMD],
          labels: { [L_POD_UID]: uid },
          log_path: 'main.log',
        },
        cfg,
        uid,
      );
      await node.cri.startContainer(id, uid);
      return Date.now() - t0;
    }),
  );
  await clearRuntime(node);
  return lat;
}

/** Stops and removes every sandbox in the node's runtime, so the next kubelet or floor starts from nothing. */
export async function clearRuntime(node: TestNode): Promise<void> {
  for (const s of await node.cri.listPodSandbox()) {
    await node.cri.stopPodSandbox(s.id).catch(() => undefined);
    await node.cri.removePodSandbox(s.id).catch(() => undefined);
  }
}
