import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import { endpointsOfSlices } from '../model/endpoints.js';
import { NODE, slice, svc } from '../model/fixtures.js';
import { servicePorts } from '../model/service-port.js';
import { keyText, listingOf, verdictText, versionAtLeast } from './apply.js';
import { Commands, emptyListing, planFull } from './diff.js';
import { groupChainOf } from './groups.js';
import { KernelModel } from './kernel-model.js';
import { endpointBase, servicePortBase } from './names.js';
import { randomChange, randomService, rng, World } from './random-world.js';
import { keepRanges, renderBase, type RenderContext, renderService } from './render.js';
import { SlotBlocks, slotMapName, slotRanges, SLOTS } from './slots.js';
import { NftSyncer } from './syncer.js';

// Upstream proxier_test conventions: pods in 10.0.0.0/8, cluster IPs in 172.30.0.0/16, this node "test-node".
const ctx: RenderContext = {
  family: 'ip',
  masqueradeMark: '0x00004000',
  masqueradeAll: false,
  localMatch: 'ip saddr 10.0.0.0/8',
  notLocalMatch: 'ip saddr != 10.0.0.0/8',
  nodeIP: '192.168.0.2',
  nodePortIPs: ['192.168.0.2'],
  conntrackTCPLiberal: false,
};

const baseCtx = ctx;
const one = (s: Service, sl: EndpointSlice[] = [], c: RenderContext = ctx) =>
  renderService(servicePorts(s), endpointsOfSlices(sl, NODE), c, new SlotBlocks());

test("object names are upstream's (verified examples from its proxier tests)", () => {
  assert.equal(servicePortBase('ns1/svc1:p80', 'TCP'), 'ULMVA6XW-ns1/svc1/tcp/p80');
  assert.equal(endpointBase('ns1/svc1:p80', 'tcp', '10.180.0.1', 80), '5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
});

test('a ClusterIP Service: dispatch element to its group chain, masquerade of off-cluster traffic, DNAT through its block of endpoint slots, hairpin pairs', () => {
  const f = one(svc('ns1', 'svc1', { clusterIP: '172.30.0.41' }), [
    slice('ns1', 'svc1', [{ ip: '10.180.0.1' }, { ip: '10.180.0.2' }, { ip: '10.180.0.3' }]),
  ]);
  const group = groupChainOf('service-ULMVA6XW-ns1/svc1/tcp/p80');
  assert.match(group, /^clusterip-group\/\d+$/);
  // The first block handed out is 1: keys 4096 … 8191, in endpoint-slots-1; three near-equal shares.
  assert.deepEqual(f.elements, [
    { map: 'service-ips', key: '172.30.0.41 . tcp . 80', value: `goto ${group}` },
    { map: 'endpoint-slots-tcp-1', key: '4096-5460', value: '10.180.0.1 . 80' },
    { map: 'endpoint-slots-tcp-1', key: '5461-6825', value: '10.180.0.2 . 80' },
    { map: 'endpoint-slots-tcp-1', key: '6826-8191', value: '10.180.0.3 . 80' },
  ]);
  assert.deepEqual(f.grouped.get(group), [
    'ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
    'ip daddr 172.30.0.41 tcp dport 80 dnat ip to numgen random mod 4096 offset 4096 map @endpoint-slots-tcp-1',
  ]);
  assert.equal(f.chains.size, 0, 'no chain of its own, none per endpoint');
  assert.deepEqual([...f.groupedChains], ['service-ULMVA6XW-ns1/svc1/tcp/p80']);
  assert.deepEqual([...f.hairpins], ['10.180.0.1', '10.180.0.2', '10.180.0.3']);
  // masqueradeAll instead of the detector.
  const all = one(svc('ns1', 'svc1', { clusterIP: '172.30.0.41' }), [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])], {
    ...ctx,
    masqueradeAll: true,
  });
  assert.equal(all.grouped.get(group)![0], 'ip daddr 172.30.0.41 tcp dport 80 jump mark-for-masquerade');
  // A NodePort needs the service chain (its external chain goes there): no group.
  const np = one(
    svc('ns1', 'svc1', {
      type: 'NodePort',
      clusterIP: '172.30.0.41',
      ports: [{ name: 'p80', port: 80, nodePort: 3001, protocol: 'TCP' }],
    }),
    [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])],
  );
  assert.equal(np.grouped.size, 0);
  assert.deepEqual(np.chains.get('service-ULMVA6XW-ns1/svc1/tcp/p80'), [
    'ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
    'meta l4proto tcp dnat ip to numgen random mod 4096 offset 4096 map @endpoint-slots-tcp-1',
  ]);
});

test('no endpoints: REJECT through the no-endpoint maps for the cluster IP, external IPs, LB IPs and the NodePort; no chains', () => {
  const s = svc(
    'ns1',
    'svc1',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.41',
      externalIPs: ['192.168.99.11'],
      ports: [{ name: 'p80', port: 80, nodePort: 3001, protocol: 'TCP' }],
    },
    { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
  );
  const f = one(s);
  assert.equal(f.chains.size, 0);
  assert.deepEqual(
    f.elements.map((e) => `${e.map} ${e.key} ${e.value} ${e.comment ?? ''}`),
    [
      'no-endpoint-services 172.30.0.41 . tcp . 80 goto reject-chain ns1/svc1:p80',
      'no-endpoint-services 192.168.99.11 . tcp . 80 goto reject-chain ns1/svc1:p80',
      'no-endpoint-services 1.2.3.4 . tcp . 80 goto reject-chain ns1/svc1:p80',
      'no-endpoint-nodeports tcp . 3001 goto reject-chain ns1/svc1:p80',
    ],
  );
});

test('externalTrafficPolicy Local: only local endpoints for external traffic, pod and node traffic short-circuited to Cluster; no local endpoint → DROP', () => {
  const s = svc(
    'ns1',
    'svc1',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.41',
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'p80', port: 80, nodePort: 3001, protocol: 'TCP' }],
    },
    { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
  );
  const f = one(s, [
    slice('ns1', 'svc1', [
      { ip: '10.180.0.1', node: 'other' },
      { ip: '10.180.2.1', node: NODE },
    ]),
  ]);
  const base = 'ULMVA6XW-ns1/svc1/tcp/p80';
  assert.deepEqual(f.chains.get(`external-${base}`), [
    `ip saddr 10.0.0.0/8 goto service-${base} comment "short-circuit pod traffic"`,
    'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
    `fib saddr type local goto service-${base} comment "short-circuit local traffic"`,
    `goto local-${base}`,
  ]);
  // The cluster chain has block 1, the local chain block 2.
  assert.deepEqual(f.chains.get(`local-${base}`), [
    'meta l4proto tcp dnat ip to numgen random mod 4096 offset 8192 map @endpoint-slots-tcp-2',
  ]);
  assert.deepEqual(
    f.elements.filter((e) => e.map === 'endpoint-slots-tcp-2'),
    [{ map: 'endpoint-slots-tcp-2', key: '8192-12287', value: '10.180.2.1 . 80' }],
  );
  assert.deepEqual(
    f.elements.filter((e) => e.map === 'endpoint-slots-tcp-1').map((e) => `${e.key} ${e.value}`),
    ['4096-6143 10.180.0.1 . 80', '6144-8191 10.180.2.1 . 80'],
  );
  assert.ok(
    f.elements.some(
      (e) => e.map === 'service-nodeports' && e.key === 'tcp . 3001' && e.value === `goto external-${base}`,
    ),
  );
  const remoteOnly = one(s, [slice('ns1', 'svc1', [{ ip: '10.180.0.1', node: 'other' }])]);
  assert.deepEqual(
    remoteOnly.elements.filter((e) => e.value === 'drop').map((e) => `${e.map} ${e.key}`),
    ['no-endpoint-services 1.2.3.4 . tcp . 80', 'no-endpoint-nodeports tcp . 3001'],
  );
  assert.equal(remoteOnly.noLocalExternal, 1);
  assert.deepEqual(
    remoteOnly.chains.get(`external-${base}`)!.slice(-1),
    [`fib saddr type local goto service-${base} comment "short-circuit local traffic"`],
    'no goto to a missing local chain',
  );
});

test('internalTrafficPolicy Local without a local endpoint drops cluster IP traffic; terminating endpoints are a fallback', () => {
  const f = one(svc('ns1', 'svc1', { clusterIP: '172.30.0.41', internalTrafficPolicy: 'Local' }), [
    slice('ns1', 'svc1', [{ ip: '10.0.0.9', node: 'other' }]),
  ]);
  assert.deepEqual(f.elements, [
    { map: 'no-endpoint-services', key: '172.30.0.41 . tcp . 80', value: 'drop', comment: 'ns1/svc1:p80' },
  ]);
  assert.equal(f.noLocalInternal, 1);
  const term = one(svc('ns1', 'svc1', { clusterIP: '172.30.0.41' }), [
    slice('ns1', 'svc1', [{ ip: '10.0.0.9', ready: false, serving: true, terminating: true }]),
  ]);
  assert.equal(term.elements[0]!.map, 'service-ips');
});

test('loadBalancerSourceRanges: a firewall chain dropping other sources (LB IPs allowed when the node is in range); ClientIP affinity sets', () => {
  const s = svc(
    'ns1',
    'svc1',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.41',
      loadBalancerSourceRanges: ['192.168.0.0/24', ' 203.0.113.0/25'],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      ports: [{ name: 'p80', port: 80, nodePort: 3001, protocol: 'TCP' }],
    },
    { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
  );
  const f = one(s, [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])]);
  const base = 'ULMVA6XW-ns1/svc1/tcp/p80';
  assert.deepEqual(f.chains.get(`firewall-${base}`), [
    'ip saddr 192.168.0.0/24 return',
    'ip saddr 203.0.113.0/25 return',
    'ip saddr 1.2.3.4 return',
    'drop',
  ]);
  assert.ok(
    f.elements.some(
      (e) => e.map === 'firewall-ips' && e.key === '1.2.3.4 . tcp . 80' && e.value === `goto firewall-${base}`,
    ),
  );
  const ep = endpointBase('ns1/svc1:p80', 'tcp', '10.180.0.1', 80);
  assert.deepEqual([...f.sets], [[`affinity-${ep}`, 10800]]);
  assert.deepEqual(f.chains.get(`service-${base}`)!.slice(1), [
    `ip saddr @affinity-${ep} goto endpoint-${ep}`,
    `goto endpoint-${ep}`,
  ]);
  assert.deepEqual(f.chains.get(`endpoint-${ep}`), [
    'ip saddr 10.180.0.1 jump mark-for-masquerade',
    `update @affinity-${ep} { ip saddr }`,
    'meta l4proto tcp dnat ip to 10.180.0.1:80',
  ]);
});

test("the fixed objects: upstream's base chains and priorities, jumps, masquerading, dispatch maps; NodePorts on the node IPs or on every local address", () => {
  const b = renderBase(ctx).join('\n');
  assert.match(b, /^add chain ip kube-proxy filter-prerouting \{ type filter hook prerouting priority -110 ; \}$/m);
  assert.match(b, /^add chain ip kube-proxy nat-postrouting \{ type nat hook postrouting priority 100 ; \}$/m);
  assert.match(b, /^add rule ip kube-proxy filter-input ct state new jump endpoints-check$/m);
  assert.match(b, /^add rule ip kube-proxy masquerading masquerade fully-random$/m);
  assert.match(
    b,
    /^add rule ip kube-proxy masquerading ct status dnat ip saddr \. ip daddr @hairpin-endpoints mark set mark or 0x00004000$/m,
  );
  assert.match(b, /^add rule ip kube-proxy services ip daddr \. meta l4proto \. th dport vmap @service-ips$/m);
  assert.match(
    b,
    /^add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto \. th dport vmap @service-nodeports$/m,
  );
  assert.match(b, /^add element ip kube-proxy nodeport-ips \{ 192\.168\.0\.2 \}$/m);
  assert.match(b, /^add rule ip kube-proxy forward ct state invalid drop$/m);
  const all = renderBase({ ...ctx, nodePortIPs: undefined, conntrackTCPLiberal: true }).join('\n');
  assert.match(
    all,
    /^add rule ip kube-proxy services fib daddr type local ip daddr != 127\.0\.0\.0\/8 meta l4proto \. th dport vmap @service-nodeports$/m,
  );
  assert.match(all, /^delete set ip kube-proxy nodeport-ips$/m);
  assert.doesNotMatch(all, /invalid drop/);
});

test('nft JSON listings read back as the text syntax; version checks', () => {
  assert.equal(keyText({ concat: ['172.30.0.41', 'tcp', 80] }), '172.30.0.41 . tcp . 80');
  assert.equal(keyText({ elem: { val: { concat: ['tcp', 3001] }, comment: 'x' } }), 'tcp . 3001');
  assert.equal(verdictText({ goto: { target: 'reject-chain' } }), 'goto reject-chain');
  assert.equal(verdictText({ drop: null }), 'drop');
  assert.ok(versionAtLeast('6.1.0-18-amd64', [5, 13]));
  assert.ok(!versionAtLeast('5.10.0-28-amd64', [5, 13]));
  assert.ok(
    versionAtLeast('1.0.6', [1, 0, 1]) && !versionAtLeast('0.9.8', [1, 0, 1]) && versionAtLeast('1.0.1', [1, 0, 1]),
  );
});

// ---- incremental syncs against the kernel model ----

test('property: random changes applied incrementally give the same table as a fresh full render, whatever the order and batching', async () => {
  for (let seed = 1; seed <= 12; seed++) {
    const r = rng(seed);
    const n = 25;
    const w = new World();
    for (let i = 0; i < n; i++) if (r() < 0.6) w.services.set(`ns/s${i}`, randomService(r, i));
    let clock = 0;
    const kernel = new KernelModel();
    // Odd seeds: 3 group chains, so plain ClusterIP Services share them, join and leave them.
    const c = seed % 2 ? { ...ctx, groups: 3 } : ctx;
    const syncer = new NftSyncer(kernel, c, { now: () => clock });
    await syncer.full(w.ports(), w.endpoints());
    for (let step = 0; step < 60; step++) {
      const changed = new Set<string>();
      const batch = 1 + Math.floor(r() * 4);
      for (let b = 0; b < batch; b++) changed.add(randomChange(r, w, n));
      clock += r() < 0.5 ? 300 : 1500;
      await syncer.partial(changed, w.ports(), w.endpoints());
    }
    clock += 5000;
    await syncer.partial([], w.ports(), w.endpoints()); // deletes the retired chains
    const fresh = new KernelModel();
    const s2 = new NftSyncer(fresh, c);
    await s2.full(w.ports(), w.endpoints());
    assert.deepEqual(kernel.snapshot(), fresh.snapshot(), `seed ${seed}`);
    assert.deepEqual(syncer.totals, s2.totals, `running counters, seed ${seed}`);
  }
});

test('a restart reads the rules back: chains the kernel already has are left alone, the table equals a fresh render', async () => {
  for (let seed = 1; seed <= 8; seed++) {
    const r = rng(seed);
    const n = 25;
    const w = new World();
    const plain = seed % 2 === 0;
    for (let i = 0; i < n; i++) if (r() < 0.6) w.services.set(`ns/s${i}`, randomService(r, i, plain));
    for (let k = 0; k < 60; k++) randomChange(r, w, n, plain);
    const kernel = new KernelModel();
    kernel.withDigests = true;
    // Seeds 1-4: 3 group chains shared by the plain ClusterIP Services (their blocks are adopted by cluster IP and port).
    const ctx = seed <= 4 ? { ...baseCtx, groups: 3 } : baseCtx;
    await new NftSyncer(kernel, ctx).full(w.ports(), w.endpoints());
    // The same cluster: a restart rewrites no rule the encoder knows (plain Services: no service chain at all).
    let before = kernel.transactions.length;
    await new NftSyncer(kernel, ctx).full(w.ports(), w.endpoints());
    const restart = kernel.transactions.slice(before).join('');
    const rewritten = restart.match(/^add rule ip kube-proxy (?:service-|external-|clusterip-group\/).*$/gm) ?? [];
    assert.doesNotMatch(
      restart,
      /element ip kube-proxy endpoint-slots-/,
      `seed ${seed}: every block adopted, no range rewritten`,
    );
    if (plain) assert.deepEqual(rewritten, [], `seed ${seed}`);
    else {
      // Only chains with a rule the encoder does not know (affinity, fib, comments) are rewritten.
      const unknown = /@affinity|fib |comment |update @/;
      const chainOf = (l: string): string => l.split(' ')[4]!;
      const opaque = new Set(rewritten.filter((l) => unknown.test(l)).map(chainOf));
      assert.deepEqual(
        rewritten.filter((l) => !opaque.has(chainOf(l))),
        [],
        `seed ${seed}`,
      );
    }
    // Changes while the proxy was down: the restart converges to what a fresh render gives.
    for (let k = 0; k < 10; k++) randomChange(r, w, n, plain);
    let clock = 0;
    const s2 = new NftSyncer(kernel, ctx, { now: () => clock });
    await s2.full(w.ports(), w.endpoints());
    clock += 5000;
    await s2.partial([], w.ports(), w.endpoints()); // deletes the retired chains
    const fresh = new KernelModel();
    await new NftSyncer(fresh, ctx).full(w.ports(), w.endpoints());
    assert.deepEqual(kernel.snapshot(), fresh.snapshot(), `seed ${seed}`);
    // A wrong digest (the kernel's rules differ from what the proxy would write) makes the chain be rewritten.
    const [victim] = [...kernel.state.chains.keys()].filter(
      (c) =>
        (seed <= 4 ? c.startsWith('clusterip-group/') : c.startsWith('service-')) && kernel.state.chains.get(c)!.length,
    );
    if (victim) {
      kernel.state.chains.get(victim)!.push('drop');
      before = kernel.transactions.length;
      await new NftSyncer(kernel, ctx).full(w.ports(), w.endpoints());
      assert.match(
        kernel.transactions.slice(before).join(''),
        new RegExp(`^flush chain ip kube-proxy ${victim.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'),
      );
      assert.deepEqual(kernel.snapshot(), fresh.snapshot(), `seed ${seed}: tampered chain rewritten`);
    }
  }
});

test('endpoint slots: shares of a block, blocks handed out once and in order, given back and reused last', () => {
  const b = new SlotBlocks();
  assert.equal(b.blockOf('a'), 1);
  assert.equal(b.blockOf('b'), 2);
  assert.equal(b.blockOf('a'), 1, 'a chain keeps its block');
  b.release('a');
  assert.equal(b.blockOf('c'), 3, 'a block given back is not reused at once');
  const r = new SlotBlocks();
  r.adopt('x', 4);
  r.reserve(5);
  assert.deepEqual([r.blockOf('p'), r.blockOf('q'), r.blockOf('s'), r.blockOf('x')], [1, 2, 3, 4]);
  assert.equal(r.blockOf('t'), 6, 'adopted and reserved blocks are skipped');
  // Shares cover the block exactly, differing by at most one key.
  for (const n of [1, 2, 3, 7, 10, 100, 4096]) {
    const ranges = slotRanges(9, n);
    assert.equal(ranges[0]![0], 9 * SLOTS);
    assert.equal(ranges.at(-1)![1], 10 * SLOTS - 1);
    ranges.slice(1).forEach(([lo], i) => assert.equal(lo, ranges[i]![1] + 1));
    const sizes = ranges.map(([lo, hi]) => hi - lo + 1);
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `n=${n}`);
  }
  assert.equal(slotMapName(9, 'tcp'), 'endpoint-slots-tcp-9');
  assert.equal(slotMapName(256 + 9, 'tcp'), 'endpoint-slots-tcp-9');
  assert.equal(slotMapName(64 + 9, 'udp'), 'endpoint-slots-udp-9');
  // More endpoints than slots: the cascade, as before.
  const many = Array.from({ length: SLOTS + 1 }, (_, i) => ({ ip: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` }));
  const f = one(svc('ns1', 'svc1', { clusterIP: '172.30.0.41' }), [slice('ns1', 'svc1', many)]);
  assert.equal(f.chains.get('service-ULMVA6XW-ns1/svc1/tcp/p80')!.length, SLOTS + 2);
  assert.ok(!f.elements.some((e) => e.map.startsWith('endpoint-slots-')));
});

test('ranges kept: endpoints stay in the range the kernel has them in, newcomers take the ranges left', () => {
  const keys = ['0-9', '10-19', '20-29'];
  assert.deepEqual(keepRanges(keys, ['a', 'b', 'c'], undefined), ['a', 'b', 'c']);
  assert.deepEqual(
    keepRanges(
      keys,
      ['a', 'b', 'd'],
      new Map([
        ['0-9', 'c'],
        ['10-19', 'a'],
        ['20-29', 'b'],
      ]),
    ),
    ['d', 'a', 'b'],
  );
  // Other ranges (another count before): whoever matches a key stays, the rest in order.
  assert.deepEqual(
    keepRanges(
      keys,
      ['a', 'b', 'c'],
      new Map([
        ['0-14', 'c'],
        ['15-29', 'a'],
      ]),
    ),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(keepRanges(keys, ['x', 'y', 'z'], new Map([['10-19', 'z']])), ['x', 'z', 'y']);
});

test('a one-endpoint change is the same handful of operations at 1,000 and at 50,000 Services: map elements only, no rule', async () => {
  const opsAt = async (n: number): Promise<number[]> => {
    const w = new World();
    for (let i = 0; i < n; i++) {
      w.services.set(`ns/s${i}`, svc('ns', `s${i}`, { clusterIP: `172.30.${i >> 8}.${i & 255}` }));
      w.eps.set(
        `ns/s${i}`,
        Array.from({ length: 10 }, (_, k) => ({ ip: `10.${i >> 8}.${i & 255}.${k + 1}` })),
      );
    }
    const kernel = new KernelModel();
    const sent: string[] = [];
    const syncer = new NftSyncer({ run: async (t) => void sent.push(t), list: () => kernel.list() }, ctx);
    await syncer.full(w.ports(), w.endpoints());
    sent.length = 0;
    const out: number[] = [];
    w.eps.get('ns/s7')!.push({ ip: '10.99.99.99' });
    out.push((await syncer.partial(['ns/s7'], w.ports(), w.endpoints())).ops);
    w.eps.get('ns/s7')!.shift();
    out.push((await syncer.partial(['ns/s7'], w.ports(), w.endpoints())).ops);
    // An endpoint replaced (the same count): one range's element.
    w.eps.get('ns/s7')![0] = { ip: '10.99.99.98' };
    out.push((await syncer.partial(['ns/s7'], w.ports(), w.endpoints())).ops);
    for (const t of sent)
      assert.doesNotMatch(
        t,
        /rule|chain|goto|jump/,
        'no rule, chain or verdict: the kernel does not re-validate the table',
      );
    return out;
  };
  const small = await opsAt(1000);
  const large = await opsAt(50_000);
  assert.deepEqual(small, large);
  // The ranges of the block are redrawn (10 out, 11 in; then 11 out, 10 in), a hairpin pair added or removed; a
  // replaced endpoint takes over the range of the one it replaces: one range out and in, its hairpin pairs.
  assert.deepEqual(small, [22, 22, 4]);
});

test('group chains: plain ClusterIP Services share them; a Service joining or leaving rewrites its group only, the last to leave retires it', async () => {
  const c = { ...ctx, groups: 2 };
  const w = new World();
  const groupOf = (name: string): string => groupChainOf(`service-${servicePortBase(`ns/${name}:p80`, 'tcp')}`, 2);
  // Three Services in one group, one in the other.
  const same: string[] = [];
  let other: string | undefined;
  for (let i = 0; same.length < 3 || !other; i++) {
    if (groupOf(`s${i}`) !== groupOf('s0')) other ??= `s${i}`;
    else if (same.length < 3) same.push(`s${i}`);
  }
  const [a, b, x] = same as [string, string, string];
  const names = [a, b, x, other];
  names.forEach((n, i) => {
    w.services.set(`ns/${n}`, svc('ns', n, { clusterIP: `172.30.0.${i + 1}` }));
    w.eps.set(`ns/${n}`, [{ ip: `10.0.${i}.1` }]);
  });
  let clock = 0;
  const kernel = new KernelModel();
  const syncer = new NftSyncer(kernel, c, { now: () => clock });
  await syncer.full(w.ports(), w.endpoints());
  const g = groupOf(a);
  assert.equal(kernel.state.chains.get(g)!.filter((r) => r.includes(' dnat ')).length, 3);
  assert.equal([...kernel.state.chains.keys()].filter((ch) => ch.startsWith('service-')).length, 0, 'no service chain');
  // One leaves: its group is rewritten with the other two, the other group is not touched.
  w.eps.delete(`ns/${b}`);
  kernel.transactions = [];
  await syncer.partial([`ns/${b}`], w.ports(), w.endpoints());
  const t = kernel.transactions.join('');
  assert.match(t, new RegExp(`^flush chain ip kube-proxy ${g}$`, 'm'));
  assert.equal(kernel.state.chains.get(g)!.filter((r) => r.includes(' dnat ')).length, 2);
  assert.doesNotMatch(t, new RegExp(`${groupOf(other)}\\b`), 'the other group untouched');
  assert.doesNotMatch(t, /172\.30\.0\.4 /, "nothing of the other group's member");
  // An endpoint change of a member: map elements only, its group untouched.
  w.eps.get(`ns/${a}`)!.push({ ip: '10.9.9.9' });
  kernel.transactions = [];
  await syncer.partial([`ns/${a}`], w.ports(), w.endpoints());
  assert.doesNotMatch(kernel.transactions.join(''), /chain|rule/);
  // The last ones leave: the group is flushed, then deleted a second later.
  w.services.delete(`ns/${a}`);
  w.services.delete(`ns/${x}`);
  await syncer.partial([`ns/${a}`, `ns/${x}`], w.ports(), w.endpoints());
  assert.deepEqual(kernel.state.chains.get(g), []);
  clock += 5000;
  await syncer.partial([], w.ports(), w.endpoints());
  assert.equal(kernel.state.chains.has(g), false);
  // A newcomer brings the group back.
  w.services.set(`ns/${b}`, svc('ns', b, { clusterIP: '172.30.0.9' }));
  w.eps.set(`ns/${b}`, [{ ip: '10.0.9.1' }]);
  await syncer.partial([`ns/${b}`], w.ports(), w.endpoints());
  const fresh = new KernelModel();
  await new NftSyncer(fresh, c).full(w.ports(), w.endpoints());
  assert.deepEqual(kernel.snapshot(), fresh.snapshot());
  assert.equal(kernel.state.chains.get(g)!.length, 2);
});

test('cold start: a table left by another run converges in bounded transactions, endpoint chains before service chains before map elements, nothing flushed wholesale', async () => {
  const r = rng(99);
  const kernel = new KernelModel();
  const old = new World();
  for (let i = 0; i < 40; i++) old.services.set(`ns/s${i}`, randomService(r, i));
  for (let i = 0; i < 40; i++) for (let k = 0; k < 3; k++) randomChange(r, old, 40);
  await new NftSyncer(kernel, ctx).full(old.ports(), old.endpoints());
  const w = new World();
  for (let i = 20; i < 70; i++) w.services.set(`ns/s${i}`, randomService(r, i));
  for (let i = 0; i < 200; i++) randomChange(r, w, 70);
  kernel.transactions = [];
  const syncer = new NftSyncer(kernel, ctx, { chunkOps: 50 });
  const st = await syncer.full(w.ports(), w.endpoints());
  assert.ok(st.transactions > 4, 'several transactions');
  for (const t of kernel.transactions.slice(1)) assert.ok(t.trim().split('\n').length <= 60, 'each bounded');
  assert.ok(
    kernel.transactions.every((t) => !/^flush (table|map)/m.test(t)),
    'no table or map flush',
  );
  // Endpoint chains, endpoint slots and new hairpin pairs, service chains, dispatch elements (and slots and pairs no
  // longer used), retirement. Transactions that only make chains or sets come before their users (the kernel model
  // refuses a rule or verdict naming a missing chain), and are left out here.
  const creating = (t: string): boolean =>
    t
      .trim()
      .split('\n')
      .every((l) => /^add (chain|set) /.test(l));
  const kinds = kernel.transactions
    .slice(1)
    .filter((t) => !creating(t))
    .map((t) =>
      /^add rule ip kube-proxy endpoint-/m.test(t)
        ? 1
        : /^add element ip kube-proxy (endpoint-slots-|hairpin-endpoints)/m.test(t)
          ? 2
          : /^add rule ip kube-proxy (service-|local-|external-|firewall-|clusterip-group\/)/m.test(t)
            ? 3
            : /element/.test(t)
              ? 4
              : 5,
    );
  assert.deepEqual(kinds, [...kinds].sort(), `phases in order: ${kinds.join(',')}`);
  let clock = Date.now() + 5000;
  const later = new NftSyncer(kernel, ctx, { now: () => clock });
  await later.full(w.ports(), w.endpoints());
  clock += 5000;
  await later.partial([], w.ports(), w.endpoints());
  const fresh = new KernelModel();
  await new NftSyncer(fresh, ctx).full(w.ports(), w.endpoints());
  assert.deepEqual(kernel.snapshot(), fresh.snapshot());
});

test('a full plan is handed out one transaction at a time: no more than one batch of commands is made ahead of what was taken', () => {
  const r = rng(7);
  const w = new World();
  for (let i = 0; i < 300; i++) w.services.set(`ns/s${i}`, randomService(r, i));
  for (let i = 0; i < 600; i++) randomChange(r, w, 300);
  // Plain ones with ten endpoints each: a thousand hairpin pairs, every phase larger than a batch.
  for (let i = 0; i < 100; i++) {
    w.services.set(`ns/p${i}`, svc('ns', `p${i}`, { clusterIP: `172.31.0.${i}` }));
    w.eps.set(
      `ns/p${i}`,
      Array.from({ length: 10 }, (_, k) => ({ ip: `10.9.${i}.${k + 1}` })),
    );
  }
  const blocks = new SlotBlocks();
  const eps = w.endpoints();
  const frags = [...w.ports()].map(([, sps]) => renderService(sps, eps, ctx, blocks));
  // Counts the commands made so far.
  let made = 0;
  const cmd = new Commands('ip');
  for (const k of Object.keys(cmd) as (keyof Commands)[]) {
    const f = cmd[k];
    if (typeof f === 'function')
      (cmd as unknown as Record<string, unknown>)[k] = (...a: unknown[]) => (
        made++,
        (f as (...x: unknown[]) => string)(...a)
      );
  }
  const bound = 50;
  const base = renderBase(ctx);
  const plan = planFull(cmd, base, frags, emptyListing(), bound);
  // The fixed objects come first and are not made by `cmd`.
  let taken = -base.length;
  let chunks = 0;
  let ahead = 0;
  for (let step = plan.next(); !step.done; step = plan.next()) {
    chunks++;
    taken += step.value.length;
    ahead = Math.max(ahead, made - taken);
  }
  assert.ok(chunks > 20, `many transactions (${chunks})`);
  assert.equal(made, taken, 'every command made is handed out');
  // One batch under construction, plus the Service whose commands completed the one handed out.
  assert.ok(ahead <= 2 * bound, `at most ~one batch made ahead of the transactions taken, was ${ahead} of ${made}`);
});

test('a failed transaction leaves the remembered state as it was: the change is sent again, and a full resync converges', async () => {
  const w = new World();
  w.services.set('ns/a', svc('ns', 'a', { clusterIP: '172.30.0.1' }));
  w.eps.set('ns/a', [{ ip: '10.0.0.1' }]);
  const kernel = new KernelModel();
  const syncer = new NftSyncer(kernel, ctx);
  await syncer.full(w.ports(), w.endpoints());
  w.eps.get('ns/a')!.push({ ip: '10.0.0.2' });
  kernel.failWhen = () => true;
  await assert.rejects(syncer.partial(['ns/a'], w.ports(), w.endpoints()), /injected/);
  kernel.failWhen = undefined;
  const again = await syncer.partial(['ns/a'], w.ports(), w.endpoints());
  assert.ok(again.ops > 0, 'the same change is still pending against the remembered state');
  const fresh = new KernelModel();
  await new NftSyncer(fresh, ctx).full(w.ports(), w.endpoints());
  assert.deepEqual(kernel.snapshot(), fresh.snapshot());
});

test('a full sync failing halfway stops sending; the next full sync lists what got in and converges', async () => {
  const r = rng(21);
  const w = new World();
  for (let i = 0; i < 120; i++) w.services.set(`ns/s${i}`, randomService(r, i));
  for (let i = 0; i < 300; i++) randomChange(r, w, 120);
  const kernel = new KernelModel();
  let runs = 0;
  kernel.failWhen = () => ++runs === 4;
  const syncer = new NftSyncer(kernel, ctx, { chunkOps: 40 });
  await assert.rejects(syncer.full(w.ports(), w.endpoints()), /injected/);
  assert.equal(runs, 4, 'nothing sent after the failed transaction');
  kernel.failWhen = undefined;
  const st = await syncer.full(w.ports(), w.endpoints());
  assert.ok(st.transactions > 1);
  const fresh = new KernelModel();
  await new NftSyncer(fresh, ctx).full(w.ports(), w.endpoints());
  assert.deepEqual(kernel.snapshot(), fresh.snapshot());
});

test('a base chain left with another priority by an earlier version is remade (flush, delete, add) with the fixed objects', async () => {
  const kernel = new KernelModel();
  await kernel.run(
    [
      'add table ip kube-proxy',
      'add chain ip kube-proxy filter-input { type filter hook input priority -100 ; }',
      'add rule ip kube-proxy filter-input accept',
    ].join('\n'),
  );
  await assert.rejects(
    kernel.run('add chain ip kube-proxy filter-input { type filter hook input priority -110 ; }'),
    /Operation not supported/,
    'the kernel refuses a new priority in place',
  );
  const w = new World();
  w.services.set('ns/a', svc('ns', 'a', { clusterIP: '172.30.0.1' }));
  w.eps.set('ns/a', [{ ip: '10.0.0.1' }]);
  await new NftSyncer(kernel, ctx).full(w.ports(), w.endpoints());
  assert.equal(kernel.state.base.get('filter-input'), 'filter input -110');
  assert.deepEqual(kernel.state.chains.get('filter-input'), ['ct state new jump endpoints-check']);
  const fresh = new KernelModel();
  await new NftSyncer(fresh, ctx).full(w.ports(), w.endpoints());
  assert.deepEqual(kernel.snapshot(), fresh.snapshot());
});

test("a full sync starts from nft's JSON listings: service chains, base chains' hooks, affinity sets, hairpin pairs and map elements of our table only", () => {
  const chains = [
    {
      chain: { family: 'ip', table: 'kube-proxy', name: 'nat-prerouting', type: 'nat', hook: 'prerouting', prio: -100 },
    },
    { chain: { family: 'ip', table: 'kube-proxy', name: 'services' } },
    { chain: { family: 'ip', table: 'kube-proxy', name: 'service-ULMVA6XW-ns1/svc1/tcp/p80' } },
    { chain: { family: 'ip', table: 'other', name: 'service-X/y' } },
  ];
  const sets = [
    {
      set: {
        family: 'ip',
        table: 'kube-proxy',
        name: 'affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
        type: 'ipv4_addr',
        flags: ['timeout'],
        timeout: 10800,
      },
    },
    {
      set: {
        family: 'ip',
        table: 'kube-proxy',
        name: 'hairpin-endpoints',
        type: ['ipv4_addr', 'ipv4_addr'],
        elem: [{ concat: ['10.1.0.1', '10.1.0.1'] }],
      },
    },
    { set: { family: 'ip', table: 'kube-proxy', name: 'nodeport-ips', type: 'ipv4_addr', elem: ['192.168.0.2'] } },
  ];
  const maps = [
    {
      map: {
        family: 'ip',
        table: 'kube-proxy',
        name: 'service-ips',
        map: 'verdict',
        elem: [[{ concat: ['172.30.0.41', 'tcp', 80] }, { goto: { target: 'service-ULMVA6XW-ns1/svc1/tcp/p80' } }]],
      },
    },
    {
      map: {
        family: 'ip',
        table: 'kube-proxy',
        name: 'no-endpoint-services',
        map: 'verdict',
        elem: [
          [
            { elem: { val: { concat: ['172.30.0.42', 'udp', 53] }, comment: 'ns1/dns' } },
            { goto: { target: 'reject-chain' } },
          ],
          [{ concat: ['1.2.3.4', 'tcp', 80] }, { drop: null }],
        ],
      },
    },
    {
      map: {
        family: 'ip',
        table: 'other',
        name: 'service-ips',
        map: 'verdict',
        elem: [[{ concat: ['9.9.9.9', 'tcp', 1] }, { accept: null }]],
      },
    },
    {
      map: {
        family: 'ip',
        table: 'kube-proxy',
        name: 'endpoint-slots-tcp-7',
        type: 'integer',
        map: 'ipv4_addr . inet_service',
        flags: ['interval'],
        elem: [[{ range: [28672, 30719] }, { concat: ['10.0.0.1', 53] }]],
      },
    },
  ];
  const l = listingOf(chains, sets, maps, true);
  assert.deepEqual([...l.chains], ['service-ULMVA6XW-ns1/svc1/tcp/p80']);
  assert.deepEqual([...l.baseChains!], [['nat-prerouting', 'nat prerouting -100']]);
  assert.deepEqual([...l.sets], [['affinity-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80', 10800]]);
  assert.deepEqual([...l.elements.get('hairpin-endpoints')!.keys()], ['10.1.0.1 . 10.1.0.1']);
  assert.deepEqual(
    [...l.elements.get('service-ips')!],
    [['172.30.0.41 . tcp . 80', 'goto service-ULMVA6XW-ns1/svc1/tcp/p80']],
  );
  assert.deepEqual(
    [...l.elements.get('no-endpoint-services')!],
    [
      ['172.30.0.42 . udp . 53', 'goto reject-chain'],
      ['1.2.3.4 . tcp . 80', 'drop'],
    ],
  );
  assert.deepEqual([...l.elements.get('service-nodeports')!], []);
  assert.deepEqual([...l.elements.get('endpoint-slots-tcp-7')!], [['28672-30719', '10.0.0.1 . 53']]);
  assert.equal(listingOf(chains, sets, maps, false).chains.size, 0, 'no table: nothing');
});

test('IPv6 (table ip6 kube-proxy): ip6 matches, ipv6_addr keys, DNAT to [ip]:port, endpoint names with dots for colons', () => {
  const c6: RenderContext = {
    family: 'ip6',
    masqueradeMark: '0x00004000',
    masqueradeAll: false,
    localMatch: 'ip6 saddr fd00:10::/64',
    notLocalMatch: 'ip6 saddr != fd00:10::/64',
    nodePortIPs: undefined,
    conntrackTCPLiberal: false,
  };
  const s = svc('ns1', 'svc1', { clusterIP: 'fd00:30::41', clusterIPs: ['fd00:30::41'], sessionAffinity: 'ClientIP' });
  const f = renderService(
    servicePorts(s, 'IPv6'),
    endpointsOfSlices([slice('ns1', 'svc1', [{ ip: 'fd00:10::1' }])], NODE, 'IPv6'),
    c6,
    new SlotBlocks(),
  );
  const ep = endpointBase('ns1/svc1:p80', 'tcp', 'fd00:10::1', 80);
  assert.equal(ep, `${ep.slice(0, 8)}-ns1/svc1/tcp/p80__fd00.10..1/80`);
  assert.deepEqual(f.elements, [
    { map: 'service-ips', key: 'fd00:30::41 . tcp . 80', value: 'goto service-ULMVA6XW-ns1/svc1/tcp/p80' },
  ]);
  assert.deepEqual(f.chains.get('service-ULMVA6XW-ns1/svc1/tcp/p80'), [
    'ip6 daddr fd00:30::41 tcp dport 80 ip6 saddr != fd00:10::/64 jump mark-for-masquerade',
    `ip6 saddr @affinity-${ep} goto endpoint-${ep}`,
    `goto endpoint-${ep}`,
  ]);
  assert.deepEqual(f.chains.get(`endpoint-${ep}`), [
    'ip6 saddr fd00:10::1 jump mark-for-masquerade',
    `update @affinity-${ep} { ip6 saddr }`,
    'meta l4proto tcp dnat ip6 to [fd00:10::1]:80',
  ]);
  const plain = renderService(
    servicePorts({ ...s, spec: { ...s.spec, sessionAffinity: 'None' } }, 'IPv6'),
    endpointsOfSlices([slice('ns1', 'svc1', [{ ip: 'fd00:10::1' }])], NODE, 'IPv6'),
    c6,
    new SlotBlocks(),
  );
  assert.equal(
    plain.grouped.get(groupChainOf('service-ULMVA6XW-ns1/svc1/tcp/p80'))![1],
    'ip6 daddr fd00:30::41 tcp dport 80 dnat ip6 to numgen random mod 4096 offset 4096 map @endpoint-slots-tcp-1',
  );
  assert.deepEqual(plain.elements[1], { map: 'endpoint-slots-tcp-1', key: '4096-8191', value: 'fd00:10::1 . 80' });
  const base = renderBase(c6);
  assert.ok(
    base.includes(
      'add map ip6 kube-proxy endpoint-slots-tcp-255 { typeof numgen random mod 1 : ip6 daddr . tcp dport ; flags interval ; comment "endpoints of tcp service chains, by numgen slot" ; }',
    ),
  );
  assert.ok(
    base.includes(
      'add set ip6 kube-proxy hairpin-endpoints { type ipv6_addr . ipv6_addr ; comment "endpoints reached through a service DNAT map: traffic from one to itself is masqueraded" ; }',
    ),
  );
  assert.ok(
    base.includes(
      'add rule ip6 kube-proxy services fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports',
    ),
  );
});
