// bench/proxy-sync's floor for a one-endpoint change: the same kind of update
// seen by a bare watcher in a process of its own (the REST client of the
// proxy's informers, nothing else): EndpointSlices with the proxy's label
// selector, or the collection argv[4] with the label selector argv[5] (the
// runner's ConfigMaps: updates the proxy does not wake for, so that the two
// can be timed in turns while both run). With argv[3] > 0 the process first
// grows to that many MiB resident with a buffer it never touches again: on
// some VMs (shadow paging, presumably) waking an idle process costs time
// that grows with its resident memory, and a floor as large as the proxy
// pays it too. Prints a JSON line once watching (with its RSS) and one per
// event, with when it arrived (fractional wall-clock ms, as the runner's).
// Started by bench/proxy-sync-runner.ts.
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { NOT_OURS } from '../proxy/proxier.js';

const client = new KubeClient(loadKubeconfig(process.argv[2]!));
const wallMs = (): number => performance.timeOrigin + performance.now();
const MiB = 2 ** 20;
/** Held for the life of the process (a local could be collected once unused). */
const held: Buffer[] = [];

/** Resident, untouched memory: filled once so every page is present, then only held. */
function growTo(targetMiB: number): void {
  const missing = targetMiB - process.memoryUsage().rss / MiB;
  if (missing > 0) held.push(Buffer.alloc(Math.round(missing * MiB), 1));
}

async function main(): Promise<void> {
  growTo(Number(process.argv[3] ?? 0));
  const [path, labelSelector] = process.argv[4]
    ? [process.argv[4], process.argv[5]!]
    : ['/apis/discovery.k8s.io/v1/endpointslices', NOT_OURS];
  // One item is enough for the resourceVersion to watch from.
  const list = await client.get(path, { labelSelector, limit: 1 });
  process.stdout.write(`${JSON.stringify({ ready: true, rssMiB: process.memoryUsage().rss / MiB })}\n`);
  for await (const e of client.watch(path, {
    labelSelector,
    resourceVersion: list.metadata.resourceVersion as string,
    allowWatchBookmarks: false,
  }))
    process.stdout.write(`${JSON.stringify({ at: wallMs(), type: e.type, name: e.object.metadata?.name })}\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`proxy-sync-floor: ${e.stack}\n`);
  process.exit(1);
});
