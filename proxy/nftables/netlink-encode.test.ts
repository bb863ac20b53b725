import assert from 'node:assert/strict';
import { test } from 'node:test';

import { slotOwnerOfRule } from './groups.js';
import { chainDigest, EMPTY_CHAIN_DIGEST } from './netlink-digest.js';
import {
  commandMessage,
  encodeTransaction,
  message,
  numberBatch,
  parseAcks,
  ruleExpressions,
  str,
} from './netlink-encode.js';
import { keyText, listingOfDumps, slotBlockOfRule } from './netlink-listing.js';

const T = 'ip kube-proxy';

/** Expression names of an encoded rule, in order (NFTA_LIST_ELEM → NFTA_EXPR_NAME). */
function names(exprs: NonNullable<ReturnType<typeof ruleExpressions>>): string[] {
  return exprs.map(([, v]) => {
    const name = (v as [number, Buffer][]).find(([t]) => t === 1)![1];
    return name.toString('utf8').replace(/\0$/, '');
  });
}

test('the rules partial syncs send are encoded as nft does (expression by expression)', () => {
  assert.deepEqual(names(ruleExpressions('numgen random mod 3 == 0 meta l4proto tcp dnat ip to 10.0.0.1:8080')!), [
    'numgen',
    'cmp',
    'meta',
    'cmp',
    'immediate',
    'immediate',
    'nat',
  ]);
  // tcp dport brings its meta l4proto dependency, as in nft; a /16 is a 2-byte load, a /20 a load and a mask.
  assert.deepEqual(
    names(ruleExpressions('ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade')!),
    ['payload', 'cmp', 'meta', 'cmp', 'payload', 'cmp', 'payload', 'cmp', 'immediate'],
  );
  assert.deepEqual(names(ruleExpressions('ip saddr != 10.244.16.0/20 jump mark-for-masquerade')!), [
    'payload',
    'bitwise',
    'cmp',
    'immediate',
  ]);
  assert.deepEqual(names(ruleExpressions('goto reject-chain')!), ['immediate']);
  assert.deepEqual(names(ruleExpressions('drop')!), ['immediate']);
});

test('shapes not known here are left to nft: the whole transaction falls back', () => {
  for (const r of [
    'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
    'ip saddr 10.0.0.0/8 goto service-X comment "short-circuit pod traffic"',
    'iifname != "veth*" jump mark-for-masquerade',
    'update @affinity-X { ip saddr }',
    'ip saddr @affinity-X goto endpoint-X',
    'dnat ip to 10.0.0.1:80', // no transport protocol: nft refuses it, and reports why
    'meta l4proto tcp dnat ip to [fd00::1]:80',
    'ip daddr 300.1.1.1 drop',
    'numgen random mod 0 == 0 drop',
  ])
    assert.equal(ruleExpressions(r), undefined, r);
  assert.equal(commandMessage(`add chain ${T} reject-chain { comment "x" ; }`), undefined);
  assert.equal(
    commandMessage(`add set ${T} affinity-X { type ipv4_addr ; flags dynamic,timeout ; timeout 10s ; }`),
    undefined,
  );
  assert.equal(commandMessage('add rule ip6 kube-proxy service-X drop'), undefined);
  assert.equal(commandMessage(`add element ${T} nodeport-ips { 192.168.0.2 }`), undefined);
  assert.equal(
    encodeTransaction(`flush chain ${T} service-X\nadd rule ${T} service-X fib saddr type local drop\n`),
    undefined,
  );
});

test('a transaction is one batch: begin, the commands (each acknowledged), end', () => {
  const text =
    [
      `add chain ${T} service-ABC/ns/s/tcp/p80`,
      `flush chain ${T} service-ABC/ns/s/tcp/p80`,
      `add rule ${T} service-ABC/ns/s/tcp/p80 meta l4proto tcp dnat ip to 10.0.0.1:80`,
      `add element ${T} service-ips { 172.30.0.41 . tcp . 80 : goto service-ABC/ns/s/tcp/p80 }`,
      `add element ${T} no-endpoint-services { 172.30.0.42 . udp . 53 comment "ns/s:dns" : goto reject-chain }`,
      `delete element ${T} service-nodeports { tcp . 30080 }`,
      `add element ${T} hairpin-endpoints { 10.0.0.1 . 10.0.0.1 }`,
      `delete chain ${T} service-OLD/ns/s/tcp/p80`,
    ].join('\n') + '\n';
  const { batch, firstLine } = encodeTransaction(text)!;
  assert.equal(batch.length, 10);
  assert.deepEqual(firstLine, [0, 1, 2, 3, 4, 5, 6, 7]);
  const type = (b: Buffer): number => b.readUInt16LE(4);
  assert.deepEqual(batch.map(type), [0x10, 0xa03, 0xa08, 0xa06, 0xa0c, 0xa0c, 0xa0e, 0xa0c, 0xa05, 0x11]);
  // Begin and end name the nftables subsystem; commands ask for an ack (NLM_F_ACK).
  assert.equal(batch[0]!.readUInt16BE(18), 10);
  assert.ok(batch.slice(1, -1).every((b) => (b.readUInt16LE(6) & 0x4) !== 0));
  assert.equal(batch[3]!.readUInt16LE(6) & 0xc00, 0xc00, 'rules are appended (NLM_F_CREATE | NLM_F_APPEND)');
  // The element key: ip, proto and port each padded to 4 bytes; the comment as a userdata TLV.
  assert.ok(batch[4]!.includes(Buffer.from([172, 30, 0, 41, 6, 0, 0, 0, 0, 80, 0, 0])));
  assert.ok(batch[5]!.includes(Buffer.from('\u0000\u0009ns/s:dns\u0000', 'latin1')));
  const seqs = numberBatch(batch, 100, 42);
  assert.deepEqual(seqs, [100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
  assert.equal(batch[9]!.readUInt32LE(8), 109);
  assert.equal(batch[9]!.readUInt32LE(12), 42);
});

test('consecutive element lines of one set share a message, up to 256 elements; acks map back to the first line', () => {
  const slots = Array.from(
    { length: 200 },
    (_, i) =>
      `add element ${T} endpoint-slots-tcp-1 { ${4096 + i * 10}-${4096 + i * 10 + 9} : 10.0.0.${i % 250} . 80 }`,
  );
  const text = [
    `add element ${T} hairpin-endpoints { 10.0.0.1 . 10.0.0.1 }`,
    `add element ${T} hairpin-endpoints { 10.0.0.2 . 10.0.0.2 }`,
    ...slots,
    `delete element ${T} endpoint-slots-tcp-1 { 1-2 }`,
    `add chain ${T} service-X/y`,
  ].join('\n');
  const { batch, firstLine } = encodeTransaction(text)!;
  // Two hairpin pairs; 128 ranges (2 elements each: start and end) and 72 more; the delete; the chain.
  assert.deepEqual(firstLine, [0, 2, 130, 202, 203]);
  assert.equal(batch.length, 7);
  assert.ok(
    batch[1]!.includes(Buffer.from([10, 0, 0, 1, 10, 0, 0, 1])) &&
      batch[1]!.includes(Buffer.from([10, 0, 0, 2, 10, 0, 0, 2])),
    'both pairs in one message',
  );
  assert.ok(
    batch[2]!.includes(Buffer.from([0, 0, 0x10, 0])) &&
      batch[2]!.includes(Buffer.from([0, 0, 0x14, 0xf6])) &&
      batch[2]!.includes(Buffer.from([10, 0, 0, 127, 0, 80])),
    'the first and the 128th range in one message',
  );
  assert.ok(
    !batch[2]!.includes(Buffer.from([10, 0, 0, 128, 0, 80])) && batch[3]!.includes(Buffer.from([10, 0, 0, 128, 0, 80])),
    'the 129th in the next',
  );
  assert.equal(batch[4]!.readUInt16LE(4), 0xa0e, 'the delete on its own');
});

test('acks and errors from the kernel', () => {
  const err = (seq: number, errno: number): Buffer => {
    const b = Buffer.alloc(36);
    b.writeUInt32LE(36, 0);
    b.writeUInt16LE(2, 4); // NLMSG_ERROR
    b.writeUInt32LE(seq, 8);
    b.writeInt32LE(-errno, 16);
    return b;
  };
  assert.deepEqual(parseAcks(Buffer.concat([err(5, 0), err(6, 2)])), [
    { seq: 5, errno: 0 },
    { seq: 6, errno: 2 },
  ]);
  assert.deepEqual(parseAcks(Buffer.alloc(3)), []);
});

test('element keys and verdicts read back from a dump as the text syntax the listing uses', () => {
  assert.equal(
    keyText('service-ips', Buffer.from([172, 30, 0, 41, 6, 0, 0, 0, 0, 80, 0, 0])),
    '172.30.0.41 . tcp . 80',
  );
  assert.equal(keyText('service-nodeports', Buffer.from([17, 0, 0, 0, 0x75, 0x30, 0, 0])), 'udp . 30000');
  assert.equal(keyText('hairpin-endpoints', Buffer.from([10, 0, 0, 1, 10, 0, 0, 1])), '10.0.0.1 . 10.0.0.1');
  assert.equal(keyText('service-ips', Buffer.alloc(8)), undefined, 'wrong length');
  assert.equal(keyText('nodeport-ips', Buffer.alloc(4)), undefined, 'not a listed map');
  // Round trip through the encoder's key layout.
  const add = commandMessage(
    `add element ${T} no-endpoint-services { 10.96.0.10 . sctp . 5000 comment "ns/s:p" : drop }`,
  )!;
  const key = add.subarray(add.indexOf(Buffer.from([10, 96, 0, 10])), add.indexOf(Buffer.from([10, 96, 0, 10])) + 12);
  assert.equal(keyText('no-endpoint-services', key), '10.96.0.10 . sctp . 5000');
  // An empty table, as the dumps give it.
  assert.deepEqual(listingOfDumps(false, [], [], new Map()), {
    tableExists: false,
    chains: new Set(),
    sets: new Map(),
    elements: new Map(),
  });
});

test("endpoint slots: the DNAT rule, ranges as start and end elements, read back from the dumps with the chain's block", () => {
  const rule = 'meta l4proto udp dnat ip to numgen random mod 4096 offset 28672 map @endpoint-slots-udp-7';
  // As nft 1.0.6: the slot, turned to network order, looked up for address and port, which the nat takes from
  // registers (e2e/nft-netlink.test.ts compares the kernel's dump of both byte for byte).
  assert.deepEqual(names(ruleExpressions(rule)!), ['meta', 'cmp', 'numgen', 'byteorder', 'lookup', 'nat']);
  assert.ok(chainDigest([rule]));
  assert.equal(
    ruleExpressions('meta l4proto udp dnat ip to numgen random mod 4096 offset 28672 map @service-ips'),
    undefined,
    'only the slot maps',
  );
  const ruleMsg = commandMessage(`add rule ${T} service-X/y ${rule}`)!;
  assert.deepEqual(slotBlockOfRule(ruleMsg), ['service-X/y', 7]);
  assert.equal(
    slotBlockOfRule(
      commandMessage(`add rule ${T} service-X/y numgen random mod 2 == 0 meta l4proto tcp dnat ip to 10.0.0.1:80`)!,
    ),
    undefined,
  );
  // In a group chain, the owner is the cluster IP, protocol and port the rule matches.
  const grouped =
    'ip daddr 172.30.0.41 udp dport 53 dnat ip to numgen random mod 4096 offset 28672 map @endpoint-slots-udp-7';
  assert.deepEqual(names(ruleExpressions(grouped)!), [
    'payload',
    'cmp',
    'meta',
    'cmp',
    'payload',
    'cmp',
    'numgen',
    'byteorder',
    'lookup',
    'nat',
  ]);
  assert.deepEqual(slotBlockOfRule(commandMessage(`add rule ${T} clusterip-group/5 ${grouped}`)!), [
    '172.30.0.41 . udp . 53',
    7,
  ]);
  assert.equal(
    slotOwnerOfRule('clusterip-group/5', grouped),
    '172.30.0.41 . udp . 53',
    'the text form names the same owner',
  );
  assert.deepEqual(
    slotBlockOfRule(
      commandMessage(
        `add rule ip6 kube-proxy clusterip-group/5 ip6 daddr fd00:30::41 tcp dport 80 dnat ip6 to numgen random mod 4096 offset 8192 map @endpoint-slots-tcp-2`,
        'ip6',
      )!,
    ),
    ['fd00:30::41 . tcp . 80', 2],
  );
  // Two ranges, added as the kernel lists them: each start with its value, each end flagged; plus the end element at
  // 0 nft leaves in interval sets it touches.
  const a = commandMessage(`add element ${T} endpoint-slots-udp-7 { 28672-30719 : 10.0.0.1 . 53 }`)!;
  const b = commandMessage(`add element ${T} endpoint-slots-udp-7 { 30720-32767 : 10.0.0.2 . 5353 }`)!;
  const endFlag = Buffer.from([0, 0, 0, 1]);
  const zeroEnd = message((10 << 8) | 12, 0, 2, 0, [
    [1, str('kube-proxy')],
    [2, str('endpoint-slots-udp-7')],
    [
      3,
      [
        [
          1,
          [
            [1, [[1, Buffer.alloc(4)]]],
            [3, endFlag],
          ],
        ],
      ],
    ],
  ]);
  assert.ok(
    a.includes(Buffer.from([0, 0, 0x70, 0])) && a.includes(Buffer.from([0, 0, 0x78, 0])),
    'start 28672 and end 30720, big-endian',
  );
  assert.ok(a.includes(Buffer.from([10, 0, 0, 1, 0, 53, 0, 0])), 'address, then the port padded to 4 bytes');
  const listing = listingOfDumps(true, [], [], new Map([['endpoint-slots-udp-7', [b, zeroEnd, a]]]))!;
  assert.deepEqual(
    [...listing.elements.get('endpoint-slots-udp-7')!],
    [
      ['28672-30719', '10.0.0.1 . 53'],
      ['30720-32767', '10.0.0.2 . 5353'],
    ],
  );
  // A range start without its value cannot be read: the listing comes from nft instead.
  assert.equal(
    listingOfDumps(
      true,
      [],
      [],
      new Map([['endpoint-slots-udp-7', [commandMessage(`delete element ${T} endpoint-slots-udp-7 { 0-4095 }`)!]]]),
    ),
    undefined,
  );
  const v6 = commandMessage('add element ip6 kube-proxy endpoint-slots-tcp-3 { 4096-8191 : fd00::1 . 80 }', 'ip6')!;
  assert.ok(v6.includes(Buffer.from('fd000000000000000000000000000001' + '00500000', 'hex')));
  assert.deepEqual(
    [
      ...listingOfDumps(true, [], [], new Map([['endpoint-slots-tcp-3', [v6]]]), 'ip6')!.elements.get(
        'endpoint-slots-tcp-3',
      )!,
    ],
    [['4096-8191', 'fd00::1 . 80']],
  );
  assert.equal(
    commandMessage(`add element ${T} endpoint-slots-tcp-1 { 5-4 : 10.0.0.1 . 80 }`),
    undefined,
    'an empty range',
  );
  assert.equal(
    commandMessage(`add element ${T} endpoint-slots-tcp-1 { 1-2 : 10.0.0.1 . 70000 }`),
    undefined,
    'a bad port',
  );
});

test('a chain digest: the same rules give the same digest, any change another; rules not known here give none', () => {
  const rules = [
    'ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade',
    'numgen random mod 2 == 0 meta l4proto tcp dnat ip to 10.0.0.1:80',
    'meta l4proto tcp dnat ip to 10.0.0.2:80',
  ];
  assert.equal(chainDigest(rules), chainDigest([...rules]));
  assert.notEqual(chainDigest(rules), chainDigest([rules[0]!, rules[2]!, rules[1]!]));
  assert.notEqual(chainDigest(rules), chainDigest(rules.slice(0, 2)));
  assert.notEqual(chainDigest(rules), EMPTY_CHAIN_DIGEST);
  assert.equal(chainDigest([]), EMPTY_CHAIN_DIGEST);
  assert.equal(chainDigest([...rules, 'fib saddr type local jump mark-for-masquerade']), undefined);
});

test('IPv6 (table ip6 kube-proxy): the same shapes with 16-byte addresses at the IPv6 offsets, as nft 1.0.6 sends them', () => {
  type A = [number, Buffer | A[]];
  const data = (e: A): A[] => (e[1] as A[]).find(([t]) => t === 2)![1] as A[];
  const field = (e: A, t: number): Buffer => {
    const v = data(e).find(([x]) => x === t)![1];
    return Array.isArray(v) ? (v[0]![1] as Buffer) : v;
  };
  const hex = (b: Buffer): string => b.toString('hex');
  const r1 = ruleExpressions(
    'ip6 daddr fd00:30::41 tcp dport 80 ip6 saddr != fd00:10::/64 jump mark-for-masquerade',
    'send',
    'ip6',
  )! as A[];
  assert.deepEqual(names(r1 as never), [
    'payload',
    'cmp',
    'meta',
    'cmp',
    'payload',
    'cmp',
    'payload',
    'cmp',
    'immediate',
  ]);
  // [ payload load 16b @ network header + 24 ], [ cmp eq fd00:30::41 ], …, [ payload load 8b @ network header + 8 ], [ cmp neq fd00:10:: (8 bytes) ]
  assert.deepEqual(
    [field(r1[0]!, 3).readUInt32BE(0), field(r1[0]!, 4).readUInt32BE(0), hex(field(r1[1]!, 3))],
    [24, 16, 'fd000030000000000000000000000041'],
  );
  assert.deepEqual(
    [
      field(r1[6]!, 3).readUInt32BE(0),
      field(r1[6]!, 4).readUInt32BE(0),
      field(r1[7]!, 2).readUInt32BE(0),
      hex(field(r1[7]!, 3)),
    ],
    [8, 8, 1, 'fd00001000000000'],
  );
  // A /60: the whole address loaded and masked (ffffffff fffffff0 0 0), as nft does.
  const r2 = ruleExpressions('ip6 saddr fd00:10::/60 return', 'send', 'ip6')! as A[];
  assert.deepEqual(names(r2 as never), ['payload', 'bitwise', 'cmp', 'immediate']);
  assert.deepEqual(
    [field(r2[1]!, 3).readUInt32BE(0), hex(field(r2[1]!, 4)), hex(field(r2[2]!, 3))],
    [16, 'fffffffffffffff00000000000000000', 'fd000010000000000000000000000000'],
  );
  // [ immediate reg 1 fd00:10::1 ], [ immediate reg 2 port ], [ nat dnat ip6 addr_min reg 1 proto_min reg 2 flags 0x2 ]
  const r3 = ruleExpressions(
    'numgen random mod 2 == 0 meta l4proto tcp dnat ip6 to [fd00:10::1]:80',
    'send',
    'ip6',
  )! as A[];
  assert.deepEqual(names(r3 as never), ['numgen', 'cmp', 'meta', 'cmp', 'immediate', 'immediate', 'nat']);
  assert.equal(hex(field(r3[4]!, 2)), 'fd000010000000000000000000000001');
  assert.deepEqual(
    [2, 7].map((t) => field(r3[6]!, t).readUInt32BE(0)),
    [10, 2],
    'NFPROTO_IPV6, NF_NAT_RANGE_PROTO_SPECIFIED',
  );
  // Only the RFC 5952 form the renderer writes is encoded; an IPv4 rule is not an IPv6 one.
  assert.equal(ruleExpressions('ip6 saddr FD00::1 drop', 'send', 'ip6'), undefined);
  assert.equal(ruleExpressions('ip saddr 10.0.0.1 drop', 'send', 'ip6'), undefined);
  assert.equal(
    ruleExpressions('meta l4proto tcp dnat ip6 to fd00::1:80', 'send', 'ip6'),
    undefined,
    'IPv6 endpoints are bracketed',
  );
  // Elements: 16-byte addresses, 4-byte protocol and port fields; the messages carry NFPROTO_IPV6.
  const T6 = 'ip6 kube-proxy';
  const add = commandMessage(
    `add element ${T6} service-ips { fd00:30::41 . tcp . 80 comment "ns/svc:p" : goto c }`,
    'ip6',
  )!;
  assert.equal(add[16], 10);
  assert.ok(add.includes(Buffer.from('fd000030000000000000000000000041' + '06000000' + '00500000', 'hex')));
  assert.equal(
    keyText('service-ips', Buffer.from('fd000030000000000000000000000041' + '06000000' + '00500000', 'hex'), 'ip6'),
    'fd00:30::41 . tcp . 80',
  );
  assert.equal(
    keyText('hairpin-endpoints', Buffer.from('fd000010000000000000000000000001'.repeat(2), 'hex'), 'ip6'),
    'fd00:10::1 . fd00:10::1',
  );
  assert.equal(
    commandMessage(`add element ip kube-proxy service-ips { 10.0.0.1 . tcp . 80 : goto c }`, 'ip6'),
    undefined,
  );
  assert.notEqual(
    encodeTransaction(
      `flush chain ${T6} service-X\nadd rule ${T6} service-X meta l4proto udp dnat ip6 to [fd00::5]:53\n`,
      'ip6',
    ),
    undefined,
  );
});
