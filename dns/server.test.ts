// The server on real UDP and TCP sockets on 127.0.0.1, with a fake upstream
// resolver, through dns-packet as a client would send.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, test } from 'node:test';

import type { Answer, DecodedPacket, Packet } from 'dns-packet';
import * as packet from 'dns-packet';

import { memoryLogger } from '../kube/log.js';
import { ClientAcl, parseAllowFrom } from './acl.js';
import type { Reply } from './answer.js';
import { cachePolicy, ResponseCache } from './cache.js';
import { Forwarder } from './forward.js';
import { QueryHandler } from './handler.js';
import { DnsMetrics } from './metrics.js';
import { type DnsListening, serveDns } from './server.js';
import { rcodeOf, udpExchange } from './testing.js';
import { ZoneData } from './zone.js';

let dns: DnsListening;
let upstream: dgram.Socket;
let upstreamAsked = 0;
const metrics = new DnsMetrics();
const zone = new ZoneData();

const udp = (p: Packet | Buffer, port = dns.port): Promise<{ buf: Buffer; msg: DecodedPacket }> => udpExchange(port, p);

function tcp(ps: Packet[]): Promise<DecodedPacket[]> {
  return new Promise((resolve, reject) => {
    const c = net.connect(dns.port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const out: DecodedPacket[] = [];
    c.on('error', reject);
    c.on('connect', () => c.write(Buffer.concat(ps.map((p) => packet.streamEncode(p)))));
    c.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        out.push(packet.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (out.length === ps.length) {
        c.destroy();
        resolve(out);
      }
    });
  });
}

const query = (
  name: string,
  type: Packet['questions'] extends (infer Q)[] | undefined ? (Q extends { type: infer T } ? T : never) : never = 'A',
  extra: Partial<Packet> = {},
): Packet => ({
  id: 4242,
  type: 'query',
  flags: packet.RECURSION_DESIRED,
  questions: [{ name, type, class: 'IN' }],
  ...extra,
});
const rcode = rcodeOf;
const edns = (size: number, version = 0): Answer =>
  ({
    type: 'OPT',
    name: '.',
    udpPayloadSize: size,
    extendedRcode: 0,
    ednsVersion: version,
    flags: 0,
    options: [],
  }) as unknown as Answer;

before(async () => {
  zone.setNamespace({ metadata: { name: 'default' } }, true);
  zone.setService({
    metadata: { namespace: 'default', name: 'web' },
    spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }] },
  });
  zone.setService({ metadata: { namespace: 'default', name: 'big' }, spec: { clusterIP: 'None' } });
  zone.setSlice({
    metadata: { namespace: 'default', name: 'big-1', labels: { 'kubernetes.io/service-name': 'big' } },
    addressType: 'IPv4',
    endpoints: Array.from({ length: 100 }, (_, i) => ({
      addresses: [`10.244.${i >> 8}.${(i % 250) + 1}`],
      conditions: { ready: true },
    })),
  });
  upstream = dgram.createSocket('udp4');
  upstream.on('message', (buf, r) => {
    upstreamAsked++;
    const m = packet.decode(buf);
    const name = m.questions![0]!.name;
    const answers: Answer[] =
      name === 'example.test' ? [{ type: 'A', name, ttl: 300, class: 'IN', data: '192.0.2.7' }] : [];
    const authorities: Answer[] = answers.length
      ? []
      : [
          {
            type: 'SOA',
            name: 'test',
            ttl: 60,
            class: 'IN',
            data: { mname: 'ns.test', rname: 'h.test', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 10 },
          },
        ];
    upstream.send(
      packet.encode({
        id: m.id,
        type: 'response',
        flags: packet.RECURSION_AVAILABLE | (answers.length ? 0 : 3),
        questions: m.questions,
        answers,
        authorities,
      }),
      r.port,
      r.address,
    );
  });
  await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', () => r()));
  const forwarder = new Forwarder([{ host: '127.0.0.1', port: upstream.address().port }], 1000);
  const handler = new QueryHandler({
    zone,
    config: { zone: 'cluster.local', ttl: 5, dnsIPs: [] },
    cache: new ResponseCache(),
    forwarder,
    metrics,
    server: 'dns://:53',
  });
  dns = await serveDns(handler, '127.0.0.1:0', memoryLogger());
});
after(async () => {
  await dns.close();
  upstream.close();
});

test('UDP: a Service name is answered, authoritative, with the query id, RD echoed and RA set', async () => {
  const { msg } = await udp(query('web.default.svc.cluster.local'));
  assert.equal(msg.id, 4242);
  assert.equal(rcode(msg), 'NOERROR');
  assert.equal(msg.flag_aa, true);
  assert.equal(msg.flag_rd, true);
  assert.equal(msg.flag_ra, true);
  assert.deepEqual(
    msg.answers!.map((a) => [a.name, a.type, (a as { ttl: number }).ttl, (a as { data: unknown }).data]),
    [['web.default.svc.cluster.local', 'A', 5, '10.96.0.20']],
  );
});

test('100 headless endpoints: over UDP the answer is cut to fit 512 bytes (or the EDNS0 size) with TC set; over TCP all 100 come', async () => {
  const plain = await udp(query('big.default.svc.cluster.local'));
  assert.equal(plain.msg.flag_tc, true);
  assert.ok(plain.buf.length <= 512, `${plain.buf.length} bytes`);
  assert.ok(plain.msg.answers!.length > 0 && plain.msg.answers!.length < 100);
  const withEdns = await udp(query('big.default.svc.cluster.local', 'A', { additionals: [edns(4096)] }));
  assert.equal(withEdns.msg.flag_tc, true);
  assert.ok(withEdns.buf.length <= 1232 && withEdns.buf.length > 512, `${withEdns.buf.length} bytes`);
  assert.equal(
    (withEdns.msg.additionals!.find((a) => a.type === 'OPT') as { udpPayloadSize: number }).udpPayloadSize,
    1232,
  );
  const [full, second] = await tcp([query('big.default.svc.cluster.local'), query('web.default.svc.cluster.local')]);
  assert.equal(full!.flag_tc, false);
  assert.equal(full!.answers!.length, 100);
  assert.equal(second!.answers!.length, 1, 'a second message on the same TCP connection');
});

test('bad input: garbage gets FORMERR with its id, other opcodes NOTIMP, EDNS version 1 BADVERS, CHAOS REFUSED, and the server keeps answering', async () => {
  const garbage = Buffer.concat([
    Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
    Buffer.from([0xff, 0xff, 0xff]),
  ]);
  const f = await udp(garbage);
  assert.equal(f.msg.id, 0x1234);
  assert.equal(rcode(f.msg), 'FORMERR');
  const notify = packet.encode(query('web.default.svc.cluster.local'));
  notify[2] = (notify[2]! & 0x87) | (4 << 3); // opcode NOTIFY
  assert.equal(rcode((await udp(notify)).msg), 'NOTIMP');
  const v1 = await udp(query('web.default.svc.cluster.local', 'A', { additionals: [edns(1232, 1)] }));
  assert.equal(
    (v1.msg.additionals!.find((a) => a.type === 'OPT') as { extendedRcode: number }).extendedRcode,
    1,
    'BADVERS is extended rcode 16',
  );
  assert.equal(v1.msg.answers!.length, 0);
  const chaos = await udp({
    id: 1,
    type: 'query',
    flags: 0,
    questions: [{ name: 'version.bind', type: 'TXT', class: 'CH' }],
  });
  assert.equal(rcode(chaos.msg), 'REFUSED');
  assert.equal(rcode((await udp(query('web.default.svc.cluster.local'))).msg), 'NOERROR');
});

test('names outside the zone go upstream once and then come from the cache with the TTL capped at 30 s; NXDOMAIN passes through', async () => {
  const before = upstreamAsked;
  const a = await udp(query('example.test'));
  assert.deepEqual(
    a.msg.answers!.map((x) => (x as { data: unknown }).data),
    ['192.0.2.7'],
  );
  assert.equal(a.msg.flag_aa, false);
  const b = await udp(query('EXAMPLE.test'));
  assert.equal((b.msg.answers![0] as { ttl: number }).ttl <= 30, true);
  assert.equal(upstreamAsked, before + 1, 'second answer from the cache');
  const nx = await udp(query('missing.test'));
  assert.equal(rcode(nx.msg), 'NXDOMAIN');
  const text = await metrics.registry.metrics();
  assert.match(text, /coredns_cache_hits_total\{server="dns:\/\/:53",type="success",zones="\.",view=""\} 1/);
  assert.match(text, /coredns_cache_entries\{server="dns:\/\/:53",type="denial",zones="\.",view=""\} 1/);
  assert.match(
    text,
    /coredns_dns_requests_total\{server="dns:\/\/:53",zone="\.",view="",proto="tcp",family="1",type="A"\} 2/,
  );
  assert.match(
    text,
    /coredns_dns_responses_total\{server="dns:\/\/:53",zone="\.",view="",rcode="NXDOMAIN",plugin="forward"\} 1/,
  );
  assert.match(
    text,
    /coredns_dns_request_duration_seconds_bucket\{le="0.00025",server="dns:\/\/:53",zone="\.",view="",type="A"\}/,
  );
});

test('a dead upstream gives SERVFAIL, not a hang or a crash', async () => {
  const dead = new Forwarder([{ host: '127.0.0.1', port: 9 }], 300);
  const r = await dead.forward({ name: 'example.org', type: 'A', class: 'IN' });
  assert.equal(r.rcode, 'SERVFAIL');
});

test('cache: TTLs count down, negative answers keep the SOA minimum, nothing beyond 30 s, errors are not kept, the oldest entry goes first', () => {
  let now = 1_000_000;
  const c = new ResponseCache(2, () => now);
  const ok: Reply = {
    rcode: 'NOERROR',
    authoritative: false,
    answers: [{ type: 'A', name: 'a.test', ttl: 20, class: 'IN', data: '192.0.2.1' }],
    authorities: [],
    additionals: [],
  };
  assert.equal(c.put('a', ok)?.kind, 'success');
  now += 7_000;
  assert.equal((c.get('a')!.reply.answers[0] as { ttl: number }).ttl, 13);
  now += 14_000;
  assert.equal(c.get('a'), undefined, 'expired');
  const neg: Reply = {
    rcode: 'NXDOMAIN',
    authoritative: false,
    answers: [],
    authorities: [
      {
        type: 'SOA',
        name: 'test',
        ttl: 3600,
        class: 'IN',
        data: { mname: 'a', rname: 'b', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 900 },
      },
    ],
    additionals: [],
  };
  assert.deepEqual(cachePolicy(neg), { kind: 'denial', ttl: 30 });
  assert.deepEqual(cachePolicy({ ...neg, authorities: [] }), undefined, 'no SOA, no negative caching');
  assert.equal(c.put('s', { ...ok, rcode: 'SERVFAIL' }), undefined);
  c.put('n', neg);
  c.put('b', ok);
  c.put('c', ok);
  assert.equal(c.get('n'), undefined, 'evicted at capacity');
  assert.equal(c.count('success'), 2);
});

test('clients outside the ACL get REFUSED over UDP and TCP, and nothing is forwarded or looked up for them', async () => {
  const handler = new QueryHandler({
    zone,
    config: { zone: 'cluster.local', ttl: 5, dnsIPs: [] },
    cache: new ResponseCache(),
    forwarder: new Forwarder([{ host: '127.0.0.1', port: upstream.address().port }], 1000),
    metrics,
    server: 'dns://:53',
  });
  const acl = new ClientAcl(['10.244.0.0/16'], []);
  // As seen from a LAN host: this test's client is loopback, so the ACL is asked about the address it would have.
  const closed = await serveDns(handler, '127.0.0.1:0', memoryLogger(), () => acl.allows('192.0.2.99'));
  try {
    const asked = upstreamAsked;
    const viaUdp = await udp(query('example.test'), closed.port);
    assert.equal(viaUdp.msg.id, 4242);
    assert.equal(rcode(viaUdp.msg), 'REFUSED');
    assert.equal(rcode((await udp(query('1.0.96.10.in-addr.arpa', 'PTR'), closed.port)).msg), 'REFUSED');
    assert.equal(upstreamAsked, asked, 'nothing forwarded');
  } finally {
    await closed.close();
  }
});

test('the ACL: the allowed ranges, loopback and this host, IPv4-mapped clients as IPv4', () => {
  const acl = new ClientAcl(['10.244.0.0/16', '10.96.0.0/12', 'fd00:10:244::/56'], ['192.0.2.1', 'fe80::1']);
  for (const ip of [
    '10.244.3.7',
    '10.96.0.10',
    '127.0.0.1',
    '::1',
    '192.0.2.1',
    '::ffff:10.244.0.5',
    'fd00:10:244::9',
    'fe80::1',
  ])
    assert.equal(acl.allows(ip), true, ip);
  for (const ip of ['192.0.2.99', '10.245.0.1', '::ffff:192.0.2.99', 'fd00:10:245::1', '', 'not-an-ip'])
    assert.equal(acl.allows(ip), false, ip);
  // The cluster's nodes: pods on other nodes arrive masqueraded to their node's address.
  acl.setNode('n2', ['192.0.2.2']);
  assert.equal(acl.allows('192.0.2.2'), true);
  assert.equal(acl.allows('::ffff:192.0.2.2'), true);
  assert.equal(acl.allows('192.0.2.99'), false);
  acl.setNode('n2', []);
  assert.equal(acl.allows('192.0.2.2'), false, 'a node that is gone is no longer answered');
  assert.throws(() => parseAllowFrom(['10.0.0.0/33']), /--allow-from: "10\.0\.0\.0\/33" is not a CIDR/);
  assert.throws(() => parseAllowFrom(['lan']), /--allow-from: "lan" is not a CIDR/);
});
