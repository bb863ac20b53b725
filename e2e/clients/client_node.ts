// @kubernetes/client-node 1.4 against tskube apiserver. `api`: Watch (its
// promise resolves once the headers are in, before any event), makeInformer
// start and restart, KubernetesObjectApi server-side apply. `exec <pod>`:
// Exec over WebSocket into a real pod. Prints one line per check; the e2e
// tests assert on them.
import { PassThrough } from 'node:stream';

import * as k8s from '@kubernetes/client-node';

const [kubeconfig, mode, pod] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig!);
const core = kc.makeApiClient(k8s.CoreV1Api);
const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_r, rej) => setTimeout(() => rej(new Error(`${what}: nothing within ${ms} ms`)), ms)),
  ]);

async function api(): Promise<void> {
  // Watch: the call returns when the response starts, on a quiet collection too.
  const seen: string[] = [];
  let added!: () => void;
  const gotAdd = new Promise<void>((r) => (added = r));
  const ctl = await within(
    new k8s.Watch(kc).watch(
      '/api/v1/namespaces/default/configmaps',
      {},
      (type, obj: k8s.V1ConfigMap) => {
        seen.push(`${type}:${obj.metadata?.name}`);
        if (obj.metadata?.name === 'js-watched') added();
      },
      () => {},
    ),
    5000,
    'watch start',
  );
  console.log('watch started');
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name: 'js-watched' }, data: { a: '1' } },
  });
  await within(gotAdd, 5000, 'ADDED event');
  ctl.abort();
  console.log('watch:', seen.filter((s) => s.endsWith('js-watched')).join(' '));

  // Informer: lists, then watches; stopped and started again, it lists again.
  const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/configmaps', () =>
    core.listNamespacedConfigMap({ namespace: 'default' }),
  );
  const names = new Set<string>();
  informer.on('add', (o: k8s.V1ConfigMap) => names.add(o.metadata!.name!));
  await within(informer.start(), 5000, 'informer start');
  console.log('informer has js-watched:', names.has('js-watched'));
  await informer.stop();
  await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'js-later' } } });
  await within(informer.start(), 5000, 'informer restart');
  const deadline = Date.now() + 5000;
  while (!names.has('js-later') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  console.log('informer after restart has js-later:', names.has('js-later'));
  await informer.stop();

  // KubernetesObjectApi: server-side apply creates, then a second manager conflicts unless forced.
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const cm = (v: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'js-applied', namespace: 'default' },
    data: { v },
  });
  const applied = await objects.patch(
    cm('1'),
    undefined,
    undefined,
    'js-one',
    undefined,
    k8s.PatchStrategy.ServerSideApply,
  );
  console.log(
    'applied:',
    (applied as k8s.V1ConfigMap).data?.v,
    (applied as k8s.V1ConfigMap).metadata?.managedFields
      ?.map((m: k8s.V1ManagedFieldsEntry) => `${m.manager}/${m.operation}`)
      .join(','),
  );
  try {
    await objects.patch(cm('2'), undefined, undefined, 'js-two', undefined, k8s.PatchStrategy.ServerSideApply);
    console.log('conflict: none');
  } catch (e) {
    console.log('conflict:', (e as { code?: number }).code);
  }
  const forced = await objects.patch(cm('2'), undefined, undefined, 'js-two', true, k8s.PatchStrategy.ServerSideApply);
  console.log('forced:', (forced as k8s.V1ConfigMap).data?.v);
}

async function exec(): Promise<void> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (b: Buffer) => (stdout += b.toString()));
  err.on('data', (b: Buffer) => (stderr += b.toString()));
  const status = await within(
    new Promise<k8s.V1Status>((resolve, reject) => {
      new k8s.Exec(kc)
        .exec(
          'default',
          pod!,
          '',
          ['sh', '-c', 'cat /etc/hostname; echo e >&2; exit 5'],
          out,
          err,
          null,
          false,
          resolve,
        )
        .catch(reject);
    }),
    15000,
    'exec status',
  );
  console.log('exec stdout:', stdout.trim(), 'stderr:', stderr.trim());
  console.log('exec status:', status.status, status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message);
}

await (mode === 'exec' ? exec() : api());
process.exit(0);
