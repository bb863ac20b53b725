// Node IPAM: the range allocator and the controller.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { cidrsOverlap } from '../../kube/cidr.js';
import type { KObj } from '../../kube/client.js';
import { startTestApiServer, useTestApiServer } from '../../testing/apiserver.js';
import { CidrSet, validateClusterCidr } from './node-ipam.js';

test('CidrSet: subnets in order, existing ones kept, released ones reused, exhaustion is undefined', () => {
  const s = new CidrSet('10.244.0.0/22', 24);
  assert.equal(s.count, 4);
  assert.equal(s.occupy('10.244.1.0/24'), true);
  assert.equal(s.occupy('10.244.1.0/24'), false, 'already taken');
  assert.equal(s.occupy('10.245.0.0/24'), false, 'not ours');
  assert.equal(s.occupy('10.244.2.0/25'), false, 'wrong size');
  assert.deepEqual(
    [s.allocate(), s.allocate(), s.allocate(), s.allocate()],
    ['10.244.0.0/24', '10.244.2.0/24', '10.244.3.0/24', undefined],
  );
  s.release('10.244.2.0/24');
  assert.equal(s.allocate(), '10.244.2.0/24');
  assert.throws(
    () => new CidrSet('10.244.0.0/16', 12),
    /--node-cidr-mask-size: 12 must be between the cluster CIDR's prefix \(16\) and 30/,
  );
  assert.throws(() => new CidrSet('fd00::zz/48', 64), /--cluster-cidr: invalid CIDR "fd00::zz\/48"/);
  const six = new CidrSet('fd00:10:244::/62', 64);
  assert.equal(six.count, 4);
  assert.equal(six.occupy('fd00:10:244:1::/64'), true);
  assert.equal(six.occupy('10.244.1.0/24'), false, 'another family');
  assert.deepEqual(
    [six.allocate(), six.allocate(), six.allocate(), six.allocate()],
    ['fd00:10:244::/64', 'fd00:10:244:2::/64', 'fd00:10:244:3::/64', undefined],
  );
  assert.equal(cidrsOverlap('10.96.0.0/12', '10.100.0.0/16'), true);
  assert.equal(cidrsOverlap('10.244.0.0/16', '10.96.0.0/12'), false);
});

test('a pod range over the Service range or a node address is refused up front', () => {
  const one = (clusterCidr: string, nodeCidrMaskSize?: number) => ({ clusterCidr, nodeCidrMaskSize });
  assert.doesNotThrow(() => validateClusterCidr(one('10.244.0.0/16', 24), '10.96.0.0/12', ['192.0.2.1']));
  assert.throws(
    () => validateClusterCidr(one('10.96.0.0/16', 24), '10.96.0.0/12'),
    /^Error: --cluster-cidr 10\.96\.0\.0\/16 overlaps --service-cluster-ip-range 10\.96\.0\.0\/12$/,
  );
  assert.throws(
    () => validateClusterCidr(one('192.0.0.0/16', 24), '10.96.0.0/12', ['192.0.2.1']),
    /--cluster-cidr 192\.0\.0\.0\/16 covers the node address 192\.0\.2\.1: pick a pod range outside the nodes' network/,
  );
  assert.throws(() => validateClusterCidr(one('10.244.0.0/16', 12), '10.96.0.0/12'), /--node-cidr-mask-size: 12/);
  // Dual stack: each family against the Service range and node addresses of its own family.
  const dual = { clusterCidr: '10.244.0.0/16,fd00:10:244::/56' };
  assert.doesNotThrow(() => validateClusterCidr(dual, '10.96.0.0/12,fd00:10:96::/108', ['192.0.2.1', 'fd00::2']));
  assert.throws(
    () => validateClusterCidr(dual, '10.96.0.0/12,fd00:10:244:ff::/108'),
    /--cluster-cidr fd00:10:244::\/56 overlaps --service-cluster-ip-range fd00:10:244:ff::\/108/,
  );
  assert.throws(
    () => validateClusterCidr(dual, '10.96.0.0/12', ['fd00:10:244:3::9']),
    /covers the node address fd00:10:244:3::9/,
  );
  assert.throws(
    () => validateClusterCidr({ ...dual, nodeCidrMaskSize: 24 }, '10.96.0.0/12'),
    /^Error: usage of --node-cidr-mask-size is not allowed with dual-stack clusters$/,
  );
  assert.throws(
    () => validateClusterCidr({ clusterCidr: '10.244.0.0/16,10.245.0.0/16' }, '10.96.0.0/12'),
    /must be of different IP families/,
  );
  assert.throws(
    () => validateClusterCidr({ ...dual, nodeCidrMaskSizeIPv6: 80 }, '10.96.0.0/12'),
    /--node-cidr-mask-size-ipv6: 80 is more than 16 bits longer than the cluster CIDR's prefix \/56/,
  );
});

const s = useTestApiServer('n1', {
  allocateNodeCidrs: true,
  clusterCidr: '10.244.0.0/23',
  nodeCidrMaskSize: 24,
  controllers: ['node-ipam-controller'],
});

async function podCidr(name: string): Promise<string | undefined> {
  for (let i = 0; i < 50; i++) {
    const n = await s.api.admin.get(`/api/v1/nodes/${name}`);
    if (n.spec?.podCIDR) return n.spec.podCIDR as string;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

test('every registering Node gets a distinct podCIDR; when the range is full an event says so; a deleted Node frees its subnet', async () => {
  const node = (name: string) => ({ metadata: { name }, spec: {} });
  await s.api.admin.create('/api/v1/nodes', node('a'));
  await s.api.admin.create('/api/v1/nodes', node('b'));
  const [a, b] = [await podCidr('a'), await podCidr('b')];
  assert.deepEqual([a, b].sort(), ['10.244.0.0/24', '10.244.1.0/24']);
  assert.deepEqual((await s.api.admin.get('/api/v1/nodes/a')).spec.podCIDRs, [a]);
  await s.api.admin.create('/api/v1/nodes', node('c'));
  let events: KObj[] = [];
  for (let i = 0; i < 50 && !events.length; i++) {
    await new Promise((r) => setTimeout(r, 50));
    events = (
      await s.api.admin.get('/api/v1/events', { fieldSelector: 'involvedObject.name=c,reason=CIDRNotAvailable' })
    ).items;
  }
  assert.equal(events[0]?.message, 'Node c status is now: CIDRNotAvailable');
  await s.api.admin.delete('/api/v1/nodes/a');
  assert.equal(await podCidr('c'), a);
});

test("dual stack: every Node gets an IPv4 and an IPv6 podCIDR, in --cluster-cidr's order", async () => {
  const d = await startTestApiServer('n1', {
    allocateNodeCidrs: true,
    clusterCidr: 'fd00:10:244::/63,10.244.0.0/23',
    controllers: ['node-ipam-controller'],
  });
  try {
    await d.admin.create('/api/v1/nodes', { metadata: { name: 'x' }, spec: {} });
    let n: KObj | undefined;
    for (let i = 0; i < 50 && !n?.spec?.podCIDRs; i++) {
      await new Promise((r) => setTimeout(r, 50));
      n = await d.admin.get('/api/v1/nodes/x');
    }
    assert.deepEqual(n!.spec.podCIDRs, ['fd00:10:244::/64', '10.244.0.0/24']);
    assert.equal(n!.spec.podCIDR, 'fd00:10:244::/64');
  } finally {
    await d.stop();
  }
});
