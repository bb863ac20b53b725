import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { loadProxyConfig } from './proxy-config.js';

const KC = '--kubeconfig=/etc/kubernetes/proxy.conf';

function withConfig(yaml: string, fn: (file: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'proxy-config-'));
  try {
    const file = path.join(dir, 'config.yaml');
    fs.writeFileSync(file, yaml);
    fn(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('--proxy-mode and mode: iptables (default) or nftables; anything else is refused naming the flag or field', () => {
  assert.equal(loadProxyConfig([KC], () => {}).mode, 'iptables');
  const nft = loadProxyConfig([KC, '--proxy-mode=nftables'], () => {});
  assert.equal(nft.mode, 'nftables');
  assert.deepEqual(
    nft.nodePortAddresses,
    ['primary'],
    "nftables mode defaults NodePorts to the node's primary IP, as upstream",
  );
  assert.throws(
    () => loadProxyConfig([KC, '--proxy-mode=ipvs'], () => {}),
    /--proxy-mode: unsupported proxy mode "ipvs": this kube-proxy has iptables and nftables/,
  );
  withConfig(
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: kernelspace\n',
    (file) => {
      assert.throws(
        () => loadProxyConfig([KC, `--config=${file}`], () => {}),
        new RegExp(`${file}: mode: unsupported proxy mode "kernelspace"`),
      );
    },
  );
});

test("the nftables section of KubeProxyConfiguration holds that mode's sync and masquerade settings", () => {
  const yaml =
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nnftables:\n  masqueradeBit: 15\n  syncPeriod: 45s\n  minSyncPeriod: 0s\niptables:\n  masqueradeBit: 3\nnodePortAddresses: ["192.168.0.0/24"]\n';
  withConfig(yaml, (file) => {
    const warnings: string[] = [];
    const c = loadProxyConfig([KC, `--config=${file}`], (m) => warnings.push(m));
    assert.equal(c.mode, 'nftables');
    assert.equal(c.masqueradeBit, 15);
    assert.equal(c.syncPeriodMs, 45_000);
    assert.equal(c.minSyncPeriodMs, 0);
    assert.deepEqual(c.nodePortAddresses, ['192.168.0.0/24']);
    assert.deepEqual(warnings, []);
  });
  withConfig(
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\nnftables:\n  masqueradeBit: 40\n',
    (file) => {
      assert.throws(
        () => loadProxyConfig([KC, `--config=${file}`], () => {}),
        new RegExp(`${file}: nftables.masqueradeBit: must be between 0 and 31, got 40`),
      );
    },
  );
});

test('--bind-address: an IP address, 0.0.0.0 by default, from the flag or bindAddress', () => {
  assert.equal(loadProxyConfig([KC], () => {}).bindAddress, '0.0.0.0');
  assert.equal(loadProxyConfig([KC, '--bind-address=fd00::5'], () => {}).bindAddress, 'fd00::5');
  assert.throws(
    () => loadProxyConfig([KC, '--bind-address=node1'], () => {}),
    /--bind-address: must be a valid IP address, got "node1"/,
  );
});

test('--nodeport-addresses: "primary" or CIDRs, not both; iptables mode defaults to every local address', () => {
  assert.deepEqual(
    loadProxyConfig([KC, '--proxy-mode=nftables', '--nodeport-addresses=10.0.0.0/8, 192.168.1.0/24'], () => {})
      .nodePortAddresses,
    ['10.0.0.0/8', '192.168.1.0/24'],
  );
  assert.throws(
    () => loadProxyConfig([KC, '--proxy-mode=nftables', '--nodeport-addresses=primary,10.0.0.0/8'], () => {}),
    /--nodeport-addresses: "primary" cannot be used together with CIDRs/,
  );
  assert.throws(
    () => loadProxyConfig([KC, '--proxy-mode=nftables', '--nodeport-addresses=eth0'], () => {}),
    /--nodeport-addresses: must be a valid CIDR or "primary", got "eth0"/,
  );
  assert.deepEqual(loadProxyConfig([KC], () => {}).nodePortAddresses, []);
  assert.deepEqual(loadProxyConfig([KC, '--nodeport-addresses=10.0.0.0/8'], () => {}).nodePortAddresses, [
    '10.0.0.0/8',
  ]);
});

test('--cleanup needs no kubeconfig; everything else does', () => {
  assert.equal(loadProxyConfig(['--cleanup=true'], () => {}).cleanup, true);
  assert.throws(() => loadProxyConfig([], () => {}), /--kubeconfig is required/);
});

test('--detect-local-mode and detectLocal: the four upstream modes, each with the setting it needs', () => {
  assert.deepEqual(loadProxyConfig([KC, '--cluster-cidr=10.244.0.0/16'], () => {}).detectLocal, {
    mode: 'ClusterCIDR',
    clusterCIDR: '10.244.0.0/16',
    bridgeInterface: undefined,
    interfaceNamePrefix: undefined,
  });
  assert.equal(
    loadProxyConfig([KC, '--detect-local-mode=BridgeInterface', '--pod-bridge-interface=cni0'], () => {}).detectLocal
      .bridgeInterface,
    'cni0',
  );
  assert.throws(
    () => loadProxyConfig([KC, '--detect-local-mode=BridgeInterface'], () => {}),
    /--pod-bridge-interface \(config: detectLocal.bridgeInterface\): required with detectLocalMode BridgeInterface/,
  );
  assert.throws(
    () => loadProxyConfig([KC, '--detect-local-mode=Magic'], () => {}),
    /--detect-local-mode: must be one of ClusterCIDR, NodeCIDR, BridgeInterface, InterfaceNamePrefix, got "Magic"/,
  );
  withConfig(
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\ndetectLocalMode: InterfaceNamePrefix\ndetectLocal:\n  interfaceNamePrefix: veth\n',
    (file) => {
      assert.deepEqual(loadProxyConfig([KC, `--config=${file}`], () => {}).detectLocal.interfaceNamePrefix, 'veth');
    },
  );
});

test('conntrack settings: upstream defaults, flags and config fields as durations, bad values refused', () => {
  assert.deepEqual(loadProxyConfig([KC], () => {}).conntrack, {
    maxPerCore: 32768,
    min: 131072,
    tcpEstablishedTimeout: 86400,
    tcpCloseWaitTimeout: 3600,
    tcpBeLiberal: false,
    udpTimeout: 0,
    udpStreamTimeout: 0,
  });
  withConfig(
    'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nconntrack:\n  maxPerCore: 0\n  tcpEstablishedTimeout: 2h\n  udpTimeout: 30s\n  tcpBeLiberal: true\n',
    (file) => {
      const c = loadProxyConfig([KC, `--config=${file}`, '--conntrack-udp-timeout-stream=2m'], () => {}).conntrack;
      assert.deepEqual(
        [c.maxPerCore, c.tcpEstablishedTimeout, c.udpTimeout, c.udpStreamTimeout, c.tcpBeLiberal],
        [0, 7200, 30, 120, true],
      );
    },
  );
  assert.throws(
    () => loadProxyConfig([KC, '--conntrack-min=-1'], () => {}),
    /--conntrack-min: must be a non-negative integer, got -1/,
  );
});
