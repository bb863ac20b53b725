import assert from 'node:assert/strict';
import { test } from 'node:test';

import { localDetector } from './local-detector.js';

test('--detect-local-mode: CIDR modes match the source, interface modes the input interface (iptables + for a prefix, nft *)', () => {
  assert.deepEqual(localDetector({ mode: 'ClusterCIDR', clusterCIDR: '10.244.0.0/16' }), {
    iptables: { local: ['-s', '10.244.0.0/16'], notLocal: ['!', '-s', '10.244.0.0/16'] },
    nftables: { local: 'ip saddr 10.244.0.0/16', notLocal: 'ip saddr != 10.244.0.0/16' },
  });
  assert.equal(localDetector({ mode: 'ClusterCIDR' }), undefined, 'no cluster CIDR: no detector');
  assert.equal(
    localDetector({ mode: 'NodeCIDR', clusterCIDR: '10.244.0.0/16' }),
    undefined,
    "NodeCIDR waits for the Node's podCIDR",
  );
  assert.deepEqual(localDetector({ mode: 'NodeCIDR' }, '10.244.3.0/24')?.iptables.local, ['-s', '10.244.3.0/24']);
  assert.deepEqual(localDetector({ mode: 'BridgeInterface', bridgeInterface: 'cni0' }), {
    iptables: { local: ['-i', 'cni0'], notLocal: ['!', '-i', 'cni0'] },
    nftables: { local: 'iifname "cni0"', notLocal: 'iifname != "cni0"' },
  });
  assert.deepEqual(localDetector({ mode: 'InterfaceNamePrefix', interfaceNamePrefix: 'veth' }), {
    iptables: { local: ['-i', 'veth+'], notLocal: ['!', '-i', 'veth+'] },
    nftables: { local: 'iifname "veth*"', notLocal: 'iifname != "veth*"' },
  });
});
