// bench/proxy-sync's floor for a one-endpoint change: the same EndpointSlice
// update seen by a bare watcher in a small process of its own (the REST client
// and label selector of the proxy's informer, nothing else). Prints a JSON
// line once watching and one per event, with when it arrived (fractional
// wall-clock ms, as the runner's). Started by bench/proxy-sync-runner.ts.
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { NOT_OURS } from '../proxy/proxier.js';

const PATH = '/apis/discovery.k8s.io/v1/endpointslices';
const client = new KubeClient(loadKubeconfig(process.argv[2]!));
const wallMs = (): number => performance.timeOrigin + performance.now();

async function main(): Promise<void> {
  // One item is enough for the resourceVersion to watch from.
  const list = await client.get(PATH, { labelSelector: NOT_OURS, limit: 1 });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const e of client.watch(PATH, { labelSelector: NOT_OURS, resourceVersion: list.metadata.resourceVersion as string, allowWatchBookmarks: false }))
    process.stdout.write(`${JSON.stringify({ at: wallMs(), type: e.type, name: e.object.metadata?.name })}\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`proxy-sync-floor: ${e.stack}\n`);
  process.exit(1);
});
