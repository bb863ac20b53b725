import assert from 'node:assert/strict';
import { test } from 'node:test';

import { bigIntToIp, ipToBigInt } from '../../kube/cidr.js';
import { Store } from '../storage/store.js';
import { IpAllocator, serviceCidrs } from './allocators.js';
import { Api } from './api.js';
import { type IPPlan, planServiceIPs } from './service-ips.js';

const DUAL = ['IPv4', 'IPv6'] as const;
const V4 = ['IPv4'] as const;
const plan = (p: ReturnType<typeof planServiceIPs>): IPPlan => {
  assert.ok(!Array.isArray(p), `expected a plan, got ${JSON.stringify(p)}`);
  return p;
};
const causes = (p: ReturnType<typeof planServiceIPs>): string[] => {
  assert.ok(Array.isArray(p), `expected an error, got ${JSON.stringify(p)}`);
  return p.map((c) => `${c.field}: ${c.message}`);
};

test('IPv6 addresses to numbers and back in RFC 5952 form', () => {
  for (const [text, canonical] of [
    ['fd00:10:96::1', 'fd00:10:96::1'],
    ['FD00:0:0:0:0:0:0:A', 'fd00::a'],
    ['::1', '::1'],
    ['::', '::'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['1:0:3:4:5:6:7:8', '1:0:3:4:5:6:7:8'],
  ] as const) {
    assert.equal(bigIntToIp(ipToBigInt(text), true), canonical, text);
  }
  assert.equal(ipToBigInt('::1'), 1n);
  assert.throws(() => ipToBigInt('fd00::g'), /invalid IPv6 address "fd00::g"/);
  assert.throws(() => ipToBigInt('1:2:3:4:5:6:7:8:9'), /invalid IPv6 address/);
});

test('an IPv6 ClusterIP range: the network address is never handed out, the rest in order, wrapping after release', () => {
  const a = new IpAllocator('fd00:10:96::/126');
  assert.equal(a.family, 'IPv6');
  assert.equal(a.first, 'fd00:10:96::1');
  assert.deepEqual([a.allocate(), a.allocate(), a.allocate()], ['fd00:10:96::1', 'fd00:10:96::2', 'fd00:10:96::3']);
  assert.throws(() => a.allocate(), /range fd00:10:96::\/126 is full/);
  a.release('fd00:10:96::2');
  assert.equal(a.allocate(), 'fd00:10:96::2');
  assert.equal(a.contains('fd00:10:96::'), false);
  assert.equal(a.contains('10.96.0.1'), false, 'another family is never inside');
  assert.equal(a.reserve('fd00:10:96:0::3'), false, 'the same address written longer is the same address');
  assert.throws(() => new IpAllocator('fd00::/64'), /the mask must be >= 108/);
  const v4 = new IpAllocator('10.96.0.0/30');
  assert.deepEqual([v4.allocate(), v4.allocate()], ['10.96.0.1', '10.96.0.2']);
  assert.throws(() => v4.allocate(), /is full/, 'IPv4 keeps its broadcast address out');
  assert.deepEqual(serviceCidrs('10.96.0.0/12, fd00:10:96::/108'), ['10.96.0.0/12', 'fd00:10:96::/108']);
  assert.throws(() => serviceCidrs('10.96.0.0/12,10.97.0.0/16'), /must be of different IP families/);
});

test('families and policy: defaults, dual stack on request, and the errors upstream gives', () => {
  assert.deepEqual(plan(planServiceIPs({}, undefined, [...DUAL])), {
    clusterIPs: [''],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    reserve: [],
    release: [],
  });
  assert.deepEqual(plan(planServiceIPs({ ipFamilyPolicy: 'PreferDualStack' }, undefined, [...DUAL])).ipFamilies, [
    'IPv4',
    'IPv6',
  ]);
  assert.deepEqual(
    plan(planServiceIPs({ ipFamilyPolicy: 'PreferDualStack' }, undefined, [...V4])).ipFamilies,
    ['IPv4'],
    'PreferDualStack on a single-stack cluster',
  );
  assert.deepEqual(
    plan(planServiceIPs({ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv6'] }, undefined, [...DUAL])).ipFamilies,
    ['IPv6', 'IPv4'],
    'the asked family first',
  );
  assert.deepEqual(plan(planServiceIPs({ ipFamilies: ['IPv6'] }, undefined, [...DUAL])), {
    clusterIPs: [''],
    ipFamilies: ['IPv6'],
    ipFamilyPolicy: 'SingleStack',
    reserve: [],
    release: [],
  });
  const both = plan(planServiceIPs({ clusterIPs: ['10.96.0.9', 'fd00::9'] }, undefined, [...DUAL]));
  assert.deepEqual(
    both,
    {
      clusterIPs: ['10.96.0.9', 'fd00::9'],
      ipFamilies: ['IPv4', 'IPv6'],
      ipFamilyPolicy: 'RequireDualStack',
      reserve: ['10.96.0.9', 'fd00::9'],
      release: [],
    },
    'two IPs imply RequireDualStack',
  );
  assert.deepEqual(
    plan(planServiceIPs({ clusterIP: 'None', ipFamilyPolicy: 'PreferDualStack' }, undefined, [...DUAL])),
    { clusterIPs: ['None'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'PreferDualStack', reserve: [], release: [] },
  );
  assert.deepEqual(plan(planServiceIPs({ type: 'ExternalName' }, undefined, [...DUAL])).clusterIPs, []);
  assert.deepEqual(causes(planServiceIPs({ ipFamilyPolicy: 'RequireDualStack' }, undefined, [...V4])), [
    'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
  ]);
  assert.deepEqual(causes(planServiceIPs({ ipFamilies: ['IPv6'] }, undefined, [...V4])), [
    'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
  ]);
  assert.deepEqual(
    causes(planServiceIPs({ ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'SingleStack' }, undefined, [...DUAL])),
    [
      `spec.ipFamilyPolicy: Invalid value: "SingleStack": must be RequireDualStack or PreferDualStack when multiple 'ipFamilies' are specified`,
    ],
  );
  assert.deepEqual(causes(planServiceIPs({ ipFamilies: ['IPv4', 'IPv4'] }, undefined, [...DUAL])), [
    'spec.ipFamilies[1]: Duplicate value: "IPv4"',
  ]);
  assert.deepEqual(causes(planServiceIPs({ clusterIPs: ['10.96.0.9'], ipFamilies: ['IPv6'] }, undefined, [...DUAL])), [
    'spec.ipFamilies[0]: Invalid value: "IPv6": must match the family of clusterIPs[0] (10.96.0.9)',
  ]);
  assert.deepEqual(causes(planServiceIPs({ clusterIPs: ['10.96.0.9', '10.96.0.10'] }, undefined, [...DUAL])), [
    'spec.clusterIPs[1]: Invalid value: ["10.96.0.9","10.96.0.10"]: may specify no more than one IP for each IP family',
  ]);
  assert.deepEqual(causes(planServiceIPs({ ipFamilyPolicy: 'Dual' }, undefined, [...DUAL])), [
    'spec.ipFamilyPolicy: Unsupported value: "Dual": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
  ]);
});

test('updates: the primary IP is immutable, upgrading allocates a secondary, downgrading releases it', () => {
  const single = {
    clusterIP: '10.96.0.9',
    clusterIPs: ['10.96.0.9'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
  };
  const up = plan(planServiceIPs({ ...single, ipFamilyPolicy: 'PreferDualStack' }, single, [...DUAL]));
  assert.deepEqual(up, {
    clusterIPs: ['10.96.0.9', ''],
    ipFamilies: ['IPv4', 'IPv6'],
    ipFamilyPolicy: 'PreferDualStack',
    reserve: [],
    release: [],
  });
  const dual = {
    clusterIP: '10.96.0.9',
    clusterIPs: ['10.96.0.9', 'fd00::9'],
    ipFamilies: ['IPv4', 'IPv6'],
    ipFamilyPolicy: 'PreferDualStack',
  };
  assert.deepEqual(plan(planServiceIPs({ ...dual, ipFamilyPolicy: 'SingleStack' }, dual, [...DUAL])), {
    clusterIPs: ['10.96.0.9'],
    ipFamilies: ['IPv4'],
    ipFamilyPolicy: 'SingleStack',
    reserve: [],
    release: ['fd00::9'],
  });
  assert.deepEqual(
    plan(planServiceIPs({ ports: [] } as never, dual, [...DUAL])).clusterIPs,
    ['10.96.0.9', 'fd00::9'],
    'an update without the fields keeps them',
  );
  assert.deepEqual(
    causes(planServiceIPs({ ...single, clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'] }, single, [...DUAL])),
    ['spec.clusterIPs[0]: Invalid value: field is immutable'],
  );
});

test('the Api allocates a ClusterIP in each family of a dual-stack Service and frees both on delete', () => {
  const api = new Api(new Store({}), '10.96.0.0/28,fd00:10:96::/124');
  const create = (name: string, spec: object) =>
    api.create(api.res('', 'services'), 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { ports: [{ port: 80 }], ...spec },
    });
  const d = create('d', { ipFamilyPolicy: 'RequireDualStack' });
  assert.equal(d.spec.clusterIPs.length, 2);
  assert.match(d.spec.clusterIPs[0], /^10\.96\.0\.\d+$/);
  assert.match(d.spec.clusterIPs[1], /^fd00:10:96::[0-9a-f]+$/);
  assert.equal(d.spec.clusterIP, d.spec.clusterIPs[0]);
  assert.deepEqual(d.spec.ipFamilies, ['IPv4', 'IPv6']);
  const six = create('six', { ipFamilies: ['IPv6'] });
  assert.deepEqual([six.spec.ipFamilies, six.spec.ipFamilyPolicy], [['IPv6'], 'SingleStack']);
  assert.match(six.spec.clusterIP, /^fd00:10:96::/);
  assert.throws(
    () => create('taken', { clusterIPs: ['10.96.0.5', d.spec.clusterIPs[1]] }),
    /spec\.clusterIPs: Invalid value: .*failed to allocate IP fd00:10:96::\S+: provided IP is already allocated/,
  );
  // The failed create left 10.96.0.5 free.
  assert.equal(create('five', { clusterIP: '10.96.0.5' }).spec.clusterIP, '10.96.0.5');
  api.delete(api.res('', 'services'), 'default', 'd');
  assert.equal(
    create('again', { clusterIPs: d.spec.clusterIPs }).spec.clusterIPs[1],
    d.spec.clusterIPs[1],
    'both addresses were released',
  );
});
