// Pod DNS: upstream's dnsPolicy rules, dnsConfig merging and limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { type DnsSettings, effectiveResolvConf, parseResolvConf, podDnsConfig } from './dns.js';

const host = parseResolvConf(
  '# generated\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch old.example\nsearch corp.example. lab.example .\noptions timeout:2 attempts:3\n',
);
const settings: DnsSettings = {
  clusterDNS: ['10.96.0.10'],
  clusterDomain: 'cluster.local',
  host,
  nodeIPs: ['192.0.2.1'],
};
const pod = (spec: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
  spec: { containers: [{ name: 'c' }], ...spec },
});

test('resolv.conf: nameservers accumulate, the last search and options lines win, trailing dots and "." go', () => {
  assert.deepEqual(host, {
    servers: ['192.0.2.53', '192.0.2.54'],
    searches: ['corp.example', 'lab.example'],
    options: ['timeout:2', 'attempts:3'],
  });
});

test("ClusterFirst: clusterDNS only, the cluster search path before the host's, ndots:5", () => {
  assert.deepEqual(podDnsConfig(pod(), settings), {
    config: {
      servers: ['10.96.0.10'],
      searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'],
      options: ['ndots:5'],
    },
    events: [],
  });
});

test("ClusterFirst on the host network, and Default, use the node's resolv.conf; ClusterFirstWithHostNet the cluster's", () => {
  assert.deepEqual(podDnsConfig(pod({ hostNetwork: true }), settings).config, host);
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), settings).config, host);
  assert.deepEqual(
    podDnsConfig(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), settings).config.servers,
    ['10.96.0.10'],
  );
});

test('no clusterDNS: ClusterFirst falls back to Default with MissingClusterDNS on the pod and the node', () => {
  const r = podDnsConfig(pod(), { ...settings, clusterDNS: [] });
  assert.deepEqual(r.config, host);
  assert.deepEqual(r.events, [
    {
      on: 'node',
      reason: 'MissingClusterDNS',
      message:
        'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    },
    {
      on: 'pod',
      reason: 'MissingClusterDNS',
      message:
        'pod: "web_shop(u1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    },
  ]);
});

test('--resolv-conf="": the local resolver and search "."', () => {
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), { ...settings, host: undefined }).config, {
    servers: ['127.0.0.1'],
    searches: ['.'],
    options: [],
  });
});

test('None with dnsConfig: only what the pod says; dnsConfig merges into the others, options by name', () => {
  const dnsConfig = {
    nameservers: ['1.1.1.1'],
    searches: ['ns1.svc.cluster.local', 'my.dns.search.suffix'],
    options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
  };
  assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig }), settings).config, {
    servers: ['1.1.1.1'],
    searches: ['ns1.svc.cluster.local', 'my.dns.search.suffix'],
    options: ['ndots:2', 'edns0'],
  });
  assert.deepEqual(
    podDnsConfig(
      pod({
        dnsConfig: {
          nameservers: ['10.96.0.10', '1.1.1.1'],
          searches: ['cluster.local', 'x.example'],
          options: [{ name: 'ndots', value: '1' }],
        },
      }),
      settings,
    ).config,
    {
      servers: ['10.96.0.10', '1.1.1.1'],
      searches: [
        'shop.svc.cluster.local',
        'svc.cluster.local',
        'cluster.local',
        'corp.example',
        'lab.example',
        'x.example',
      ],
      options: ['ndots:1'],
    },
  );
});

test('limits: three nameservers, 32 search paths of at most 253 characters and 2048 in all, with DNSConfigForming events', () => {
  const many = podDnsConfig(
    pod({
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'],
        searches: Array.from({ length: 40 }, (_, i) => `s${i}.example`),
      },
    }),
    settings,
  );
  assert.deepEqual(many.config.servers, ['1.1.1.1', '2.2.2.2', '3.3.3.3']);
  assert.equal(many.config.searches.length, 32);
  assert.deepEqual(
    many.events.map((e) => e.message.split(':')[0]),
    [
      'Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is',
      'Search Line limits were exceeded, some search paths have been omitted, the applied search line is',
    ],
  );
  const long = podDnsConfig(
    pod({
      dnsPolicy: 'None',
      dnsConfig: {
        searches: ['a'.repeat(254), ...Array.from({ length: 10 }, (_, i) => `${String(i)}${'b'.repeat(250)}`)],
      },
    }),
    settings,
  );
  assert.ok(!long.config.searches.includes('a'.repeat(254)));
  assert.ok(long.config.searches.join(' ').length <= 2048);
  assert.equal(long.config.searches.length, 8);
});

test("a resolv.conf with only a loopback stub (systemd-resolved) is replaced by systemd-resolved's upstream list, as kubeadm does, with a warning", () => {
  const files: Record<string, string> = {
    '/etc/resolv.conf': 'nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n',
    '/run/systemd/resolve/resolv.conf': 'nameserver 192.0.2.1\nnameserver 192.0.2.2\nsearch lan\n',
    '/etc/other.conf': 'nameserver 127.0.0.1\n',
    '/etc/good.conf': 'nameserver 127.0.0.53\nnameserver 192.0.2.9\n',
  };
  const read = (f: string): string | undefined => files[f];
  const swapped = effectiveResolvConf('/etc/resolv.conf', read);
  assert.equal(swapped.file, '/run/systemd/resolve/resolv.conf');
  assert.match(
    swapped.warning!,
    /lists only the local stub resolver 127\.0\.0\.53, which pods cannot reach; using \/run\/systemd\/resolve\/resolv\.conf instead/,
  );
  const kept = effectiveResolvConf('/etc/other.conf', read);
  assert.equal(kept.file, '/etc/other.conf', 'a file the admin chose is kept');
  assert.match(kept.warning!, /pods with dnsPolicy Default will not resolve names/);
  assert.deepEqual(
    effectiveResolvConf('/etc/good.conf', read),
    { file: '/etc/good.conf' },
    'one reachable server is enough',
  );
  assert.deepEqual(effectiveResolvConf('', read), { file: '' });
  assert.deepEqual(effectiveResolvConf('/missing', read), { file: '/missing' });
  delete files['/run/systemd/resolve/resolv.conf'];
  assert.equal(effectiveResolvConf('/etc/resolv.conf', read).file, '/etc/resolv.conf');
});
