import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { KubeClient } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { type ApiServerConfig, startApiServer } from '../main.js';

test('with --data-dir a restart loses nothing acknowledged, and informers carry on', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-restart-'));
  const cfg: ApiServerConfig = {
    certDir: path.join(dir, 'pki'),
    dataDir: path.join(dir, 'data'),
    bindAddress: '127.0.0.1',
    securePort: 0,
    advertiseAddress: '',
    serviceClusterIpRange: '10.96.0.0/12',
    nodeNames: [],
    log: () => {},
  };
  let srv = await startApiServer(cfg);
  const port = srv.port;
  const client = new KubeClient(loadKubeconfig(srv.kubeconfigs['kubernetes-admin']!));
  const acked: string[] = [];
  for (let i = 0; i < 20; i++)
    acked.push(
      (
        await client.create('/api/v1/namespaces/default/configmaps', {
          metadata: { name: `cm${i}` },
          data: { i: String(i) },
        })
      ).metadata.name,
    );
  const svc = await client.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'svc' },
    spec: { ports: [{ port: 80 }] },
  });
  const seen = new Set<string>();
  const errors: string[] = [];
  const inf = new Informer(client, {
    path: '/api/v1/namespaces/default/configmaps',
    onAdd: (o) => seen.add(o.metadata.name),
    onError: (e) => errors.push(e.message),
    backoffInitialMs: 50,
    backoffMaxMs: 500,
  });
  await inf.start();

  await srv.stop();
  srv = await startApiServer({ ...cfg, securePort: port });
  // Same CA and client certificates after the restart: the old kubeconfig still works.
  for (const name of acked)
    assert.equal((await client.get(`/api/v1/namespaces/default/configmaps/${name}`)).metadata.name, name);
  const svc2 = await client.get('/api/v1/namespaces/default/services/svc');
  assert.equal(svc2.spec.clusterIP, svc.spec.clusterIP);
  const other = await client.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'svc2' },
    spec: { ports: [{ port: 80 }] },
  });
  assert.notEqual(other.spec.clusterIP, svc.spec.clusterIP, 'allocations survive the restart');
  const after = await client.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'after-restart' } });
  assert.ok(Number(after.metadata.resourceVersion) > Number(svc.metadata.resourceVersion));
  const end = Date.now() + 10_000;
  while (!seen.has('after-restart') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  await inf.stop();
  assert.ok(seen.has('after-restart'), `informer reconnected (errors: ${errors.length})`);
  client.close();
  await srv.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});
