// A benchmark's node: the e2e harness's throwaway namespace with containerd
// and the registry, the app image already pulled, cleaned up afterwards.
import { APP_IMAGE, e2eSkipReason, sweepStale, TestNode } from '../e2e/harness.js';

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

/** Runs a benchmark's main, printing a failure without a stack. */
export function runBench(main: () => Promise<void>): void {
  main().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${(e as Error).message}\n`);
    process.exit(1);
  });
}

/** A static pod manifest for benchmarks; `containers` is the YAML list under spec.containers. */
export const podManifest = (name: string, containers: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
${containers}`;
