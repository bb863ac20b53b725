// Names outside the cluster go to the upstream resolvers (the node's
// resolv.conf by default, as the default Corefile's `forward . /etc/resolv.conf`):
// over UDP, again over TCP when the answer comes back truncated; the next
// upstream when one times out or fails; SERVFAIL for the client when all do.
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';

import type { Answer, DecodedPacket, Question } from 'dns-packet';
import * as packet from 'dns-packet';

import type { Rcode, Reply } from './answer.js';
import { EDNS_BUFSIZE } from './message.js';

export interface Upstream {
  host: string;
  port: number;
}

/** Upstreams from "ip", "ip:port" or "[v6]:port" entries. */
export function parseUpstreams(list: string[], source: string): Upstream[] {
  return list.map((s) => {
    const m =
      /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? (net.isIPv6(s) ? [s, s, undefined] : /^([^:]+)(?::(\d+))?$/.exec(s));
    const host = m?.[1];
    const port = Number(m?.[2] ?? 53);
    if (!host || !net.isIP(host) || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`${source}: upstream "${s}" is not an IP address with an optional port`);
    return { host, port };
  });
}

/** The nameservers of a resolv.conf, as upstreams. */
export function upstreamsFromResolvConf(file: string): Upstream[] {
  const text = fs.readFileSync(file, 'utf8');
  const ns = text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[0] === 'nameserver' && f[1])
    .map((f) => f[1]!.replace(/%.*$/, ''));
  return parseUpstreams(ns, file);
}

const ednsOpt = {
  type: 'OPT',
  name: '.',
  udpPayloadSize: EDNS_BUFSIZE,
  extendedRcode: 0,
  ednsVersion: 0,
  flags: 0,
  options: [],
} as unknown as Answer;

/** dns-packet decodes the header's rcode, its types leave it out. */
const rcodeOf = (p: DecodedPacket): string => (p as { rcode?: string }).rcode ?? 'SERVFAIL';

function toReply(p: DecodedPacket): Reply {
  return {
    rcode: rcodeOf(p) as Rcode,
    authoritative: false,
    answers: p.answers ?? [],
    authorities: p.authorities ?? [],
    additionals: (p.additionals ?? []).filter((a) => a.type !== 'OPT'),
  };
}

function queryBytes(q: Question, id: number): Buffer {
  return packet.encode({ id, type: 'query', flags: packet.RECURSION_DESIRED, questions: [q], additionals: [ednsOpt] });
}

function overUdp(u: Upstream, q: Question, timeoutMs: number): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const id = randomInt(0, 65536);
    const sock = dgram.createSocket(net.isIPv6(u.host) ? 'udp6' : 'udp4');
    const done = (e: Error | undefined, p?: DecodedPacket): void => {
      clearTimeout(timer);
      sock.close();
      if (e) reject(e);
      else resolve(p!);
    };
    const timer = setTimeout(() => done(new Error(`${u.host}:${u.port}: timed out after ${timeoutMs} ms`)), timeoutMs);
    sock.on('error', (e) => done(e));
    sock.on('message', (buf) => {
      let p: DecodedPacket;
      try {
        p = packet.decode(buf);
      } catch {
        return; // not an answer we can read: keep waiting for the real one
      }
      // Only the answer to our own question (RFC 5452: id and question must match).
      if (p.id !== id || p.questions?.[0]?.name.toLowerCase() !== q.name.toLowerCase()) return;
      done(undefined, p);
    });
    sock.send(queryBytes(q, id), u.port, u.host);
  });
}

function overTcp(u: Upstream, q: Question, timeoutMs: number): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const id = randomInt(0, 65536);
    const sock = net.connect({ host: u.host, port: u.port });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(
      () => sock.destroy(new Error(`${u.host}:${u.port}: TCP timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on('connect', () =>
      sock.write(
        packet.streamEncode({
          id,
          type: 'query',
          flags: packet.RECURSION_DESIRED,
          questions: [q],
          additionals: [ednsOpt],
        }),
      ),
    );
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      clearTimeout(timer);
      sock.destroy();
      try {
        resolve(packet.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
      } catch (e) {
        reject(e);
      }
    });
    sock.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`${u.host}:${u.port}: connection closed before an answer`));
    });
  });
}

export class Forwarder {
  constructor(
    readonly upstreams: Upstream[],
    private readonly timeoutMs = 2000,
  ) {}

  /** The upstream's answer; SERVFAIL when none answers. `onTry` sees each upstream asked and how it went. */
  async forward(q: Question, onTry?: (u: Upstream, rcode: string, seconds: number) => void): Promise<Reply> {
    for (const u of this.upstreams) {
      const t0 = process.hrtime.bigint();
      try {
        let p = await overUdp(u, q, this.timeoutMs);
        if (p.flag_tc) p = await overTcp(u, q, this.timeoutMs);
        const rcode = rcodeOf(p);
        onTry?.(u, rcode, Number(process.hrtime.bigint() - t0) / 1e9);
        // A SERVFAIL or REFUSED from one upstream is worth another's opinion.
        if ((rcode === 'SERVFAIL' || rcode === 'REFUSED') && u !== this.upstreams[this.upstreams.length - 1]) continue;
        return toReply(p);
      } catch {
        onTry?.(u, 'timeout', Number(process.hrtime.bigint() - t0) / 1e9);
      }
    }
    return { rcode: 'SERVFAIL', authoritative: false, answers: [], authorities: [], additionals: [] };
  }
}
