import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { type Iptables, RestoreError, type Table } from '../kube/iptables.js';
import { memoryLogger } from '../kube/log.js';
// Test-only: the dev apiserver stands in for a real one.
import { startTestApiServer, type TestApiServer } from '../testing/apiserver.js';
import { waitFor } from '../testing/wait.js';
import type { ProxyBackend, SyncInput, SyncOutcome } from './backend.js';
import { ProxyHealth } from './health.js';
import { svcChain } from './iptables/chains.js';
import { ProxyMetrics } from './metrics.js';
import type { IPFamily } from './model/family.js';
import { Proxier, type ProxierConfig } from './proxier.js';
import { serveHealth } from './server.js';

class FakeIptables implements Iptables {
  restores: string[] = [];
  saves = 0;
  chains = new Set<string>();
  rules: string[] = [];
  failNext = false;
  async restore(text: string): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new RestoreError('iptables-restore failed (exit 2): line 3 failed', 3, '>     3: -A BROKEN');
    }
    this.restores.push(text);
  }
  async save(_t: Table): Promise<string> {
    this.saves++;
    return '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-LEFTOVERFROMBEFORE - [0:0]\nCOMMIT\n';
  }
  async ensureChain(t: Table, c: string): Promise<void> {
    this.chains.add(`${t}/${c}`);
  }
  async ensureRule(t: Table, c: string, args: string[]): Promise<boolean> {
    this.rules.push(`${t}/${c} ${args.join(' ')}`);
    return true;
  }
}

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer('n1');
});
after(() => api.stop());

const cfg: ProxierConfig = {
  nodeName: 'n1',
  clusterCIDR: '10.244.0.0/16',
  masqueradeAll: false,
  masqueradeBit: 14,
  syncPeriodMs: 60_000,
  minSyncPeriodMs: 100,
  localhostNodePorts: true,
  conntrackTCPLiberal: false,
};
const slice = (svc: string, ips: string[], protocol = 'TCP', port = 8080) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: `${svc}-x`,
    labels: { 'kubernetes.io/service-name': svc },
    annotations: {
      'endpoints.kubernetes.io/last-change-trigger-time': new Date(Date.now() - 1500)
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
    },
  },
  addressType: 'IPv4',
  ports: [{ name: '', port, protocol }],
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'n1' })),
});

test('waits for both informers, then a full sync with jump rules and stale chain cleanup; later changes are partial and debounced', async () => {
  const a = await api.admin.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'a' },
    spec: { selector: { app: 'a' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  await api.admin.create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', slice('a', ['10.244.0.5']));
  await api.admin.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'b' },
    spec: { ports: [{ port: 80 }] },
  });
  await api.admin.create('/api/v1/namespaces/default/services', {
    metadata: { name: 'headless' },
    spec: { clusterIP: 'None', ports: [{ port: 80 }] },
  });
  const ipt = new FakeIptables();
  const metrics = new ProxyMetrics();
  const health = new ProxyHealth(120_000);
  const log = memoryLogger();
  const conntrack: string[][] = [];
  const p = new Proxier(cfg, {
    client: api.admin,
    ipt,
    log,
    metrics,
    health,
    conntrack: async (args) => (conntrack.push(args), 0),
    conntrackList: async () => '',
  });
  await p.start();
  try {
    assert.equal(ipt.restores.length, 1, 'one restore after both informers synced');
    const first = ipt.restores[0]!;
    assert.match(
      first,
      new RegExp(
        `-A KUBE-SERVICES -m comment --comment "default/a cluster IP" -m tcp -p tcp -d ${a.spec.clusterIP.replace(/\./g, '\\.')} --dport 80 -j ${svcChain('default/a', 'tcp')}`,
      ),
    );
    assert.match(first, /DNAT --to-destination 10\.244\.0\.5:8080/);
    assert.match(first, /"default\/b has no endpoints" .* -j REJECT/);
    assert.doesNotMatch(first, /headless/);
    assert.match(
      first,
      /:KUBE-SVC-LEFTOVERFROMBEFORE - \[0:0\]\n[\s\S]*-X KUBE-SVC-LEFTOVERFROMBEFORE\n/,
      'a chain left by an earlier run is deleted',
    );
    assert.equal(ipt.saves, 1);
    assert.ok(ipt.rules.includes('nat/PREROUTING -m comment --comment kubernetes service portals -j KUBE-SERVICES'));
    assert.ok(
      ipt.rules.includes(
        'filter/INPUT -m conntrack --ctstate NEW -m comment --comment kubernetes externally-visible service portals -j KUBE-EXTERNAL-SERVICES',
      ),
    );
    assert.equal(p.fullSyncs, 1);
    // Several changes in a burst: one partial sync, rewriting only service b's chains.
    await api.admin.create(
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      slice('b', ['10.244.0.6', '10.244.0.7']),
    );
    await waitFor(() => ipt.restores.length >= 2, 3000, 10, 'second sync');
    await new Promise((r) => setTimeout(r, 300));
    const second = ipt.restores.at(-1)!;
    assert.ok(second.includes(`:${svcChain('default/b', 'tcp')} - [0:0]`));
    assert.ok(!second.includes(`:${svcChain('default/a', 'tcp')} - [0:0]`), 'service a is untouched in a partial sync');
    assert.ok(second.includes(`-j ${svcChain('default/a', 'tcp')}`), 'KUBE-SERVICES is still complete');
    assert.equal(ipt.saves, 1, 'no iptables-save on partial syncs');
    const metricsText = await metrics.registry.metrics();
    assert.match(metricsText, /kubeproxy_sync_proxy_rules_iptables_total\{table="nat"\} \d+/);
    assert.match(metricsText, /kubeproxy_network_programming_duration_seconds_count [1-9]/);
    assert.match(metricsText, /kubeproxy_sync_proxy_rules_endpoint_changes_total [1-9]/);
    assert.match(metricsText, /kubeproxy_sync_partial_proxy_rules_duration_seconds_count [1-9]/);
    // A failed restore keeps the old rules, logs the offending line, and the next sync is full.
    ipt.failNext = true;
    await api.admin.delete('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/b-x');
    await waitFor(
      () => log.lines.some((l) => l.includes('failed to execute iptables-restore')),
      3000,
      10,
      'failure logged',
    );
    assert.match(log.lines.join('\n'), /line 3 failed[\s\S]*> {5}3: -A BROKEN/);
    assert.match(await metrics.registry.metrics(), /kubeproxy_sync_proxy_rules_iptables_restore_failures_total 1/);
    await api.admin.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'c' },
      spec: { ports: [{ port: 81 }] },
    });
    await waitFor(() => p.fullSyncs === 2, 3000, 10, 'the next sync is full');
    assert.match(ipt.restores.at(-1)!, /"default\/b has no endpoints"/);
  } finally {
    await p.stop();
  }
});

test('UDP: after a sync, conntrack entries to the Service whose reply source is not a serving endpoint are deleted; failures are retried', async () => {
  const api2 = await startTestApiServer('n1');
  try {
    const dns = await api2.admin.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'dns' },
      spec: { ports: [{ port: 53, protocol: 'UDP' }] },
    });
    const ip = dns.spec.clusterIP;
    const ipt = new FakeIptables();
    const deleted: string[][] = [];
    // A flow rejected before there were endpoints (its reply would come from the cluster IP), and one to 10.244.0.53.
    let table = `udp      17 29 src=10.250.0.1 dst=${ip} sport=40053 dport=53 [UNREPLIED] src=${ip} dst=10.250.0.1 sport=53 dport=40053 mark=0 use=1\n`;
    table += `udp      17 29 src=10.250.0.1 dst=${ip} sport=40054 dport=53 src=10.244.0.53 dst=10.250.0.1 sport=53 dport=40054 mark=0 use=1\n`;
    let listFails = 1;
    const p = new Proxier(cfg, {
      client: api2.admin,
      ipt,
      log: memoryLogger(),
      metrics: new ProxyMetrics(),
      health: new ProxyHealth(60_000),
      conntrack: async (args) => (deleted.push(args), 1),
      conntrackList: async () => {
        if (listFails-- > 0) throw new Error('conntrack: Operation not permitted');
        return table;
      },
    });
    await p.start();
    assert.deepEqual(deleted, [], 'no endpoints yet: nothing to clean');
    await api2.admin.create(
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      slice('dns', ['10.244.0.53', '10.244.0.54'], 'UDP', 53),
    );
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(deleted, [], 'the listing failed');
    // The next sync retries the Service whose cleanup failed, without a change to it.
    await api2.admin.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'other' },
      spec: { ports: [{ port: 80 }] },
    });
    await waitFor(() => deleted.length > 0, 3000, 10, 'retried cleanup');
    assert.deepEqual(
      deleted,
      [['-p', 'udp', '--orig-dst', ip, '--orig-port-dst', '53', '--reply-src', ip]],
      'the rejected flow goes; the one to a serving endpoint stays',
    );
    deleted.length = 0;
    table = table.split('\n')[1]! + '\n';
    await api2.admin.update('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/dns-x', {
      ...slice('dns', ['10.244.0.54'], 'UDP', 53),
      metadata: { ...slice('dns', [], 'UDP', 53).metadata, resourceVersion: undefined },
    });
    await waitFor(() => deleted.length > 0, 3000, 10, 'cleanup for a removed endpoint');
    assert.deepEqual(deleted, [['-p', 'udp', '--orig-dst', ip, '--orig-port-dst', '53', '--reply-src', '10.244.0.53']]);
    await p.stop();
  } finally {
    await api2.stop();
  }
});

test('health: healthy while syncs keep up; 503 material once a queued update waits longer than the timeout', () => {
  let now = 1000;
  const h = new ProxyHealth(60_000, () => now);
  assert.equal(h.state().healthy, true, 'nothing queued yet');
  h.queued();
  now += 59_000;
  assert.equal(h.state().healthy, true);
  now += 2000;
  assert.equal(h.state().healthy, false);
  h.updated();
  assert.equal(h.state().healthy, true);
  assert.equal(h.state().lastUpdated.getTime(), now);
});

test('/healthz and /livez bodies: a healthy proxy reports the current time as lastUpdated; an unhealthy one its last sync, with 503', async () => {
  let now = Date.parse('2026-12-03T10:00:00.000Z');
  const h = new ProxyHealth(60_000, () => now);
  h.updated();
  const metrics = new ProxyMetrics();
  const srv = await serveHealth(h, metrics, '127.0.0.1:0');
  const get = async (p: string) => {
    const r = await fetch(`http://127.0.0.1:${srv.port}${p}`);
    return { code: r.status, body: await r.text() };
  };
  try {
    now += 5000;
    assert.deepEqual(await get('/healthz'), {
      code: 200,
      body: '{"lastUpdated": "2026-12-03 10:00:05 +0000 UTC","currentTime": "2026-12-03 10:00:05 +0000 UTC", "nodeEligible": true}',
    });
    h.queued();
    now += 61_000;
    assert.deepEqual(await get('/livez'), {
      code: 503,
      body: '{"lastUpdated": "2026-12-03 10:00:00 +0000 UTC","currentTime": "2026-12-03 10:01:06 +0000 UTC"}',
    });
    assert.match(await metrics.registry.metrics(), /kubeproxy_proxy_livez_total\{code="503"\} 1/);
  } finally {
    await srv.close();
  }
});

/** A backend that records what it is asked to sync. */
class RecordingBackend implements ProxyBackend {
  readonly mode = 'nftables' as const;
  calls: SyncInput[] = [];
  failNext = false;
  constructor(readonly family: IPFamily) {}
  async sync(i: SyncInput): Promise<SyncOutcome> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('nft -f - failed (exit 1): boom');
    }
    this.calls.push({ ...i, changed: new Set(i.changed), ports: new Map(i.ports), endpoints: new Map(i.endpoints) });
    return {
      renderMs: 0,
      applyMs: 0,
      bytes: 0,
      noLocalInternal: 0,
      noLocalExternal: 0,
      summary: `${i.ports.size} services`,
    };
  }
  describe(e: Error): string {
    return `nftables sync failed, keeping the previous rules: ${e.message}`;
  }
}

test('a node address that arrives during a full sync gets a full sync of its own (the one running had the old address)', async () => {
  const api4 = await startTestApiServer('n1');
  try {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const backend = new RecordingBackend('IPv4');
    const first = backend.sync.bind(backend);
    let calls = 0;
    backend.sync = async (i) => {
      if (calls++ === 0) await held; // the first (full) sync is still writing when the Node shows up
      return first(i);
    };
    const p = new Proxier(cfg, {
      client: api4.admin,
      backends: [backend],
      log: memoryLogger(),
      metrics: new ProxyMetrics(),
      health: new ProxyHealth(60_000),
      conntrack: async () => 0,
      conntrackList: async () => '',
    });
    const started = p.start(); // resolves after the first sync, which is held
    try {
      await waitFor(() => calls === 1, 3000, 10, 'the first sync started');
      await api4.admin.create('/api/v1/nodes', {
        metadata: { name: 'n1' },
        spec: { podCIDR: '10.244.0.0/24' },
        status: { addresses: [{ type: 'InternalIP', address: '192.168.0.2' }] },
      });
      await new Promise((r) => setTimeout(r, 300));
      release();
      await started;
      await waitFor(
        () => backend.calls.some((c) => c.full && c.nodeIP === '192.168.0.2'),
        3000,
        10,
        'a full sync with the node address',
      );
      assert.equal(backend.calls[0]!.nodeIP, '', 'the held sync had no address');
    } finally {
      await p.stop();
    }
  } finally {
    await api4.stop();
  }
});

test("dual stack: each family's backend gets its own cluster IPs, slices and node address; a partial sync touches only the families that changed", async () => {
  const api3 = await startTestApiServer('n1', { serviceClusterIpRange: '10.96.0.0/12,fd00:10:96::/108' });
  try {
    const dual = await api3.admin.create('/api/v1/namespaces/default/services', {
      metadata: { name: 'dual' },
      spec: { ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 53, protocol: 'UDP' }] },
    });
    const [ip4, ip6] = dual.spec.clusterIPs as [string, string];
    await api3.admin.create(
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
      slice('dual', ['10.244.0.5'], 'UDP', 53),
    );
    await api3.admin.create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      ...slice('dual', ['fd00:10:244::5'], 'UDP', 53),
      metadata: { ...slice('dual', []).metadata, name: 'dual-v6' },
      addressType: 'IPv6',
    });
    await api3.admin.create('/api/v1/nodes', {
      metadata: { name: 'n1' },
      spec: { podCIDRs: ['10.244.0.0/24', 'fd00:10:244::/64'] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.168.0.2' },
          { type: 'InternalIP', address: 'fd00::2' },
        ],
      },
    });
    const v4 = new RecordingBackend('IPv4');
    const v6 = new RecordingBackend('IPv6');
    const deleted: string[][] = [];
    const listed: IPFamily[] = [];
    const log = memoryLogger();
    const p = new Proxier(cfg, {
      client: api3.admin,
      backends: [v4, v6],
      log,
      metrics: new ProxyMetrics(),
      health: new ProxyHealth(60_000),
      conntrack: async (args) => (deleted.push(args), 1),
      conntrackList: async (family) => {
        listed.push(family);
        return family === 'IPv6'
          ? `udp      17 29 src=fd00::9 dst=${ip6} sport=40053 dport=53 [UNREPLIED] src=${ip6} dst=fd00::9 sport=53 dport=40053 mark=0 use=1\n`
          : '';
      },
    });
    await p.start();
    try {
      await waitFor(
        () => v6.calls.some((c) => c.nodeIP === 'fd00::2'),
        3000,
        10,
        'the node address reaches the IPv6 side',
      );
      const last4 = v4.calls.at(-1)!;
      const last6 = v6.calls.at(-1)!;
      assert.equal(last4.ports.get('default/dual')![0]!.clusterIP, ip4);
      assert.equal(last6.ports.get('default/dual')![0]!.clusterIP, ip6);
      assert.deepEqual(
        last4.endpoints.get('default/dual:/UDP')!.map((e) => e.addr),
        ['10.244.0.5:53'],
      );
      assert.deepEqual(
        last6.endpoints.get('default/dual:/UDP')!.map((e) => e.addr),
        ['[fd00:10:244::5]:53'],
      );
      assert.deepEqual(
        [last4.nodeIP, last4.nodeCIDR, last6.nodeIP, last6.nodeCIDR],
        ['192.168.0.2', '10.244.0.0/24', 'fd00::2', 'fd00:10:244::/64'],
      );
      assert.equal(v4.calls.find((c) => c.full)!.ports.has('default/kubernetes'), true);
      assert.equal(
        v6.calls.at(-1)!.ports.has('default/kubernetes'),
        false,
        'the kubernetes Service is single-stack IPv4',
      );
      // Conntrack cleanup per family: the IPv6 flow rejected before the endpoint existed goes, with -f ipv6.
      assert.ok(listed.includes('IPv4') && listed.includes('IPv6'));
      assert.deepEqual(deleted, [
        ['-p', 'udp', '--orig-dst', ip6, '--orig-port-dst', '53', '--reply-src', ip6, '-f', 'ipv6'],
      ]);
      // An IPv6-only endpoint change: a partial sync of the IPv6 side with that Service; the IPv4 side sees no change.
      const n4 = v4.calls.length;
      const n6 = v6.calls.length;
      await api3.admin.update('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/dual-v6', {
        ...slice('dual', ['fd00:10:244::6'], 'UDP', 53),
        metadata: { ...slice('dual', []).metadata, name: 'dual-v6' },
        addressType: 'IPv6',
      });
      await waitFor(() => v6.calls.length > n6, 3000, 10, 'IPv6 partial sync');
      assert.deepEqual([...v6.calls.at(-1)!.changed], ['default/dual']);
      assert.equal(v6.calls.at(-1)!.full, false);
      assert.ok(
        v4.calls.slice(n4).every((c) => c.changed.size === 0),
        'the IPv4 side had nothing to write',
      );
      // A failure on one side makes that side's next sync full, and names the family; the other side stays partial.
      v6.failNext = true;
      await api3.admin.create('/api/v1/namespaces/default/services', {
        metadata: { name: 'six' },
        spec: { ipFamilies: ['IPv6'], ports: [{ port: 80 }] },
      });
      await waitFor(
        () =>
          log.lines.some((l) =>
            l.includes('IPv6: nftables sync failed, keeping the previous rules: nft -f - failed (exit 1): boom'),
          ),
        3000,
        10,
        'failure logged',
      );
      const n4b = v4.calls.length;
      await api3.admin.create('/api/v1/namespaces/default/services', {
        metadata: { name: 'four' },
        spec: { ports: [{ port: 80 }] },
      });
      await waitFor(
        () =>
          v4.calls.slice(n4b).some((c) => c.changed.has('default/four')) &&
          v6.calls.at(-1)!.full &&
          v6.calls.at(-1)!.ports.has('default/six'),
        3000,
        10,
        'a full IPv6 sync',
      );
      assert.ok(
        v4.calls.slice(n4b).every((c) => !c.full),
        'the IPv4 side kept syncing partially',
      );
    } finally {
      await p.stop();
    }
  } finally {
    await api3.stop();
  }
});
