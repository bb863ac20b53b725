import assert from 'node:assert/strict';
import { test } from 'node:test';

import { endpointsOfSlices } from './endpoints.js';
import { cidrContains, familyOf, joinHostPort, nodeIPOf, ofFamily, primaryFamily } from './family.js';
import { NODE, slice, svc } from './fixtures.js';
import { localDetector } from './local-detector.js';
import { servicePorts } from './service-port.js';

test('families of addresses and CIDRs, host:port as Go joins it, containment in either family', () => {
  assert.deepEqual(['10.0.0.1', 'fd00::1', '::ffff:1.2.3.4', 'x', '10.0.0.0/8'].map(familyOf), [
    'IPv4',
    'IPv6',
    'IPv6',
    undefined,
    undefined,
  ]);
  assert.equal(joinHostPort('fd00::1', 80), '[fd00::1]:80');
  assert.equal(joinHostPort('10.0.0.1', 80), '10.0.0.1:80');
  assert.deepEqual(ofFamily('10.244.0.0/16, fd00:10:244::/56', 'IPv6'), ['fd00:10:244::/56']);
  assert.deepEqual(ofFamily(['1.2.3.4', 'fd00::5'], 'IPv4'), ['1.2.3.4']);
  assert.equal(cidrContains('fd00:10:244::/56', 'fd00:10:244:ff::9'), true);
  assert.equal(cidrContains('fd00:10:244::/56', 'fd00:10:245::9'), false);
  assert.equal(cidrContains('fd00::/8', '10.0.0.1'), false, 'never across families');
  assert.equal(cidrContains('192.168.0.0/24', '192.168.0.2'), true);
  assert.equal(cidrContains('::1/128', '::1'), true);
});

test("a dual-stack Service gives each family its own cluster IP and only that family's external IPs, LB IPs and source ranges", () => {
  const s = svc(
    'ns',
    'd',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.5',
      clusterIPs: ['172.30.0.5', 'fd00:30::5'],
      ipFamilies: ['IPv4', 'IPv6'],
      externalIPs: ['1.2.3.4', '2001:db8::4'],
      loadBalancerSourceRanges: ['203.0.113.0/24', '2001:db8:1::/48'],
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }],
    },
    { loadBalancer: { ingress: [{ ip: '5.6.7.8' }, { ip: '2001:db8::8' }] } },
  );
  const [v4] = servicePorts(s, 'IPv4');
  const [v6] = servicePorts(s, 'IPv6');
  assert.deepEqual(
    [v4!.clusterIP, v4!.externalIPs, v4!.loadBalancerIPs, v4!.loadBalancerSourceRanges, v4!.nodePort],
    ['172.30.0.5', ['1.2.3.4'], ['5.6.7.8'], ['203.0.113.0/24'], 30080],
  );
  assert.deepEqual(
    [v6!.clusterIP, v6!.externalIPs, v6!.loadBalancerIPs, v6!.loadBalancerSourceRanges, v6!.nodePort],
    ['fd00:30::5', ['2001:db8::4'], ['2001:db8::8'], ['2001:db8:1::/48'], 30080],
  );
  assert.equal(v6!.name, v4!.name, 'the same service port name in both families');
  // A single-stack IPv4 Service has nothing in the IPv6 family, and the reverse.
  assert.deepEqual(servicePorts(svc('ns', 'a', { clusterIP: '172.30.0.6' }), 'IPv6'), []);
  assert.deepEqual(servicePorts(svc('ns', 'b', { clusterIP: 'fd00:30::6', clusterIPs: ['fd00:30::6'] }), 'IPv4'), []);
  assert.equal(
    servicePorts(svc('ns', 'b', { clusterIP: 'fd00:30::6', clusterIPs: ['fd00:30::6'] }), 'IPv6')[0]!.clusterIP,
    'fd00:30::6',
  );
});

test('IPv6 addresses are written as nft and ip6tables print them, whatever form the objects use', () => {
  const s = svc('ns', 'c', {
    clusterIP: 'FD00:30:0:0::5',
    clusterIPs: ['FD00:30:0:0::5'],
    externalIPs: ['2001:DB8::0004'],
  });
  assert.deepEqual(
    [servicePorts(s, 'IPv6')[0]!.clusterIP, servicePorts(s, 'IPv6')[0]!.externalIPs],
    ['fd00:30::5', ['2001:db8::4']],
  );
  const eps = endpointsOfSlices([slice('ns', 'c', [{ ip: 'FD00:10:0::0001' }])], NODE, 'IPv6').get('ns/c:p80/TCP')!;
  assert.deepEqual([eps[0]!.ip, eps[0]!.addr], ['fd00:10::1', '[fd00:10::1]:80']);
  assert.deepEqual(ofFamily('FD00:10:244::/56', 'IPv6'), ['fd00:10:244::/56']);
});

test('endpoints: each family reads only its own slices; IPv6 endpoints are [ip]:port', () => {
  const slices = [
    slice('ns', 'd', [{ ip: '10.0.0.1' }]),
    slice('ns', 'd', [{ ip: 'fd00:10::1', node: NODE }, { ip: 'fd00:10::2' }]),
  ];
  const v6 = endpointsOfSlices(slices, NODE, 'IPv6').get('ns/d:p80/TCP')!;
  assert.deepEqual(
    v6.map((e) => [e.addr, e.local]),
    [
      ['[fd00:10::1]:80', true],
      ['[fd00:10::2]:80', false],
    ],
  );
  assert.deepEqual(
    endpointsOfSlices(slices, NODE, 'IPv4')
      .get('ns/d:p80/TCP')!
      .map((e) => e.addr),
    ['10.0.0.1:80'],
  );
});

test('the local traffic detector takes the CIDR of its family from a dual-stack --cluster-cidr or pod CIDR', () => {
  const d = { mode: 'ClusterCIDR' as const, clusterCIDR: '10.244.0.0/16,fd00:10:244::/56' };
  assert.deepEqual(localDetector(d, undefined, 'IPv6'), {
    iptables: { local: ['-s', 'fd00:10:244::/56'], notLocal: ['!', '-s', 'fd00:10:244::/56'] },
    nftables: { local: 'ip6 saddr fd00:10:244::/56', notLocal: 'ip6 saddr != fd00:10:244::/56' },
  });
  assert.equal(localDetector(d, undefined, 'IPv4')!.nftables.local, 'ip saddr 10.244.0.0/16');
  assert.equal(
    localDetector({ mode: 'ClusterCIDR', clusterCIDR: '10.244.0.0/16' }, undefined, 'IPv6'),
    undefined,
    'no IPv6 cluster CIDR: no detector',
  );
  assert.equal(
    localDetector({ mode: 'NodeCIDR' }, 'fd00:10:244:1::/64', 'IPv6')!.nftables.notLocal,
    'ip6 saddr != fd00:10:244:1::/64',
  );
  assert.equal(
    localDetector({ mode: 'InterfaceNamePrefix', interfaceNamePrefix: 'veth' }, undefined, 'IPv6')!.nftables.local,
    'iifname "veth*"',
  );
});

test("the primary family: --bind-address when it names an address, else the node's first IP, else IPv4; the bind address is its family's node IP", () => {
  assert.equal(primaryFamily([], '0.0.0.0'), 'IPv4');
  assert.equal(primaryFamily(['fd00::5', '10.0.0.5'], '0.0.0.0'), 'IPv6');
  assert.equal(primaryFamily(['fd00::5', '10.0.0.5'], '::'), 'IPv6', ':: names no address either');
  assert.equal(primaryFamily(['10.0.0.5', 'fd00::5'], 'fd00::9'), 'IPv6');
  assert.equal(primaryFamily(['fd00::5'], '10.0.0.9'), 'IPv4');
  assert.equal(primaryFamily(['10.0.0.5'], '0:0::0'), 'IPv4', 'any spelling of ::');
  assert.equal(nodeIPOf('IPv6', ['10.0.0.5', 'fd00::5'], '0.0.0.0'), 'fd00::5');
  assert.equal(nodeIPOf('IPv6', ['10.0.0.5'], 'FD00:0::9'), 'fd00::9', 'the override, as nft lists it');
  assert.equal(
    nodeIPOf('IPv4', ['10.0.0.5'], 'fd00::9'),
    '10.0.0.5',
    'an override of the other family changes nothing here',
  );
  assert.equal(nodeIPOf('IPv6', ['10.0.0.5'], '::'), '');
});
