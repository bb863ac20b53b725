// The pod network: routes as a pure diff, the conflist, the
// masquerade rules, and the reconciler against a real apiserver's Node list
// with the kernel replaced by a route table in memory.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import type { Iptables } from '../../kube/iptables.js';
import { createLogger } from '../../kube/log.js';
import { useTestApiServer } from '../../testing/apiserver.js';
import { type IpCommand, PodNetwork } from './network.js';
import {
  desiredRoutes,
  desiredVxlan,
  networkRules,
  nodeNets,
  parseRoutes,
  peerDiff,
  podConflist,
  podNetworkPrefixes,
  type Route,
  routeDiff,
  vxlanAnnotations,
} from './plan.js';

const node = (name: string, podCIDR?: string, ip?: string): KObj => ({
  metadata: { name },
  spec: podCIDR ? { podCIDR, podCIDRs: [podCIDR] } : {},
  status: {
    addresses: ip
      ? [
          { type: 'Hostname', address: name },
          { type: 'InternalIP', address: ip },
        ]
      : [],
  },
});

test('host-gw routes: one per other node with a podCIDR and an InternalIP; overlapping podCIDRs get none, with a reason', () => {
  const nets = nodeNets([
    node('a', '10.244.0.0/24', '192.0.2.1'),
    node('b', '10.244.1.0/24', '192.0.2.2'),
    node('c', '10.244.2.0/24'),
    node('d'),
    node('e', '10.244.1.0/25', '192.0.2.5'),
    node('f', '10.244.0.128/25', '192.0.2.6'),
  ]);
  const { routes, skipped } = desiredRoutes(nets, 'a');
  assert.deepEqual(routes, [{ dst: '10.244.1.0/24', via: '192.0.2.2' }]);
  assert.deepEqual(skipped, [
    'node c has podCIDR 10.244.2.0/24 but no IPv4 InternalIP yet',
    "node e's podCIDR 10.244.1.0/25 overlaps node b's 10.244.1.0/24; no route",
    "node f's podCIDR 10.244.0.128/25 overlaps node a's 10.244.0.0/24; no route",
  ]);
});

test("a peer's podCIDR covering a node's address gets no route: a node cannot pull the LAN or this node's traffic to itself", () => {
  const nets = nodeNets([
    node('a', '10.244.0.0/24', '192.0.2.1'),
    node('b', '10.244.1.0/24', '192.0.2.2'),
    node('evil', '128.0.0.0/1', '198.51.100.9'),
    node('wide', '192.0.2.0/25', '203.0.113.4'),
  ]);
  const { routes, skipped } = desiredRoutes(nets, 'a', 'IPv4', ['192.0.2.1', '10.0.0.7']);
  assert.deepEqual(routes, [{ dst: '10.244.1.0/24', via: '192.0.2.2' }]);
  assert.deepEqual(skipped, [
    "node evil's podCIDR 128.0.0.0/1 covers node a's address 192.0.2.1; no route",
    "node wide's podCIDR 192.0.2.0/25 covers node a's address 192.0.2.1; no route",
  ]);
  // Another node's address is protected too, and so is an address of this node that is not its InternalIP.
  const other = desiredRoutes(
    nodeNets([
      node('a', '10.244.0.0/24', '192.0.2.1'),
      node('c', '10.0.0.0/8', '203.0.113.5'),
      node('d', '203.0.113.0/24', '192.0.2.9'),
    ]),
    'a',
    'IPv4',
    ['10.0.0.7'],
  );
  assert.deepEqual(other.skipped, [
    "node c's podCIDR 10.0.0.0/8 covers node a's address 10.0.0.7; no route",
    "node d's podCIDR 203.0.113.0/24 covers node c's address 203.0.113.5; no route",
  ]);
});

const dualNode = (name: string, v4?: string, v6?: string, ip4?: string, ip6?: string): KObj => ({
  metadata: { name },
  spec: v4 || v6 ? { podCIDR: v4 ?? v6, podCIDRs: [v4, v6].filter(Boolean) } : {},
  status: { addresses: [ip4, ip6].filter(Boolean).map((address) => ({ type: 'InternalIP', address })) },
});

test('a dual-stack Node (IPv6 podCIDR first) has a podCIDR and an InternalIP of each family', () => {
  const dual: KObj = {
    metadata: { name: 'g' },
    spec: { podCIDR: 'fd00:10:244:1::/64', podCIDRs: ['fd00:10:244:1::/64', '10.244.5.0/24'] },
    status: {
      addresses: [
        { type: 'InternalIP', address: 'fd00::7' },
        { type: 'InternalIP', address: '192.0.2.7' },
      ],
    },
  };
  const [g] = nodeNets([dual]);
  assert.deepEqual(g, {
    name: 'g',
    podCIDR: '10.244.5.0/24',
    internalIP: '192.0.2.7',
    podCIDR6: 'fd00:10:244:1::/64',
    internalIP6: 'fd00::7',
    vtepMAC: undefined,
  });
  assert.deepEqual(
    Object.keys(nodeNets([node('a', '10.244.0.0/24', '192.0.2.1')])[0]!).sort(),
    ['internalIP', 'name', 'podCIDR', 'vtepMAC'],
    "a single-stack Node's facts carry no IPv6 keys",
  );
});

test("host-gw IPv6 routes: via each other node's IPv6 InternalIP; a node without one, or overlapping, gets none", () => {
  const nets = nodeNets([
    dualNode('a', '10.244.0.0/24', 'fd00:10:244::/64', '192.0.2.1', 'fd00:192::1'),
    dualNode('b', '10.244.1.0/24', 'fd00:10:244:1::/64', '192.0.2.2', 'fd00:192::2'),
    dualNode('c', '10.244.2.0/24', 'fd00:10:244:2::/64', '192.0.2.3'),
    dualNode('d', '10.244.3.0/24', undefined, '192.0.2.4', 'fd00:192::4'),
    dualNode('e', undefined, 'fd00:10:244::/63', undefined, 'fd00:192::5'),
  ]);
  const v6 = desiredRoutes(nets, 'a', 'IPv6');
  assert.deepEqual(v6.routes, [{ dst: 'fd00:10:244:1::/64', via: 'fd00:192::2' }]);
  assert.deepEqual(v6.skipped, [
    'node c has podCIDR fd00:10:244:2::/64 but no IPv6 InternalIP yet',
    "node e's podCIDR fd00:10:244::/63 overlaps node a's fd00:10:244::/64; no route",
  ]);
  assert.deepEqual(
    desiredRoutes(nets, 'a').routes.map((r) => r.dst),
    ['10.244.1.0/24', '10.244.2.0/24', '10.244.3.0/24'],
    'IPv4 as before',
  );
  assert.deepEqual(
    parseRoutes('[{"dst":"fd00:10:244:1::/64","gateway":"fd00:192::2"},{"dst":"fd00::9","gateway":"fd00:192::9"}]'),
    [
      { dst: 'fd00:10:244:1::/64', via: 'fd00:192::2' },
      { dst: 'fd00::9/128', via: 'fd00:192::9' },
    ],
  );
});

test('route diff: new and moved routes are replaced, routes of gone nodes removed, unchanged ones left alone', () => {
  const cur: Route[] = [
    { dst: '10.244.1.0/24', via: '192.0.2.2' },
    { dst: '10.244.2.0/24', via: '192.0.2.3' },
    { dst: '10.244.3.0/24', via: '192.0.2.4' },
  ];
  const want: Route[] = [
    { dst: '10.244.1.0/24', via: '192.0.2.2' },
    { dst: '10.244.2.0/24', via: '192.0.2.33' },
    { dst: '10.244.4.0/24', via: '192.0.2.5' },
  ];
  assert.deepEqual(routeDiff(cur, want), {
    replace: [
      { dst: '10.244.2.0/24', via: '192.0.2.33' },
      { dst: '10.244.4.0/24', via: '192.0.2.5' },
    ],
    remove: [{ dst: '10.244.3.0/24', via: '192.0.2.4' }],
  });
  assert.deepEqual(routeDiff(want, want), { replace: [], remove: [] });
  assert.deepEqual(
    parseRoutes(
      '[{"dst":"10.244.1.0/24","gateway":"192.0.2.2","protocol":"77","flags":[]},{"dst":"10.9.9.9","gateway":"192.0.2.9"},{"dst":"10.8.0.0/16","dev":"x"}]',
    ),
    [
      { dst: '10.244.1.0/24', via: '192.0.2.2' },
      { dst: '10.9.9.9/32', via: '192.0.2.9' },
    ],
  );
});

test('the conflist: bridge on the podCIDR with host-local, portmap and loopback; no bridge masquerade (pod to pod keeps its source)', () => {
  const c = JSON.parse(podConflist({ podCIDRs: ['10.244.3.0/24'], ipamDir: '/d/ipam' }));
  assert.deepEqual(
    c.plugins.map((p: { type: string }) => p.type),
    ['bridge', 'portmap', 'loopback'],
  );
  assert.equal(c.plugins[0].ipMasq, false);
  assert.equal(c.plugins[0].isGateway, true);
  assert.deepEqual(c.plugins[0].ipam, {
    type: 'host-local',
    ranges: [[{ subnet: '10.244.3.0/24' }]],
    routes: [{ dst: '0.0.0.0/0' }],
    dataDir: '/d/ipam',
  });
  assert.equal(JSON.parse(podConflist({ podCIDRs: ['10.244.3.0/24'] })).plugins[0].ipam.dataDir, undefined);
  // Dual stack: one range per family, in the Node's order (the first is the pods' primary IP), a default route each.
  assert.deepEqual(JSON.parse(podConflist({ podCIDRs: ['10.244.3.0/24', 'fd00:10:244:3::/64'] })).plugins[0].ipam, {
    type: 'host-local',
    ranges: [[{ subnet: '10.244.3.0/24' }], [{ subnet: 'fd00:10:244:3::/64' }]],
    routes: [{ dst: '0.0.0.0/0' }, { dst: '::/0' }],
  });
});

test("masquerade rules: pod to any podCIDR returns, other egress from this node's pods is masqueraded; forwarding accepted for podCIDRs", () => {
  const r = networkRules('10.244.0.0/24', ['10.244.1.0/24', '10.244.0.0/24']);
  const nat = r.slice(r.indexOf('*nat'));
  assert.match(
    nat,
    /-A TSKUBE-POSTRTG -s 10\.244\.0\.0\/24 -d 10\.244\.0\.0\/24 .*-j RETURN\n-A TSKUBE-POSTRTG -s 10\.244\.0\.0\/24 -d 10\.244\.1\.0\/24 .*-j RETURN\n-A TSKUBE-POSTRTG -s 10\.244\.0\.0\/24 ! -d 224\.0\.0\.0\/4 .*-j MASQUERADE --random-fully\nCOMMIT/,
  );
  assert.match(
    r,
    /^\*filter\n:TSKUBE-FWD - \[0:0\]\n-A TSKUBE-FWD -s 10\.244\.0\.0\/24 .*-j ACCEPT\n-A TSKUBE-FWD -d 10\.244\.0\.0\/24 .*-j ACCEPT\n-A TSKUBE-FWD -s 10\.244\.1\.0\/24/,
  );
});

test("rule prefixes: the podCIDRs' common supernet, unless it would cover a node address (then each podCIDR)", () => {
  assert.deepEqual(podNetworkPrefixes(['10.244.0.0/24', '10.244.1.0/24', '10.244.7.0/24'], ['192.0.2.1']), [
    '10.244.0.0/21',
  ]);
  assert.deepEqual(podNetworkPrefixes(['10.244.0.0/24', '10.244.200.0/24'], ['192.0.2.1']), ['10.244.0.0/16']);
  assert.deepEqual(
    podNetworkPrefixes(['10.244.0.0/24', '10.245.3.0/24'], ['10.244.9.9']),
    ['10.244.0.0/24', '10.245.3.0/24'],
    'the supernet 10.244.0.0/15 holds a node',
  );
  assert.deepEqual(
    podNetworkPrefixes(['10.0.0.0/24', '192.168.0.0/24'], []),
    ['10.0.0.0/24', '192.168.0.0/24'],
    'no supernet narrower than /8',
  );
  assert.deepEqual(podNetworkPrefixes(['10.244.3.0/24'], []), ['10.244.3.0/24']);
  const r = networkRules('10.244.1.0/24', ['10.244.0.0/21']);
  assert.match(
    r,
    /-A TSKUBE-POSTRTG -s 10\.244\.1\.0\/24 -d 10\.244\.0\.0\/21 .*-j RETURN\n-A TSKUBE-POSTRTG -s 10\.244\.1\.0\/24 ! -d 224/,
  );
  // IPv6: the same, with IPv6 prefixes and multicast (ip6tables-restore input).
  assert.deepEqual(
    podNetworkPrefixes(['fd00:10:244::/64', 'fd00:10:244:1::/64', 'fd00:10:244:5::/64'], ['fd00:192::1']),
    ['fd00:10:244::/61'],
  );
  assert.deepEqual(
    podNetworkPrefixes(['fd00:10:244::/64', 'fd00:10:244:1::/64'], ['fd00:10:244::99']),
    ['fd00:10:244:1::/64', 'fd00:10:244::/64'],
    'the supernet holds a node',
  );
  assert.deepEqual(
    podNetworkPrefixes(['fd00::/64', 'fd01::/64'], []),
    ['fd00::/64', 'fd01::/64'],
    'no supernet wider than /16',
  );
  const r6 = networkRules('fd00:10:244:1::/64', ['fd00:10:244::/61']);
  assert.match(
    r6,
    /-A TSKUBE-POSTRTG -s fd00:10:244:1::\/64 -d fd00:10:244::\/61 .*-j RETURN\n-A TSKUBE-POSTRTG -s fd00:10:244:1::\/64 ! -d ff00::\/8 .*-j MASQUERADE --random-fully/,
  );
  assert.match(r6, /-A TSKUBE-FWD -s fd00:10:244::\/61 .*-j ACCEPT/);
});

/** The kernel's route table for our proto, in memory, speaking `ip`'s arguments and JSON. */
class FakeIp implements IpCommand {
  readonly table = new Map<string, string>();
  calls: string[] = [];
  async run(argv: string[], _bin?: string, input?: string): Promise<string> {
    const v6 = argv[0] === '-6';
    const args = v6 ? argv.slice(1) : argv;
    if (args[1] === '-batch') {
      for (const line of input!.trim().split('\n')) await this.run([...(v6 ? ['-6'] : []), ...line.split(' ')]);
      return '';
    }
    this.calls.push(argv.join(' '));
    if (args[0] === '-j')
      return JSON.stringify(
        [...this.table]
          .filter(([dst]) => dst.includes(':') === v6)
          .map(([dst, gateway]) => ({ dst, gateway, protocol: '77' })),
      );
    if (args[1] === 'replace') this.table.set(args[2]!, args[4]!);
    else if (args[1] === 'del') this.table.delete(args[2]!);
    return '';
  }
}

class FakeIptables implements Iptables {
  restores: string[] = [];
  jumps: string[] = [];
  async restore(t: string) {
    this.restores.push(t);
  }
  async save() {
    return '';
  }
  async ensureChain() {}
  /** As iptables -C then -I: a jump already there is not added again. */
  async ensureRule(table: string, chain: string, args: string[]) {
    const j = `${table} ${chain} -> ${args[args.length - 1]}`;
    if (this.jumps.includes(j)) return false;
    this.jumps.push(j);
    return true;
  }
}

const s = useTestApiServer('n1', {
  allocateNodeCidrs: true,
  clusterCidr: '10.244.0.0/16',
  nodeCidrMaskSize: 24,
  controllers: ['node-ipam-controller'],
});

async function until<T>(fn: () => T | undefined | false, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('reconciler: waits for its podCIDR, then writes the conflist, forwarding and rules, and keeps a route per other node as Nodes come, move and go', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-net-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fwd = path.join(dir, 'ip_forward');
  fs.writeFileSync(fwd, '0\n');
  fs.writeFileSync(path.join(dir, 'unrelated.txt'), 'x');
  const ip = new FakeIp();
  ip.table.set('10.99.0.0/24', '192.0.2.99'); // left by a node that was deleted while we were down
  const iptables = new FakeIptables();
  const lines: string[] = [];
  let ready = 0;
  const admin = s.api.admin;
  const status = (addr: string) => ({ addresses: [{ type: 'InternalIP', address: addr }] });
  const net = new PodNetwork({
    mode: 'host-gw',
    nodeName: 'n1',
    nodeIP: '192.0.2.1',
    client: admin,
    cniConfDir: path.join(dir, 'cni'),
    ipamDir: path.join(dir, 'ipam'),
    log: createLogger('t', { sink: (l) => lines.push(l) }),
    ip,
    iptables,
    ipForwardFile: fwd,
    onReady: () => ready++,
  });
  await admin.create('/api/v1/nodes', { metadata: { name: 'n1' }, spec: {}, status: status('192.0.2.1') });
  await net.start();
  try {
    const own = await until(() => net.podCIDRs[0], 'own conflist');
    const conflist = JSON.parse(fs.readFileSync(path.join(dir, 'cni', '10-tskube.conflist'), 'utf8'));
    assert.equal(conflist.plugins[0].ipam.ranges[0][0].subnet, own);
    assert.equal(fs.readFileSync(fwd, 'utf8').trim(), '1');
    assert.equal(ready, 1);
    assert.deepEqual(iptables.jumps, ['nat POSTROUTING -> TSKUBE-POSTRTG', 'filter FORWARD -> TSKUBE-FWD']);
    await until(() => !ip.table.has('10.99.0.0/24'), 'stale route removed');
    await admin.create('/api/v1/nodes', { metadata: { name: 'n2' }, spec: {}, status: status('192.0.2.2') });
    await admin.create('/api/v1/nodes', { metadata: { name: 'n3' }, spec: {}, status: status('192.0.2.3') });
    await until(() => ip.table.size === 2, 'routes to n2 and n3');
    const n2 = (await admin.get('/api/v1/nodes/n2')).spec.podCIDR as string;
    const n3 = (await admin.get('/api/v1/nodes/n3')).spec.podCIDR as string;
    assert.deepEqual(Object.fromEntries(ip.table), { [n2]: '192.0.2.2', [n3]: '192.0.2.3' });
    assert.ok(
      iptables.restores.at(-1)!.includes(`-d ${podNetworkPrefixes([own, n2, n3], [])[0]} `),
      'rules cover every podCIDR',
    );
    // n3 moves to another address; n2 goes away.
    await admin.patch('/api/v1/nodes/n3/status', { status: status('192.0.2.33') }, 'merge');
    await admin.delete('/api/v1/nodes/n2');
    await until(() => ip.table.size === 1 && ip.table.get(n3) === '192.0.2.33', 'route moved, gone node removed');
    const before = ip.calls.length;
    await net.reconcile();
    assert.deepEqual(
      ip.calls.slice(before),
      ['-j route show proto 77'],
      'a reconcile with nothing changed changes nothing',
    );
    // A status post that changes nothing the network uses does not even look at the kernel.
    const quiet = ip.calls.length;
    await admin.patch(
      '/api/v1/nodes/n3/status',
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      'merge',
    );
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(ip.calls.length, quiet);
    // Someone deletes our route and flushes our rules: a periodic pass (here every 300 ms) puts both back.
    const periodic = new PodNetwork({
      mode: 'host-gw',
      nodeName: 'n1',
      nodeIP: '192.0.2.1',
      client: admin,
      cniConfDir: path.join(dir, 'cni'),
      log: createLogger('t', { sink: () => {} }),
      ip,
      iptables,
      ipForwardFile: fwd,
      resyncMs: 300,
    });
    await periodic.start();
    try {
      await until(() => periodic.podCIDRs[0], 'second instance synced');
      await new Promise((r) => setTimeout(r, 100)); // its first pass is done: only a periodic one can restore
      ip.table.delete(n3);
      const restores = iptables.restores.length;
      await until(() => ip.table.get(n3) === '192.0.2.33', 'route restored by the periodic pass');
      assert.ok(iptables.restores.length > restores, 'the rules were written again too');
    } finally {
      await periodic.stop();
    }
    assert.ok(lines.some((l) => /pod network: route .* via 192\.0\.2\.33/.test(l)));
    assert.ok(lines.some((l) => /removed route .* via 192\.0\.2\.2/.test(l)));
  } finally {
    await net.stop();
    await admin.delete('/api/v1/nodes/n1').catch(() => undefined);
    await admin.delete('/api/v1/nodes/n3').catch(() => undefined);
  }
});

const dualApi = useTestApiServer('d1', {
  allocateNodeCidrs: true,
  clusterCidr: '10.244.0.0/16,fd00:10:244::/56',
  controllers: ['node-ipam-controller'],
});

test('reconciler, dual stack: both ranges in the conflist, both forwarding sysctls, rules through iptables and ip6tables, a route per family', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-net-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const [fwd, fwd6] = [path.join(dir, 'ip_forward'), path.join(dir, 'forwarding6')];
  fs.writeFileSync(fwd, '0\n');
  fs.writeFileSync(fwd6, '0\n');
  const ip = new FakeIp();
  const [v4, v6] = [new FakeIptables(), new FakeIptables()];
  const admin = dualApi.api.admin;
  const status = (a: string, b: string) => ({
    addresses: [
      { type: 'InternalIP', address: a },
      { type: 'InternalIP', address: b },
    ],
  });
  await admin.create('/api/v1/nodes', {
    metadata: { name: 'd1' },
    spec: {},
    status: status('192.0.2.1', 'fd00:192::1'),
  });
  await admin.create('/api/v1/nodes', {
    metadata: { name: 'd2' },
    spec: {},
    status: status('192.0.2.2', 'fd00:192::2'),
  });
  const net = new PodNetwork({
    mode: 'host-gw',
    nodeName: 'd1',
    nodeIP: '192.0.2.1',
    nodeIP6: 'fd00:192::1',
    client: admin,
    cniConfDir: path.join(dir, 'cni'),
    log: createLogger('t', { sink: () => {} }),
    ip,
    iptables: v4,
    ip6tables: v6,
    ipForwardFile: fwd,
    ip6ForwardFile: fwd6,
  });
  await net.start();
  try {
    const [own4, own6] = await until(() => net.podCIDRs.length === 2 && net.podCIDRs, 'both podCIDRs');
    assert.match(own4!, /^10\.244\.\d+\.0\/24$/);
    assert.match(own6!, /^fd00:10:244:[0-9a-f:]*\/64$/);
    const ranges = JSON.parse(fs.readFileSync(path.join(dir, 'cni', '10-tskube.conflist'), 'utf8')).plugins[0].ipam
      .ranges;
    assert.deepEqual(ranges, [[{ subnet: own4 }], [{ subnet: own6 }]]);
    assert.deepEqual([fs.readFileSync(fwd, 'utf8').trim(), fs.readFileSync(fwd6, 'utf8').trim()], ['1', '1']);
    const d2 = (await admin.get('/api/v1/nodes/d2')).spec.podCIDRs as string[];
    await until(() => ip.table.size === 2, 'a route per family to d2');
    assert.deepEqual(Object.fromEntries(ip.table), { [d2[0]!]: '192.0.2.2', [d2[1]!]: 'fd00:192::2' });
    assert.deepEqual(v6.jumps, ['nat POSTROUTING -> TSKUBE-POSTRTG', 'filter FORWARD -> TSKUBE-FWD']);
    assert.ok(v6.restores.at(-1)!.includes(`-s ${own6} ! -d ff00::/8`), v6.restores.at(-1));
    assert.ok(!v4.restores.some((r) => r.includes('fd00:')), 'no IPv6 prefix in iptables input');
    assert.ok(ip.calls.includes('-6 -j route show proto 77'));
  } finally {
    await net.stop();
  }
});

test("reconciler: another CNI's config in the directory, or a podCIDR covering the node address, leaves the network alone with one clear message", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-net-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'cni'));
  fs.writeFileSync(path.join(dir, 'cni', '10-calico.conflist'), '{}');
  const lines: string[] = [];
  const ip = new FakeIp();
  const admin = s.api.admin;
  await admin.create('/api/v1/nodes', {
    metadata: { name: 'm1' },
    spec: {},
    status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }] },
  });
  let cidr = '';
  for (let i = 0; i < 200 && !cidr; i++) {
    cidr = ((await admin.get('/api/v1/nodes/m1')).spec.podCIDR as string | undefined) ?? '';
    if (!cidr) await new Promise((r) => setTimeout(r, 25));
  }
  const mk = (nodeIP: string, cniConfDir: string) =>
    new PodNetwork({
      mode: 'host-gw',
      nodeName: 'm1',
      nodeIP,
      client: admin,
      cniConfDir,
      log: createLogger('t', { sink: (l) => lines.push(l) }),
      ip,
      iptables: new FakeIptables(),
      ipForwardFile: path.join(dir, 'fwd'),
    });
  const a = mk('192.0.2.1', path.join(dir, 'cni'));
  await a.start();
  await until(() => lines.some((l) => l.includes('10-calico.conflist')), 'warning');
  await a.reconcile();
  await a.stop();
  assert.equal(
    lines.filter((l) => /already holds 10-calico\.conflist: leaving pod networking to that CNI/.test(l)).length,
    1,
    lines.join('\n'),
  );
  assert.equal(fs.existsSync(path.join(dir, 'cni', '10-tskube.conflist')), false);
  const inside = cidr.replace(/0\/24$/, '7');
  const b = mk(inside, path.join(dir, 'cni2'));
  await b.start();
  await until(() => lines.some((l) => l.includes('covers the node')), 'covers error');
  await b.stop();
  assert.ok(
    lines.some((l) =>
      l.includes(
        `node m1's podCIDR ${cidr} covers the node's own address ${inside}; not configuring the pod network (fix --cluster-cidr)`,
      ),
    ),
  );
  assert.equal(fs.existsSync(path.join(dir, 'cni2', '10-tskube.conflist')), false);
  assert.equal(ip.calls.length, 0);
  await admin.delete('/api/v1/nodes/m1');
});

test("vxlan: a route via each other node's network address on flannel.1, its neighbour and FDB entries; nodes without a VTEP MAC wait; stale entries go", () => {
  const ann = (mac: string) => ({ 'flannel.alpha.coreos.com/backend-data': JSON.stringify({ VNI: 1, VtepMAC: mac }) });
  const withMac = (n: KObj, mac: string): KObj => ({ ...n, metadata: { ...n.metadata, annotations: ann(mac) } });
  const nets = nodeNets([
    withMac(node('a', '10.244.0.0/24', '192.0.2.1'), 'aa:aa:aa:aa:aa:aa'),
    withMac(node('b', '10.244.1.0/24', '198.51.100.2'), 'BB:BB:BB:BB:BB:BB'),
    node('c', '10.244.2.0/24', '198.51.100.3'),
  ]);
  const { routes, peers, skipped } = desiredVxlan(nets, 'a');
  assert.deepEqual(routes, [{ dst: '10.244.1.0/24', via: '10.244.1.0', dev: 'flannel.1' }]);
  assert.deepEqual(peers, [{ gateway: '10.244.1.0', mac: 'bb:bb:bb:bb:bb:bb', nodeIP: '198.51.100.2' }]);
  assert.deepEqual(skipped, ['node c has published no VTEP MAC (flannel.alpha.coreos.com/backend-data) yet']);
  assert.deepEqual(vxlanAnnotations('aa:aa:aa:aa:aa:aa', '192.0.2.1'), {
    'flannel.alpha.coreos.com/backend-type': 'vxlan',
    'flannel.alpha.coreos.com/backend-data': '{"VNI":1,"VtepMAC":"aa:aa:aa:aa:aa:aa"}',
    'flannel.alpha.coreos.com/public-ip': '192.0.2.1',
  });
  const d = peerDiff(
    {
      neigh: [
        { ip: '10.244.1.0', mac: 'bb:bb:bb:bb:bb:bb' },
        { ip: '10.244.9.0', mac: '99:99:99:99:99:99' },
      ],
      fdb: [
        { mac: 'bb:bb:bb:bb:bb:bb', dst: '198.51.100.9' },
        { mac: '99:99:99:99:99:99', dst: '198.51.100.99' },
      ],
    },
    peers,
  );
  assert.deepEqual(d, {
    setNeigh: [],
    delNeigh: [{ ip: '10.244.9.0', mac: '99:99:99:99:99:99' }],
    setFdb: [{ gateway: '10.244.1.0', mac: 'bb:bb:bb:bb:bb:bb', nodeIP: '198.51.100.2' }],
    delFdb: [{ mac: '99:99:99:99:99:99', dst: '198.51.100.99' }],
  });
  // A host-gw route to the same podCIDR is replaced when the node switches to vxlan.
  assert.deepEqual(routeDiff([{ dst: '10.244.1.0/24', via: '198.51.100.2' }], routes).replace, routes);
  assert.deepEqual(
    parseRoutes('[{"dst":"10.244.1.0/24","gateway":"10.244.1.0","dev":"flannel.1","flags":["onlink"]}]'),
    routes,
  );
});

test("vxlan, IPv6: routes over flannel-v6.1 via each node's IPv6 network address, FDB entries to its IPv6 InternalIP; flannel's v6 annotations", () => {
  const v6ann = (mac: string) => ({
    'flannel.alpha.coreos.com/backend-v6-data': JSON.stringify({ VNI: 1, VtepMAC: mac }),
  });
  const nets = nodeNets([
    {
      ...dualNode('a', '10.244.0.0/24', 'fd00:10:244::/64', '192.0.2.1', 'fd00:192::1'),
      metadata: { name: 'a', annotations: v6ann('aa:aa:aa:aa:aa:aa') },
    },
    {
      ...dualNode('b', '10.244.1.0/24', 'fd00:10:244:1::/64', '198.51.100.2', 'fd00:198::2'),
      metadata: { name: 'b', annotations: v6ann('BB:BB:BB:BB:BB:BB') },
    },
    dualNode('c', '10.244.2.0/24', 'fd00:10:244:2::/64', '198.51.100.3', 'fd00:198::3'),
  ]);
  assert.equal(nets[1]!.vtepMAC6, 'bb:bb:bb:bb:bb:bb');
  assert.equal(nets[1]!.vtepMAC, undefined, 'the IPv4 VTEP is published apart');
  const { routes, peers, skipped } = desiredVxlan(nets, 'a', 'IPv6');
  assert.deepEqual(routes, [{ dst: 'fd00:10:244:1::/64', via: 'fd00:10:244:1::', dev: 'flannel-v6.1' }]);
  assert.deepEqual(peers, [{ gateway: 'fd00:10:244:1::', mac: 'bb:bb:bb:bb:bb:bb', nodeIP: 'fd00:198::2' }]);
  assert.deepEqual(skipped, ['node c has published no VTEP MAC (flannel.alpha.coreos.com/backend-v6-data) yet']);
  assert.deepEqual(desiredVxlan(nets, 'a').routes, [], 'no IPv4 VTEP published: no IPv4 routes');
  assert.deepEqual(vxlanAnnotations('aa:aa:aa:aa:aa:aa', 'fd00:192::1', 'IPv6'), {
    'flannel.alpha.coreos.com/backend-type': 'vxlan',
    'flannel.alpha.coreos.com/backend-v6-data': '{"VNI":1,"VtepMAC":"aa:aa:aa:aa:aa:aa"}',
    'flannel.alpha.coreos.com/public-ipv6': 'fd00:192::1',
  });
  assert.deepEqual(
    parseRoutes('[{"dst":"fd00:10:244:1::/64","gateway":"fd00:10:244:1::","dev":"flannel-v6.1","flags":["onlink"]}]'),
    routes,
  );
});
