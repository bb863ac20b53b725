// DNS messages on the wire, through dns-packet: reading a query (FORMERR when
// it cannot be read, NOTIMP for other opcodes), EDNS0 (the client's buffer
// size, BADVERS for versions above 0) and fitting a UDP answer into that size
// with TC set, as RFC 1035 4.2.1 and RFC 6891 say.
import type { Answer, DecodedPacket, Packet, Question } from 'dns-packet';
import * as packet from 'dns-packet';

import type { Rcode, Reply } from './answer.js';

/** What this server advertises and accepts at most over UDP (the DNS flag day 2020 value). */
export const EDNS_BUFSIZE = 1232;
const PLAIN_UDP = 512;
export const MAX_TCP = 65535;

export interface Query {
  id: number;
  question: Question;
  recursionDesired: boolean;
  checkingDisabled: boolean;
  /** The client's EDNS0 record, when it sent one. */
  edns?: { udpSize: number; version: number; dnssecOk: boolean };
  raw: DecodedPacket;
}

export type ParsedQuery =
  | { ok: true; query: Query }
  | { ok: false; id: number; rcode: 'FORMERR' | 'NOTIMP'; why: string }
  | { ok: false; id: undefined; why: string };

const RCODES: Record<Rcode | 'BADVERS', number> = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
};

export function parseQuery(buf: Buffer): ParsedQuery {
  if (buf.length < 12) return { ok: false, id: undefined, why: 'shorter than a DNS header' };
  const id = buf.readUInt16BE(0);
  if (buf[2]! & 0x80) return { ok: false, id: undefined, why: 'a response, not a query' };
  const opcode = (buf[2]! >> 3) & 0xf;
  if (opcode !== 0) return { ok: false, id, rcode: 'NOTIMP', why: `opcode ${opcode}` };
  let p: DecodedPacket;
  try {
    p = packet.decode(buf);
  } catch (e) {
    return { ok: false, id, rcode: 'FORMERR', why: (e as Error).message };
  }
  if (p.questions?.length !== 1)
    return { ok: false, id, rcode: 'FORMERR', why: `${p.questions?.length ?? 0} questions` };
  const opts = (p.additionals ?? []).filter((a) => a.type === 'OPT');
  if (opts.length > 1) return { ok: false, id, rcode: 'FORMERR', why: 'more than one OPT record' };
  const opt = opts[0] as { udpPayloadSize?: number; ednsVersion?: number; flag_do?: boolean } | undefined;
  const q = p.questions[0]!;
  return {
    ok: true,
    query: {
      id,
      question: { name: q.name, type: q.type, class: q.class ?? 'IN' },
      recursionDesired: ((p.flags ?? 0) & packet.RECURSION_DESIRED) !== 0,
      checkingDisabled: ((p.flags ?? 0) & packet.CHECKING_DISABLED) !== 0,
      edns: opt
        ? { udpSize: opt.udpPayloadSize ?? PLAIN_UDP, version: opt.ednsVersion ?? 0, dnssecOk: opt.flag_do === true }
        : undefined,
      raw: p,
    },
  };
}

/** The most a UDP answer to this query may hold. */
export function udpLimit(q: Query | undefined): number {
  if (!q?.edns) return PLAIN_UDP;
  return Math.min(Math.max(q.edns.udpSize, PLAIN_UDP), EDNS_BUFSIZE);
}

function opt(rcode: number, dnssecOk: boolean): Answer {
  return {
    type: 'OPT',
    name: '.',
    udpPayloadSize: EDNS_BUFSIZE,
    extendedRcode: rcode >> 4,
    ednsVersion: 0,
    flags: dnssecOk ? packet.DNSSEC_OK : 0,
    options: [],
  } as unknown as Answer;
}

/** A response to `q` with the given sections; EDNS0 echoed when the client used it. */
export function responsePacket(q: Query, r: Reply, recursionAvailable = true): Packet {
  let rcode: number = RCODES[r.rcode] ?? RCODES.SERVFAIL;
  if (q.edns && q.edns.version > 0) rcode = RCODES.BADVERS;
  const flags =
    (rcode & 0xf) |
    (r.authoritative ? packet.AUTHORITATIVE_ANSWER : 0) |
    (q.recursionDesired ? packet.RECURSION_DESIRED : 0) |
    (recursionAvailable ? packet.RECURSION_AVAILABLE : 0) |
    (q.checkingDisabled ? packet.CHECKING_DISABLED : 0);
  const badvers = rcode === RCODES.BADVERS;
  return {
    id: q.id,
    type: 'response',
    flags,
    questions: [q.question],
    answers: badvers ? [] : r.answers,
    authorities: badvers ? [] : r.authorities,
    additionals: [
      ...(badvers ? [] : r.additionals.filter((a) => a.type !== 'OPT')),
      ...(q.edns ? [opt(rcode, q.edns.dnssecOk)] : []),
    ],
  };
}

/** An error answer to a query that could not be used (FORMERR, NOTIMP, SERVFAIL, REFUSED): header and, when readable, the question. */
export function errorResponse(id: number, rcode: Rcode, q?: Query): Buffer {
  if (q)
    return packet.encode(
      responsePacket(q, { rcode, authoritative: false, answers: [], authorities: [], additionals: [] }),
    );
  const b = Buffer.alloc(12);
  b.writeUInt16BE(id, 0);
  b.writeUInt16BE(0x8000 | RCODES[rcode], 2);
  return b;
}

/**
 * Encodes a response no larger than `limit`: when it does not fit, additionals
 * go first, then answers from the end, and TC is set so the client retries over TCP.
 */
export function encodeWithin(p: Packet, limit: number): { buf: Buffer; truncated: boolean } {
  const full = packet.encode(p);
  if (full.length <= limit) return { buf: full, truncated: false };
  const optRec = (p.additionals ?? []).filter((a) => a.type === 'OPT');
  const base: Packet = {
    ...p,
    flags: (p.flags ?? 0) | packet.TRUNCATED_RESPONSE,
    additionals: optRec,
    authorities: [],
  };
  const answers = p.answers ?? [];
  // The largest prefix of the answers that fits, by bisection.
  let lo = 0;
  let hi = answers.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (packet.encodingLength({ ...base, answers: answers.slice(0, mid) }) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return { buf: packet.encode({ ...base, answers: answers.slice(0, lo) }), truncated: true };
}

export const rcodeName = (buf: Buffer): string => {
  const n = buf.length >= 4 ? buf[3]! & 0xf : 2;
  return Object.entries(RCODES).find(([, v]) => v === n)?.[0] ?? String(n);
};
