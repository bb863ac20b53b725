import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';

import type { Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';

import { endpointsOfSlices } from '../model/endpoints.js';
import { cidrContains } from '../model/family.js';
import { NODE, slice, svc } from '../model/fixtures.js';
import { servicePorts } from '../model/service-port.js';
import { base32, sepChain, svcChain } from './chains.js';
import { probability, type RenderInput, renderIptables } from './render.js';

function render(services: Service[], slices: EndpointSlice[], over: Partial<RenderInput> = {}) {
  return renderIptables({
    services: services.flatMap((s) => servicePorts(s)),
    endpoints: endpointsOfSlices(slices, NODE),
    masqueradeMark: '0x4000',
    masqueradeAll: false,
    clusterCIDR: '10.0.0.0/8',
    nodeIP: '192.168.0.2',
    localhostNodePorts: true,
    conntrackTCPLiberal: false,
    randomFully: true,
    ...over,
  });
}

const FILTER_HEAD = `*filter
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-FIREWALL - [0:0]
-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
`;
const FORWARD = `-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
COMMIT
`;
const NAT_FIXED = `-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
`;
const NODEPORTS_LAST =
  '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n';

/** The rules of one chain, in order. */
const chain = (text: string, name: string): string[] => text.split('\n').filter((l) => l.startsWith(`-A ${name} `));

test('chain names hash as upstream: base32(sha256) cut to 16, matching the reference examples', () => {
  const h = (s: string) => base32(createHash('sha256').update(s).digest()).slice(0, 16);
  assert.equal(h('ns1/svc1:p80tcp'), 'XPGD46QRK7WJZT7O');
  assert.equal(h('ns4/svc4:p80tcp'), '4SW47YFZTEDKD3PK');
  assert.equal(h('ns5/svc5:p80tcp'), 'NUKIZ6OKUXPJNT4C');
  assert.equal(svcChain('ns1/svc1:p80', 'TCP'), 'KUBE-SVC-XPGD46QRK7WJZT7O');
  assert.equal(sepChain('ns1/svc1:p80', 'TCP', '10.180.0.1:80'), 'KUBE-SEP-SXIVWICOYRO3J4NJ');
  assert.equal(sepChain('ns5/svc5:p80', 'TCP', '10.180.0.3:80'), 'KUBE-SEP-I77PXRDZVX7PMWMN');
  assert.equal(probability(1), '1.0000000000');
  assert.equal(probability(2), '0.5000000000');
  assert.equal(probability(100001), '0.0000099999');
});

test('a cluster IP service with one endpoint: the whole ruleset', () => {
  const out = render(
    [svc('ns1', 'svc1', { clusterIP: '172.30.0.41' })],
    [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])],
  );
  assert.equal(
    out.text,
    FILTER_HEAD +
      FORWARD +
      `*nat
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
` +
      NAT_FIXED +
      `-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
` +
      NODEPORTS_LAST +
      'COMMIT\n',
  );
  assert.equal(out.filterRules, 4);
  assert.equal(out.natRules, 10);
});

test('no endpoints: filter REJECTs for cluster IP, external IP and NodePort, and no nat chains', () => {
  const out = render(
    [
      svc('ns6', 'svc6', {
        type: 'NodePort',
        clusterIP: '172.30.0.46',
        externalIPs: ['192.168.99.11'],
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3006 }],
      }),
    ],
    [],
  );
  assert.deepEqual(chain(out.text, 'KUBE-SERVICES'), [
    '-A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46 --dport 80 -j REJECT',
    NODEPORTS_LAST.trim(),
  ]);
  assert.deepEqual(chain(out.text, 'KUBE-EXTERNAL-SERVICES'), [
    '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 192.168.99.11 --dport 80 -j REJECT',
    '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 3006 -j REJECT',
  ]);
  assert.equal(out.text.match(/KUBE-(SVC|SEP|EXT)-/g), null);
  // Endpoints that are neither ready nor serving-and-terminating count as none.
  const notReady = render(
    [svc('ns6', 'svc6', { clusterIP: '172.30.0.46' })],
    [slice('ns6', 'svc6', [{ ip: '10.180.0.9', ready: false, serving: false }])],
  );
  assert.match(notReady.text, /has no endpoints/);
});

test('NodePort with Cluster policy: KUBE-NODEPORTS -> EXT (masquerade) -> SVC, with probabilities 1/(n-i)', () => {
  const out = render(
    [
      svc('ns3', 'svc3', {
        type: 'NodePort',
        clusterIP: '172.30.0.43',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }],
      }),
    ],
    [slice('ns3', 'svc3', [{ ip: '10.180.0.1' }, { ip: '10.180.0.2' }, { ip: '10.180.0.3' }])],
  );
  const svcC = svcChain('ns3/svc3:p80', 'tcp');
  const ext = svcC.replace('SVC', 'EXT');
  assert.deepEqual(chain(out.text, 'KUBE-NODEPORTS'), [
    `-A KUBE-NODEPORTS -m comment --comment ns3/svc3:p80 -m tcp -p tcp --dport 3003 -j ${ext}`,
  ]);
  assert.deepEqual(chain(out.text, ext), [
    `-A ${ext} -m comment --comment "masquerade traffic for ns3/svc3:p80 external destinations" -j KUBE-MARK-MASQ`,
    `-A ${ext} -j ${svcC}`,
  ]);
  assert.deepEqual(chain(out.text, svcC).slice(1), [
    `-A ${svcC} -m comment --comment "ns3/svc3:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.3333333333 -j ${sepChain('ns3/svc3:p80', 'tcp', '10.180.0.1:80')}`,
    `-A ${svcC} -m comment --comment "ns3/svc3:p80 -> 10.180.0.2:80" -m statistic --mode random --probability 0.5000000000 -j ${sepChain('ns3/svc3:p80', 'tcp', '10.180.0.2:80')}`,
    `-A ${svcC} -m comment --comment "ns3/svc3:p80 -> 10.180.0.3:80" -j ${sepChain('ns3/svc3:p80', 'tcp', '10.180.0.3:80')}`,
  ]);
});

test('Local traffic policies: SVL with local endpoints only, short-circuit rules in EXT, DROP when none are local', () => {
  const lb = svc(
    'ns2',
    'svc2',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.42',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 30000,
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
    },
    { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
  );
  const both = render(
    [lb],
    [
      slice('ns2', 'svc2', [
        { ip: '10.180.0.1', node: 'other' },
        { ip: '10.180.2.1', node: NODE },
      ]),
    ],
  );
  const svl = svcChain('ns2/svc2:p80', 'tcp').replace('SVC', 'SVL');
  const svcC = svcChain('ns2/svc2:p80', 'tcp');
  const ext = svcC.replace('SVC', 'EXT');
  assert.deepEqual(chain(both.text, ext), [
    `-A ${ext} -m comment --comment "pod traffic for ns2/svc2:p80 external destinations" -s 10.0.0.0/8 -j ${svcC}`,
    `-A ${ext} -m comment --comment "masquerade LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
    `-A ${ext} -m comment --comment "route LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j ${svcC}`,
    `-A ${ext} -j ${svl}`,
  ]);
  assert.deepEqual(chain(both.text, svl), [
    `-A ${svl} -m comment --comment "ns2/svc2:p80 -> 10.180.2.1:80" -j ${sepChain('ns2/svc2:p80', 'tcp', '10.180.2.1:80')}`,
  ]);
  assert.equal(chain(both.text, svcC).length, 3, 'cluster IP traffic still goes to both (masq rule + 2)');
  // KUBE-NODEPORTS in filter (health check port) and in nat (the NodePort).
  assert.deepEqual(chain(both.text, 'KUBE-NODEPORTS'), [
    '-A KUBE-NODEPORTS -m comment --comment "ns2/svc2:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT',
    `-A KUBE-NODEPORTS -m comment --comment ns2/svc2:p80 -m tcp -p tcp --dport 3001 -j ${ext}`,
  ]);
  const remoteOnly = render([lb], [slice('ns2', 'svc2', [{ ip: '10.180.0.1', node: 'other' }])]);
  assert.deepEqual(chain(remoteOnly.text, 'KUBE-EXTERNAL-SERVICES'), [
    '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/svc2:p80 has no local endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP',
    '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/svc2:p80 has no local endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 3001 -j DROP',
  ]);
  assert.equal(chain(remoteOnly.text, ext).length, 3, 'EXT keeps only the short-circuit rules');
  assert.equal(remoteOnly.noLocalEndpointsExternal, 1);
  // internalTrafficPolicy Local: cluster IP only to local endpoints, DROP if there are none.
  const itp = svc('ns7', 'svc7', { clusterIP: '172.30.0.47', internalTrafficPolicy: 'Local' });
  const itpLocal = render(
    [itp],
    [
      slice('ns7', 'svc7', [
        { ip: '10.0.1.1', node: NODE },
        { ip: '10.0.1.2', node: 'other' },
      ]),
    ],
  );
  const svl7 = svcChain('ns7/svc7:p80', 'tcp').replace('SVC', 'SVL');
  assert.match(
    itpLocal.text,
    new RegExp(
      `-A KUBE-SERVICES -m comment --comment "ns7/svc7:p80 cluster IP" -m tcp -p tcp -d 172.30.0.47 --dport 80 -j ${svl7}`,
    ),
  );
  assert.equal(chain(itpLocal.text, svl7).filter((l) => l.includes('->')).length, 1);
  const itpNone = render([itp], [slice('ns7', 'svc7', [{ ip: '10.0.1.2', node: 'other' }])]);
  assert.deepEqual(
    chain(itpNone.text, 'KUBE-SERVICES')[0],
    '-A KUBE-SERVICES -m comment --comment "ns7/svc7:p80 has no local endpoints" -m tcp -p tcp -d 172.30.0.47 --dport 80 -j DROP',
  );
});

test('ClientIP session affinity: recent --rcheck before the random rules, --set in the SEP chain', () => {
  const out = render(
    [
      svc('ns1', 'svc1', {
        clusterIP: '172.30.0.41',
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      }),
    ],
    [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }, { ip: '10.180.0.2' }])],
  );
  const c = svcChain('ns1/svc1:p80', 'tcp');
  const sep1 = sepChain('ns1/svc1:p80', 'tcp', '10.180.0.1:80');
  const rules = chain(out.text, c);
  assert.equal(
    rules[1],
    `-A ${c} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m recent --name ${sep1} --rcheck --seconds 10800 --reap -j ${sep1}`,
  );
  assert.match(rules[3]!, /--probability 0\.5000000000 -j KUBE-SEP-/);
  assert.deepEqual(
    chain(out.text, sep1)[1],
    `-A ${sep1} -m comment --comment ns1/svc1:p80 -m recent --name ${sep1} --set -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80`,
  );
});

test('terminating endpoints: ignored while ready ones exist, used when only serving-and-terminating ones are left', () => {
  const s = svc('ns1', 'svc1', { clusterIP: '172.30.0.41' });
  const c = svcChain('ns1/svc1:p80', 'tcp');
  const mixed = render(
    [s],
    [slice('ns1', 'svc1', [{ ip: '10.0.1.1' }, { ip: '10.0.1.2', ready: false, serving: true, terminating: true }])],
  );
  assert.deepEqual(
    chain(mixed.text, c)
      .filter((l) => l.includes('->'))
      .map((l) => /-> (\S+)"/.exec(l)![1]),
    ['10.0.1.1:80'],
  );
  const onlyTerminating = render(
    [s],
    [
      slice('ns1', 'svc1', [
        { ip: '10.0.1.2', ready: false, serving: true, terminating: true },
        { ip: '10.0.1.3', ready: false, serving: false, terminating: true },
      ]),
    ],
  );
  assert.deepEqual(
    chain(onlyTerminating.text, c)
      .filter((l) => l.includes('->'))
      .map((l) => /-> (\S+)"/.exec(l)![1]),
    ['10.0.1.2:80'],
  );
  const duplicate = endpointsOfSlices(
    [
      slice('ns1', 'svc1', [{ ip: '10.0.1.5', ready: false, terminating: true }]),
      {
        ...slice('ns1', 'svc1', [{ ip: '10.0.1.5' }]),
        metadata: { namespace: 'ns1', name: 'svc1-def', labels: { 'kubernetes.io/service-name': 'svc1' } },
      },
    ],
    NODE,
  );
  assert.equal(
    [...duplicate.values()][0]![0]!.terminating,
    false,
    'a duplicate ip:port keeps its non-terminating copy',
  );
});

test('--nodeport-addresses: KUBE-SERVICES ends with a jump to KUBE-NODEPORTS per selected node address, loopback left out', () => {
  const out = render(
    [
      svc('ns1', 'svc1', {
        type: 'NodePort',
        clusterIP: '172.30.0.41',
        ports: [{ name: 'p80', port: 80, nodePort: 3001, protocol: 'TCP' }],
      }),
    ],
    [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])],
    { nodePortIPs: ['192.168.0.2', '127.0.0.1'] },
  );
  const last = chain(out.text, 'KUBE-SERVICES').filter((l) => l.includes('KUBE-NODEPORTS'));
  assert.deepEqual(last, [
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.0.2 -j KUBE-NODEPORTS',
  ]);
});

test('--detect-local-mode BridgeInterface: off-cluster means not from the pod bridge', () => {
  const out = render(
    [svc('ns1', 'svc1', { clusterIP: '172.30.0.41' })],
    [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])],
    { clusterCIDR: undefined, localDetector: { local: ['-i', 'cni0'], notLocal: ['!', '-i', 'cni0'] } },
  );
  assert.match(
    out.text,
    /-A KUBE-SVC-\S+ -m comment --comment "ns1\/svc1:p80 cluster IP" -m tcp -p tcp -d 172\.30\.0\.41 --dport 80 ! -i cni0 -j KUBE-MARK-MASQ/,
  );
});

test('--masquerade-all masquerades all service traffic; without a cluster CIDR there is no off-cluster rule', () => {
  const s = svc('ns1', 'svc1', { clusterIP: '172.30.0.41' });
  const c = svcChain('ns1/svc1:p80', 'tcp');
  const all = render([s], [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])], { masqueradeAll: true });
  assert.equal(
    chain(all.text, c)[0],
    `-A ${c} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-MARK-MASQ`,
  );
  const none = render([s], [slice('ns1', 'svc1', [{ ip: '10.180.0.1' }])], { clusterCIDR: undefined });
  assert.ok(!chain(none.text, c).some((l) => l.includes('KUBE-MARK-MASQ')));
});

test('load balancer source ranges: FW chain, node-IP range allows the LB IPs, KUBE-PROXY-FIREWALL drops the rest', () => {
  const lb = svc(
    'ns5',
    'svc5',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.45',
      loadBalancerSourceRanges: [' 203.0.113.0/25', '192.168.0.0/24'],
      ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }],
    },
    { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } },
  );
  const out = render([lb], [slice('ns5', 'svc5', [{ ip: '10.180.0.3' }])]);
  const fw = 'KUBE-FW-NUKIZ6OKUXPJNT4C';
  const ext = 'KUBE-EXT-NUKIZ6OKUXPJNT4C';
  assert.deepEqual(chain(out.text, fw), [
    `-A ${fw} -m comment --comment "ns5/svc5:p80 loadbalancer IP" -s 203.0.113.0/25 -j ${ext}`,
    `-A ${fw} -m comment --comment "ns5/svc5:p80 loadbalancer IP" -s 192.168.0.0/24 -j ${ext}`,
    `-A ${fw} -m comment --comment "ns5/svc5:p80 loadbalancer IP" -s 5.6.7.8 -j ${ext}`,
    `-A ${fw} -m comment --comment "other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL"`,
  ]);
  assert.deepEqual(chain(out.text, 'KUBE-PROXY-FIREWALL'), [
    `-A KUBE-PROXY-FIREWALL -m comment --comment "ns5/svc5:p80 traffic not accepted by ${fw}" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j DROP`,
  ]);
  assert.ok(out.text.includes(`:KUBE-SEP-I77PXRDZVX7PMWMN - [0:0]`), 'SEP hash as in the reference');
  assert.equal(cidrContains('192.168.0.0/24', '192.168.0.2'), true);
  assert.equal(cidrContains('203.0.113.0/25', '203.0.113.130'), false);
});

test('large services drop per-endpoint comments; a partial render writes only changed services; stale chains are deleted', () => {
  const many = Array.from({ length: 1001 }, (_, n) => ({ ip: `10.1.${Math.floor(n / 250)}.${(n % 250) + 1}` }));
  const big = render([svc('ns1', 'big', { clusterIP: '172.30.1.1' })], [slice('ns1', 'big', many)]);
  const c = svcChain('ns1/big:p80', 'tcp');
  assert.equal(chain(big.text, c).length, 1002);
  assert.ok(
    chain(big.text, c)
      .slice(1)
      .every((l) => !l.includes('--comment')),
    'no per-endpoint comments above 1000 endpoints',
  );
  assert.equal(big.totalEndpoints, 1001);
  const a = svc('ns1', 'a', { clusterIP: '172.30.0.1' });
  const b = svc('ns1', 'b', { clusterIP: '172.30.0.2' });
  const slices = [slice('ns1', 'a', [{ ip: '10.0.0.1' }]), slice('ns1', 'b', [{ ip: '10.0.0.2' }])];
  const full = render([a, b], slices);
  const partial = render([a, b], slices, { changed: new Set(['ns1/b']) });
  assert.ok(partial.text.includes(`:${svcChain('ns1/b:p80', 'tcp')} - [0:0]`));
  assert.ok(
    !partial.text.includes(`:${svcChain('ns1/a:p80', 'tcp')} - [0:0]`),
    'unchanged service chains are not rewritten',
  );
  assert.ok(partial.text.includes(`-j ${svcChain('ns1/a:p80', 'tcp')}`), 'but KUBE-SERVICES still jumps to them');
  assert.deepEqual(partial.activeNatChains, full.activeNatChains);
  assert.equal(partial.natRulesTotal, full.natRulesTotal);
  assert.ok(partial.natRules < full.natRules);
  // With the last render's per-service memory, unchanged Services are not built again: same text, same counts.
  const remembered = render([a, b], slices, { changed: new Set(['ns1/b']), perService: full.perService });
  assert.equal(remembered.text, partial.text);
  assert.equal(remembered.natRulesTotal, full.natRulesTotal);
  assert.deepEqual(remembered.activeNatChains, full.activeNatChains);
  assert.deepEqual(remembered.perService.get('ns1/a'), full.perService.get('ns1/a'));
  assert.deepEqual(
    full.perService.get('ns1/a')!.chains.sort(),
    [svcChain('ns1/a:p80', 'tcp'), sepChain('ns1/a:p80', 'tcp', '10.0.0.1:80')].sort(),
  );
  const gone = render([b], [slices[1]!], {
    existingNatChains: [...full.activeNatChains, 'KUBE-SERVICES', 'SOMEONE-ELSES'],
  });
  const staleSvc = svcChain('ns1/a:p80', 'tcp');
  assert.ok(gone.text.includes(`:${staleSvc} - [0:0]\n`) && gone.text.includes(`-X ${staleSvc}\n`));
  assert.ok(
    !gone.text.includes('-X SOMEONE-ELSES') && !gone.text.includes('-X KUBE-SERVICES'),
    'only our service chains are deleted',
  );
  assert.equal(gone.deletedChains, 2);
});

test('service model: load balancer ingress with ipMode Proxy gets no rules (the load balancer proxies to the node)', () => {
  const s = svc(
    'ns1',
    'lb',
    {
      type: 'LoadBalancer',
      clusterIP: '172.30.0.9',
      ports: [{ name: 'p80', port: 80, nodePort: 3009, protocol: 'TCP' }],
    },
    {
      loadBalancer: {
        ingress: [{ ip: '1.2.3.4', ipMode: 'Proxy' }, { ip: '5.6.7.8', ipMode: 'VIP' }, { ip: '9.10.11.12' }],
      },
    },
  );
  assert.deepEqual(servicePorts(s)[0]!.loadBalancerIPs, ['5.6.7.8', '9.10.11.12']);
});

test('service model: headless and ExternalName services are ignored; protocols and unnamed ports', () => {
  assert.deepEqual(servicePorts(svc('ns', 'h', { clusterIP: 'None' })), []);
  assert.deepEqual(servicePorts(svc('ns', 'x', { type: 'ExternalName', externalName: 'example.com' })), []);
  const [u] = servicePorts(svc('ns', 'dns', { clusterIP: '172.30.0.10', ports: [{ port: 53, protocol: 'UDP' }] }));
  assert.equal(u!.name, 'ns/dns');
  const out = render(
    [svc('ns', 'dns', { clusterIP: '172.30.0.10', ports: [{ port: 53, protocol: 'UDP' }] })],
    [slice('ns', 'dns', [{ ip: '10.0.0.53' }], 53, '', 'UDP')],
  );
  assert.match(
    out.text,
    /-A KUBE-SERVICES -m comment --comment "ns\/dns cluster IP" -m udp -p udp -d 172\.30\.0\.10 --dport 53 -j KUBE-SVC-/,
  );
});

test('IPv6 (ip6tables-restore input): v6 addresses, [ip]:port endpoints hashed as upstream, ::1 left out of NodePorts, no localhost NodePorts', () => {
  const s = svc('ns1', 'svc1', {
    type: 'NodePort',
    clusterIP: 'fd00:30::41',
    clusterIPs: ['fd00:30::41'],
    ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
  });
  const out = renderIptables({
    family: 'IPv6',
    services: servicePorts(s, 'IPv6'),
    endpoints: endpointsOfSlices([slice('ns1', 'svc1', [{ ip: 'fd00:10::1' }])], NODE, 'IPv6'),
    masqueradeMark: '0x4000',
    masqueradeAll: false,
    clusterCIDR: 'fd00:10::/64',
    localhostNodePorts: true,
    conntrackTCPLiberal: false,
    randomFully: true,
  });
  const sep = sepChain('ns1/svc1:p80', 'tcp', '[fd00:10::1]:80');
  const svcC = svcChain('ns1/svc1:p80', 'tcp');
  assert.doesNotMatch(out.text, /KUBE-FIREWALL|127\.0\.0\.0/, 'localhost NodePorts are IPv4 only');
  for (const line of [
    `-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:30::41 --dport 80 -j ${svcC}`,
    `-A ${svcC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d fd00:30::41 --dport 80 ! -s fd00:10::/64 -j KUBE-MARK-MASQ`,
    `-A ${svcC} -m comment --comment "ns1/svc1:p80 -> [fd00:10::1]:80" -j ${sep}`,
    `-A ${sep} -m comment --comment ns1/svc1:p80 -s fd00:10::1 -j KUBE-MARK-MASQ`,
    `-A ${sep} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination [fd00:10::1]:80`,
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS',
  ]) {
    assert.ok(out.text.split('\n').includes(line), `missing: ${line}\n${out.text}`);
  }
  const picked = renderIptables({
    family: 'IPv6',
    services: [],
    endpoints: new Map(),
    masqueradeMark: '0x4000',
    masqueradeAll: false,
    nodePortIPs: ['::1', 'fd00::2'],
    localhostNodePorts: false,
    conntrackTCPLiberal: false,
    randomFully: true,
  });
  assert.match(picked.text, /-d fd00::2 -j KUBE-NODEPORTS/);
  assert.doesNotMatch(picked.text, /-d ::1 /, 'loopback never accepts NodePorts');
});
