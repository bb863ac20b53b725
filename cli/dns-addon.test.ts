// The DNS add-on and server against the dev apiserver with RBAC on: the
// server's own user can read what it needs and publish its endpoints, and
// answers from informers follow API changes.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import type { DecodedPacket } from 'dns-packet';
import * as packet from 'dns-packet';

import { type RunningDns, startDns } from '../dns/main.js';
import { rcodeOf, udpExchange } from '../dns/testing.js';
import { memoryLogger } from '../kube/log.js';
import { startTestApiServer, type TestApiServer } from '../testing/apiserver.js';
import { dnsAddonObjects, dnsServiceIP, ensureDnsAddon } from './dns-addon.js';
import { loadDnsConfig } from './dns-config.js';

let api: TestApiServer;
let dns: RunningDns;
const log = memoryLogger();

const ask = async (name: string, type: 'A' | 'SRV' = 'A'): Promise<DecodedPacket> =>
  (
    await udpExchange(dns.port, {
      id: 7,
      type: 'query',
      flags: packet.RECURSION_DESIRED,
      questions: [{ name, type, class: 'IN' }],
    })
  ).msg;
const ips = (m: DecodedPacket): unknown[] => (m.answers ?? []).map((a) => (a as { data: unknown }).data).sort();
const rcode = rcodeOf;

async function until<T>(what: string, f: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

before(async () => {
  api = await startTestApiServer('n1', { authorizationModes: ['Node', 'RBAC'], admissionPlugins: ['NodeRestriction'] });
  await ensureDnsAddon(api.srv.kubeconfigs['kubernetes-admin']!, '10.96.0.10', 53, 9153);
  const kubeconfig = api.srv.kubeconfigs['system:coredns']!;
  assert.equal(path.basename(kubeconfig), 'coredns.kubeconfig');
  dns = await startDns(
    loadDnsConfig([
      `--kubeconfig=${kubeconfig}`,
      '--dns-address=127.0.0.1:0',
      '--health-address=127.0.0.1:0',
      '--ready-address=127.0.0.1:0',
      '--metrics-address=127.0.0.1:0',
      '--upstream=127.0.0.1:9',
      '--publish-address=127.0.0.1',
      '--hostname-override=n1',
    ]),
    log,
  );
});
after(async () => {
  await dns?.stop();
  await api?.stop();
});

test("kubeadm's DNS address is the 10th of the Service range; the add-on has kube-dns on it with no selector and CoreDNS's ports", () => {
  assert.equal(dnsServiceIP('10.96.0.0/12'), '10.96.0.10');
  assert.equal(dnsServiceIP('172.20.0.0/16'), '172.20.0.10');
  assert.throws(() => dnsServiceIP('10.0.0.0/30'), /too small/);
  const svc = dnsAddonObjects('10.96.0.10', 53, 9153).find((o) => o.obj.kind === 'Service')!.obj;
  assert.equal(svc.spec.selector, undefined);
  assert.deepEqual(
    svc.spec.ports.map((p: { name: string; port: number; protocol: string }) => `${p.name}/${p.port}/${p.protocol}`),
    ['dns/53/UDP', 'dns-tcp/53/TCP', 'metrics/9153/TCP'],
  );
});

test("with only system:coredns's rights the server follows Services and EndpointSlices, and publishes itself as kube-dns's ready endpoint", async () => {
  const kubeDns = await api.admin.get('/api/v1/namespaces/kube-system/services/kube-dns');
  assert.equal(kubeDns.spec.clusterIP, '10.96.0.10');
  const slice = await api.admin.get(
    '/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices/kube-dns-tskube-dns',
  );
  assert.deepEqual(slice.endpoints, [
    { addresses: ['127.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1' },
  ]);
  assert.equal(slice.ports.find((p: { name: string }) => p.name === 'dns').port, dns.port);
  assert.deepEqual(ips(await ask('kube-dns.kube-system.svc.cluster.local')), ['10.96.0.10']);
  assert.deepEqual(ips(await ask('kubernetes.default.svc.cluster.local')), ['10.96.0.1']);

  await api.admin.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'db' },
    spec: { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] },
  });
  await api.admin.create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
    metadata: { name: 'db-x', labels: { 'kubernetes.io/service-name': 'db' } },
    addressType: 'IPv4',
    ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }],
    endpoints: [
      { addresses: ['10.244.0.8'], conditions: { ready: true } },
      { addresses: ['10.244.0.9'], conditions: { ready: true } },
    ],
  });
  await until('both endpoints', async () =>
    ips(await ask('db.default.svc.cluster.local')).length === 2 ? true : undefined,
  );
  const cur = await api.admin.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/db-x');
  cur.endpoints[1].conditions.ready = false;
  await api.admin.update('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/db-x', cur);
  await until('the unready endpoint to go', async () =>
    ips(await ask('db.default.svc.cluster.local')).join() === '10.244.0.8' ? true : undefined,
  );
  const srv = await ask('_pg._tcp.db.default.svc.cluster.local', 'SRV');
  assert.deepEqual(
    srv.answers!.map((a) => (a as { data: { target: string; port: number } }).data.target),
    ['10-244-0-8.db.default.svc.cluster.local'],
  );
  await api.admin.delete('/api/v1/namespaces/default/services/db');
  await until('NXDOMAIN after the delete', async () =>
    rcode(await ask('db.default.svc.cluster.local')) === 'NXDOMAIN' ? true : undefined,
  );
  // The upstream (port 9, nothing there) is dead: SERVFAIL, and the server goes on.
  assert.equal(rcode(await ask('example.org')), 'SERVFAIL');
  assert.deepEqual(ips(await ask('kubernetes.default.svc.cluster.local')), ['10.96.0.1']);
});

test('stopping marks the endpoint not ready before the sockets close', async () => {
  await dns.stop();
  const slice = await api.admin.get(
    '/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices/kube-dns-tskube-dns',
  );
  assert.equal(slice.endpoints[0].conditions.ready, false);
  const eps = await api.admin.get('/api/v1/namespaces/kube-system/endpoints/kube-dns');
  assert.deepEqual(eps.subsets[0].notReadyAddresses, [{ ip: '127.0.0.1', nodeName: 'n1' }]);
  dns = undefined as unknown as RunningDns;
});
