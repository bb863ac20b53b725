import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Question } from 'dns-packet';

import { type Resolution, resolve, reverseNameToIp, type ZoneConfig } from './answer.js';
import { ZoneData } from './zone.js';

const cfg: ZoneConfig = { zone: 'cluster.local', ttl: 5, dnsIPs: ['10.96.0.10'] };

function svc(ns: string, name: string, spec: Record<string, unknown>) {
  return { metadata: { namespace: ns, name }, spec };
}
function slice(
  ns: string,
  svcName: string,
  name: string,
  endpoints: unknown[],
  ports: unknown[] = [],
  addressType = 'IPv4',
) {
  return {
    metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': svcName } },
    addressType,
    endpoints,
    ports,
  };
}

function zone(): ZoneData {
  const z = new ZoneData();
  z.setNamespace({ metadata: { name: 'default' } }, true);
  z.setNamespace({ metadata: { name: 'empty' } }, true);
  z.setService(
    svc('default', 'web', {
      clusterIP: '10.96.0.20',
      clusterIPs: ['10.96.0.20'],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { port: 81 }],
    }),
  );
  z.setService(svc('default', 'dual', { clusterIPs: ['10.96.0.21', 'fd00::21'], ports: [] }));
  z.setService(svc('default', 'db', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] }));
  z.setSlice(
    slice(
      'default',
      'db',
      'db-1',
      [
        { addresses: ['10.244.0.5'], hostname: 'db-0', conditions: { ready: true } },
        { addresses: ['10.244.0.6'], conditions: { ready: true } },
        { addresses: ['10.244.0.7'], conditions: { ready: false } },
      ],
      [{ name: 'pg', port: 15432, protocol: 'TCP' }],
    ),
  );
  z.setService(svc('default', 'ext', { type: 'ExternalName', externalName: 'Example.COM.' }));
  z.setService(svc('default', 'lonely', { clusterIP: 'None', ports: [] }));
  return z;
}

const q = (name: string, type: Question['type'] = 'A'): Question => ({ name, type, class: 'IN' });
const data = (r: Resolution): unknown[] => (r.forward ? [] : r.answers.map((a) => (a as { data: unknown }).data));
const answer = (r: Resolution) => {
  assert.equal(r.forward, false);
  return r as Exclude<Resolution, { forward: true }>;
};

test('a ClusterIP Service has A (and AAAA for its IPv6 address) with TTL 5, authoritative', () => {
  const z = zone();
  const r = answer(resolve(z, q('web.default.svc.cluster.local'), cfg));
  assert.equal(r.rcode, 'NOERROR');
  assert.equal(r.authoritative, true);
  assert.deepEqual(r.answers, [
    { type: 'A', name: 'web.default.svc.cluster.local', ttl: 5, class: 'IN', data: '10.96.0.20' },
  ]);
  assert.deepEqual(data(resolve(z, q('DUAL.default.svc.cluster.local.', 'AAAA'), cfg)), ['fd00::21']);
  assert.deepEqual(data(resolve(z, q('dual.default.svc.cluster.local', 'A'), cfg)), ['10.96.0.21']);
});

test('names of existing things with no record of the type are NODATA with the SOA; names that do not exist are NXDOMAIN with the SOA', () => {
  const z = zone();
  const nodata = answer(resolve(z, q('web.default.svc.cluster.local', 'AAAA'), cfg));
  assert.equal(nodata.rcode, 'NOERROR');
  assert.equal(nodata.answers.length, 0);
  assert.equal(nodata.authorities[0]!.type, 'SOA');
  assert.deepEqual((nodata.authorities[0] as { data: unknown }).data, {
    mname: 'ns.dns.cluster.local',
    rname: 'hostmaster.cluster.local',
    serial: z.modified,
    refresh: 7200,
    retry: 1800,
    expire: 86400,
    minimum: 5,
  });
  for (const n of [
    'cluster.local',
    'svc.cluster.local',
    'default.svc.cluster.local',
    'empty.svc.cluster.local',
    'pod.cluster.local',
    'default.pod.cluster.local',
  ]) {
    const r = answer(resolve(z, q(n), cfg));
    assert.equal(r.rcode, 'NOERROR', n);
    assert.equal(r.answers.length, 0, n);
  }
  for (const n of [
    'nope.default.svc.cluster.local',
    'web.nons.svc.cluster.local',
    'nons.svc.cluster.local',
    'x.y.cluster.local',
    'a.web.default.svc.cluster.local',
    '_http._tcp.nope.default.svc.cluster.local',
    '_nope._tcp.web.default.svc.cluster.local',
    'lonely.default.svc.cluster.local',
    'x.y.z.w.v.u.svc.cluster.local',
    '1-2-3-4.nons.pod.cluster.local',
    'notanip.default.pod.cluster.local',
  ]) {
    const r = answer(resolve(z, q(n), cfg));
    assert.equal(r.rcode, 'NXDOMAIN', n);
    assert.equal(r.authorities[0]!.type, 'SOA', n);
  }
});

test('a headless Service answers with its ready endpoints; each endpoint has its own name (hostname, else dashed IP)', () => {
  const z = zone();
  assert.deepEqual(data(resolve(z, q('db.default.svc.cluster.local'), cfg)).sort(), ['10.244.0.5', '10.244.0.6']);
  assert.deepEqual(data(resolve(z, q('db-0.db.default.svc.cluster.local'), cfg)), ['10.244.0.5']);
  assert.deepEqual(data(resolve(z, q('10-244-0-6.db.default.svc.cluster.local'), cfg)), ['10.244.0.6']);
  assert.equal(
    answer(resolve(z, q('10-244-0-7.db.default.svc.cluster.local'), cfg)).rcode,
    'NXDOMAIN',
    'unready endpoint',
  );
  // publishNotReadyAddresses: unready endpoints too.
  z.setService(svc('default', 'db', { clusterIP: 'None', publishNotReadyAddresses: true, ports: [] }));
  assert.deepEqual(data(resolve(z, q('db.default.svc.cluster.local'), cfg)).sort(), [
    '10.244.0.5',
    '10.244.0.6',
    '10.244.0.7',
  ]);
  // The endpoint turns unready, then the slice goes.
  z.setService(svc('default', 'db', { clusterIP: 'None', ports: [] }));
  z.setSlice(
    slice('default', 'db', 'db-1', [
      { addresses: ['10.244.0.5'], hostname: 'db-0', conditions: { ready: false } },
      { addresses: ['10.244.0.6'], conditions: { ready: true } },
    ]),
  );
  assert.deepEqual(data(resolve(z, q('db.default.svc.cluster.local'), cfg)), ['10.244.0.6']);
  z.deleteSlice({ metadata: { namespace: 'default', name: 'db-1' } });
  assert.equal(answer(resolve(z, q('db.default.svc.cluster.local'), cfg)).rcode, 'NXDOMAIN');
});

test('SRV for a named port: the Service name (ClusterIP) or each ready endpoint with the endpoint port (headless), addresses as additionals', () => {
  const z = zone();
  const c = answer(resolve(z, q('_http._tcp.web.default.svc.cluster.local', 'SRV'), cfg));
  assert.deepEqual(c.answers, [
    {
      type: 'SRV',
      name: '_http._tcp.web.default.svc.cluster.local',
      ttl: 5,
      class: 'IN',
      data: { priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' },
    },
  ]);
  assert.deepEqual(
    c.additionals.map((a) => [a.name, (a as { data: unknown }).data]),
    [['web.default.svc.cluster.local', '10.96.0.20']],
  );
  const h = answer(resolve(z, q('_pg._tcp.db.default.svc.cluster.local', 'SRV'), cfg));
  assert.deepEqual(
    h.answers
      .map((a) => (a as { data: { port: number; target: string; weight: number } }).data)
      .sort((a, b) => a.target.localeCompare(b.target)),
    [
      { priority: 0, weight: 50, port: 15432, target: '10-244-0-6.db.default.svc.cluster.local' },
      { priority: 0, weight: 50, port: 15432, target: 'db-0.db.default.svc.cluster.local' },
    ],
  );
  assert.equal(h.additionals.length, 2);
  assert.equal(
    answer(resolve(z, q('_http._udp.web.default.svc.cluster.local', 'SRV'), cfg)).rcode,
    'NXDOMAIN',
    'wrong protocol',
  );
  const a = answer(resolve(z, q('_http._tcp.web.default.svc.cluster.local', 'A'), cfg));
  assert.equal(a.rcode, 'NOERROR');
  assert.equal(a.answers.length, 0, 'an A question on an SRV name is NODATA');
  // SRV on the Service name: every port.
  assert.deepEqual(
    data(resolve(z, q('web.default.svc.cluster.local', 'SRV'), cfg)).map((d) => (d as { port: number }).port),
    [80, 81],
  );
});

test('PTR for a Service IP and an endpoint IP; unknown addresses fall through to the upstreams', () => {
  const z = zone();
  assert.deepEqual(data(resolve(z, q('20.0.96.10.in-addr.arpa', 'PTR'), cfg)), ['web.default.svc.cluster.local']);
  assert.deepEqual(data(resolve(z, q('5.0.244.10.in-addr.arpa', 'PTR'), cfg)), ['db-0.db.default.svc.cluster.local']);
  assert.deepEqual(data(resolve(z, q('6.0.244.10.in-addr.arpa', 'PTR'), cfg)), [
    '10-244-0-6.db.default.svc.cluster.local',
  ]);
  const v6 = '1.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa';
  assert.deepEqual(data(resolve(z, q(v6, 'PTR'), cfg)), ['dual.default.svc.cluster.local']);
  assert.deepEqual(resolve(z, q('9.9.9.9.in-addr.arpa', 'PTR'), cfg), { forward: true });
  assert.deepEqual(resolve(z, q('0.244.10.in-addr.arpa', 'PTR'), cfg), { forward: true });
  assert.equal(reverseNameToIp('256.0.0.1.in-addr.arpa'), undefined);
  assert.equal(reverseNameToIp(v6), 'fd00:0:0:0:0:0:0:21');
});

test('ExternalName is a CNAME for every type; pod names give the address they spell (pods insecure) in existing namespaces', () => {
  const z = zone();
  for (const t of ['A', 'AAAA', 'CNAME'] as const)
    assert.deepEqual(answer(resolve(z, q('ext.default.svc.cluster.local', t), cfg)).answers, [
      { type: 'CNAME', name: 'ext.default.svc.cluster.local', ttl: 5, class: 'IN', data: 'example.com' },
    ]);
  assert.deepEqual(data(resolve(z, q('10-244-1-9.default.pod.cluster.local'), cfg)), ['10.244.1.9']);
  assert.deepEqual(data(resolve(z, q('fd00--9.default.pod.cluster.local', 'AAAA'), cfg)), ['fd00::9']);
});

test('the zone apex has SOA and NS; dns-version has TXT 1.1.0; names outside the zone are forwarded', () => {
  const z = zone();
  assert.equal(answer(resolve(z, q('cluster.local', 'SOA'), cfg)).answers[0]!.type, 'SOA');
  const ns = answer(resolve(z, q('cluster.local', 'NS'), cfg));
  assert.deepEqual(data(ns), ['ns.dns.cluster.local']);
  assert.deepEqual(
    ns.additionals.map((a) => (a as { data: unknown }).data),
    ['10.96.0.10'],
  );
  assert.deepEqual(data(resolve(z, q('ns.dns.cluster.local'), cfg)), ['10.96.0.10']);
  assert.deepEqual(data(resolve(z, q('dns-version.cluster.local', 'TXT'), cfg)), ['1.1.0']);
  assert.deepEqual(resolve(z, q('example.com'), cfg), { forward: true });
  assert.deepEqual(resolve(z, q('notcluster.local'), cfg), { forward: true });
});

test('objects whose names are not DNS labels are left out, and deleting a Service removes its names and reverse entries', () => {
  const z = zone();
  z.setService(svc('default', 'Bad_Name', { clusterIP: '10.96.0.99' }));
  assert.deepEqual(resolve(z, q('99.0.96.10.in-addr.arpa', 'PTR'), cfg), { forward: true });
  z.deleteService({ metadata: { namespace: 'default', name: 'web' } });
  assert.equal(answer(resolve(z, q('web.default.svc.cluster.local'), cfg)).rcode, 'NXDOMAIN');
  assert.deepEqual(resolve(z, q('20.0.96.10.in-addr.arpa', 'PTR'), cfg), { forward: true });
  assert.equal(z.serviceCount, 4);
});
