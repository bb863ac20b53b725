// Benchmark: the EndpointSlice controller at scale: 10,000 Services
// × 10 ready pods (BENCH_SERVICES, BENCH_PODS_PER_SERVICE) in one namespace of
// an in-process dev apiserver; from the controller's start to every Service
// having its slice of 10 endpoints, then one pod's readiness flipping to the
// slice update. The baseline, measured in the same run, is the floor of the
// writes alone: the same slices created straight into the Api.
// Run: npm run bench:endpointslices
import { Api } from '../apiserver/api/api.js';
import { LocalClient } from '../apiserver/api/local-client.js';
import { EndpointSliceController } from '../apiserver/controllers/endpoint-controllers.js';
import { desiredSlices } from '../apiserver/controllers/endpoints-model.js';
import { Store } from '../apiserver/storage/store.js';
import { waitFor } from '../e2e/proc.js';
import { memoryLogger } from '../kube/log.js';
import { runBench } from './stats.js';

const SERVICES = Number(process.env.BENCH_SERVICES ?? 10_000);
const PODS = Number(process.env.BENCH_PODS_PER_SERVICE ?? 10);
const ms = (x: number): string => `${x.toFixed(0)} ms`;

function cluster(): { api: Api; client: LocalClient } {
  const api = new Api(new Store(), '10.96.0.0/12');
  const client = new LocalClient(api);
  const svcs = api.res('', 'services');
  const pods = api.res('', 'pods');
  for (let i = 0; i < SERVICES; i++) {
    api.create(svcs, 'default', {
      metadata: { name: `svc${i}` },
      spec: { selector: { app: `app${i}` }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    for (let k = 0; k < PODS; k++) {
      const name = `pod${i}-${k}`;
      api.create(pods, 'default', {
        metadata: { name, labels: { app: `app${i}`, 'pod-template-hash': 'abc' } },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i:1', ports: [{ containerPort: 8080 }] }] },
      });
      const ip = `10.${(i >> 8) & 255}.${i & 255}.${k + 1}`;
      api.update(
        pods,
        'default',
        name,
        {
          ...api.get(pods, 'default', name),
          status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
        },
        'status',
      );
    }
  }
  return { api, client };
}

runBench(async () => {
  process.stdout.write(`EndpointSlice controller: ${SERVICES} Services × ${PODS} ready pods in one namespace\n`);
  // Floor: the same slices, computed and written straight into an Api (no watches, no controller).
  let floor: number;
  {
    const { api } = cluster();
    const slices = api.res('discovery.k8s.io', 'endpointslices');
    const svcs = (api.list(api.res('', 'services'), 'default').items as Record<string, any>[]).filter(
      (s) => s.spec.selector,
    );
    const pods = api.list(api.res('', 'pods'), 'default').items as Record<string, any>[];
    const byApp = new Map<string, Record<string, any>[]>();
    for (const p of pods)
      (byApp.get(p.metadata.labels.app) ?? byApp.set(p.metadata.labels.app, []).get(p.metadata.labels.app)!).push(p);
    const t0 = performance.now();
    for (const s of svcs) {
      for (const c of desiredSlices(s, byApp.get(s.spec.selector.app) ?? [])) {
        api.create(slices, 'default', {
          metadata: { generateName: `${s.metadata.name}-`, labels: { 'kubernetes.io/service-name': s.metadata.name } },
          addressType: 'IPv4',
          ports: c.ports,
          endpoints: c.endpoints,
        });
      }
    }
    floor = performance.now() - t0;
    process.stdout.write(`floor (compute and create every slice directly): ${ms(floor)}\n`);
  }
  const { api, client } = cluster();
  const slices = api.res('discovery.k8s.io', 'endpointslices');
  const count = (): number =>
    (api.list(slices, 'default').items as Record<string, any>[]).filter((s) => (s.endpoints ?? []).length === PODS)
      .length;
  const ctl = new EndpointSliceController(client, memoryLogger());
  const t0 = performance.now();
  await ctl.start();
  await waitFor(() => count() === SERVICES, 600_000, 100, "every Service's slice");
  const all = performance.now() - t0;
  // One pod becomes unready: its Service's slice follows.
  const pods = api.res('', 'pods');
  const target = `pod${Math.floor(SERVICES / 2)}-0`;
  const u0 = performance.now();
  const cur = api.get(pods, 'default', target);
  api.update(
    pods,
    'default',
    target,
    { ...cur, status: { ...cur.status, conditions: [{ type: 'Ready', status: 'False' }] } },
    'status',
  );
  await waitFor(
    () =>
      (
        api.list(slices, 'default', { labelSelector: `kubernetes.io/service-name=svc${Math.floor(SERVICES / 2)}` })
          .items as Record<string, any>[]
      )[0]?.endpoints?.some((e: any) => e.conditions.ready === false),
    60_000,
    1,
    'slice update',
  );
  const one = performance.now() - u0;
  await ctl.stop();
  process.stdout.write(
    `controller start to all ${SERVICES} slices: ${ms(all)} (ratio to the floor: ${(all / floor).toFixed(1)}; goal: seconds, not O(Services × pods))\n`,
  );
  process.stdout.write(`one pod unready to its slice updated: ${ms(one)}\n`);
});
