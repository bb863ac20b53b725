import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commandMessage, encodeTransaction, numberBatch, parseAcks, ruleExpressions } from './netlink-encode.js';
import { chainDigest, EMPTY_CHAIN_DIGEST } from './netlink-digest.js';
import { keyText, listingOfDumps } from './netlink-listing.js';

const T = 'ip kube-proxy';

/** Expression names of an encoded rule, in order (NFTA_LIST_ELEM → NFTA_EXPR_NAME). */
function names(exprs: NonNullable<ReturnType<typeof ruleExpressions>>): string[] {
  return exprs.map(([, v]) => {
    const name = (v as [number, Buffer][]).find(([t]) => t === 1)![1];
    return name.toString('utf8').replace(/\0$/, '');
  });
}

test('the rules partial syncs send are encoded as nft does (expression by expression)', () => {
  assert.deepEqual(names(ruleExpressions('numgen random mod 3 == 0 meta l4proto tcp dnat ip to 10.0.0.1:8080')!), ['numgen', 'cmp', 'meta', 'cmp', 'immediate', 'immediate', 'nat']);
  // tcp dport brings its meta l4proto dependency, as in nft; a /16 is a 2-byte load, a /20 a load and a mask.
  assert.deepEqual(names(ruleExpressions('ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade')!), ['payload', 'cmp', 'meta', 'cmp', 'payload', 'cmp', 'payload', 'cmp', 'immediate']);
  assert.deepEqual(names(ruleExpressions('ip saddr != 10.244.16.0/20 jump mark-for-masquerade')!), ['payload', 'bitwise', 'cmp', 'immediate']);
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
  ]) assert.equal(ruleExpressions(r), undefined, r);
  assert.equal(commandMessage(`add chain ${T} reject-chain { comment "x" ; }`), undefined);
  assert.equal(commandMessage(`add set ${T} affinity-X { type ipv4_addr ; flags dynamic,timeout ; timeout 10s ; }`), undefined);
  assert.equal(commandMessage('add rule ip6 kube-proxy service-X drop'), undefined);
  assert.equal(commandMessage(`add element ${T} nodeport-ips { 192.168.0.2 }`), undefined);
  assert.equal(encodeTransaction(`flush chain ${T} service-X\nadd rule ${T} service-X fib saddr type local drop\n`), undefined);
});

test('a transaction is one batch: begin, the commands (each acknowledged), end', () => {
  const text = [
    `add chain ${T} service-ABC/ns/s/tcp/p80`,
    `flush chain ${T} service-ABC/ns/s/tcp/p80`,
    `add rule ${T} service-ABC/ns/s/tcp/p80 meta l4proto tcp dnat ip to 10.0.0.1:80`,
    `add element ${T} service-ips { 172.30.0.41 . tcp . 80 : goto service-ABC/ns/s/tcp/p80 }`,
    `add element ${T} no-endpoint-services { 172.30.0.42 . udp . 53 comment "ns/s:dns" : goto reject-chain }`,
    `delete element ${T} service-nodeports { tcp . 30080 }`,
    `add element ${T} hairpin-endpoints { 10.0.0.1 . 10.0.0.1 }`,
    `delete chain ${T} service-OLD/ns/s/tcp/p80`,
  ].join('\n') + '\n';
  const batch = encodeTransaction(text)!;
  assert.equal(batch.length, 10);
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

test('acks and errors from the kernel', () => {
  const err = (seq: number, errno: number): Buffer => {
    const b = Buffer.alloc(36);
    b.writeUInt32LE(36, 0);
    b.writeUInt16LE(2, 4); // NLMSG_ERROR
    b.writeUInt32LE(seq, 8);
    b.writeInt32LE(-errno, 16);
    return b;
  };
  assert.deepEqual(parseAcks(Buffer.concat([err(5, 0), err(6, 2)])), [{ seq: 5, errno: 0 }, { seq: 6, errno: 2 }]);
  assert.deepEqual(parseAcks(Buffer.alloc(3)), []);
});

test('element keys and verdicts read back from a dump as the text syntax the listing uses', () => {
  assert.equal(keyText('service-ips', Buffer.from([172, 30, 0, 41, 6, 0, 0, 0, 0, 80, 0, 0])), '172.30.0.41 . tcp . 80');
  assert.equal(keyText('service-nodeports', Buffer.from([17, 0, 0, 0, 0x75, 0x30, 0, 0])), 'udp . 30000');
  assert.equal(keyText('hairpin-endpoints', Buffer.from([10, 0, 0, 1, 10, 0, 0, 1])), '10.0.0.1 . 10.0.0.1');
  assert.equal(keyText('service-ips', Buffer.alloc(8)), undefined, 'wrong length');
  assert.equal(keyText('nodeport-ips', Buffer.alloc(4)), undefined, 'not a listed map');
  // Round trip through the encoder's key layout.
  const add = commandMessage(`add element ${T} no-endpoint-services { 10.96.0.10 . sctp . 5000 comment "ns/s:p" : drop }`)!;
  const key = add.subarray(add.indexOf(Buffer.from([10, 96, 0, 10])), add.indexOf(Buffer.from([10, 96, 0, 10])) + 12);
  assert.equal(keyText('no-endpoint-services', key), '10.96.0.10 . sctp . 5000');
  // An empty table, as the dumps give it.
  assert.deepEqual(listingOfDumps(false, [], [], new Map()), { tableExists: false, chains: new Set(), sets: new Map(), elements: new Map() });
});

test('a chain digest: the same rules give the same digest, any change another; rules not known here give none', () => {
  const rules = ['ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade', 'numgen random mod 2 == 0 meta l4proto tcp dnat ip to 10.0.0.1:80', 'meta l4proto tcp dnat ip to 10.0.0.2:80'];
  assert.equal(chainDigest(rules), chainDigest([...rules]));
  assert.notEqual(chainDigest(rules), chainDigest([rules[0]!, rules[2]!, rules[1]!]));
  assert.notEqual(chainDigest(rules), chainDigest(rules.slice(0, 2)));
  assert.notEqual(chainDigest(rules), EMPTY_CHAIN_DIGEST);
  assert.equal(chainDigest([]), EMPTY_CHAIN_DIGEST);
  assert.equal(chainDigest([...rules, 'fib saddr type local jump mark-for-masquerade']), undefined);
});
