// The client side of a SPDY/3.1 session, as much of it as Kubernetes'
// streaming protocols (remotecommand, portforward) use: open streams with
// headers, write and half-close them, receive their data. Flow control is
// not spoken (spdystream, the Go implementation kubelets and runtimes use,
// does not enforce it); pings are answered.
//
// Header blocks are sent as zlib *stored* blocks (each followed by the empty
// block of a sync flush) of one continuous stream primed with SPDY's
// dictionary id, which any inflater reads; the server's
// header blocks are never needed (stream ids are in the frame), so they are
// not inflated.
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';

const VERSION = 3;
const TYPE = {
  synStream: 1,
  synReply: 2,
  rstStream: 3,
  settings: 4,
  ping: 6,
  goAway: 7,
  headers: 8,
  windowUpdate: 9,
} as const;
const FLAG_FIN = 0x01;
/** adler32 of SPDY/3's header dictionary (draft-mbelshe-httpbis-spdy-00 §2.6.10.1), as zlib's FDICT id. */
const DICTIONARY_ID = 0xe3c6a7c2;

export interface SpdyStream {
  readonly id: number;
  write(data: Buffer): void;
  /** Half-closes: the peer reads EOF. */
  end(): void;
}

export interface SpdyHandlers {
  onData(streamId: number, data: Buffer): void;
  /** The peer finished sending on a stream (FIN or RST_STREAM). */
  onEnd(streamId: number): void;
  onClose(): void;
}

export class SpdySession {
  private nextId = 1;
  private headerStreamStarted = false;
  private buf: Buffer = Buffer.alloc(0);
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    private readonly h: SpdyHandlers,
    head: Buffer = Buffer.alloc(0),
  ) {
    socket.on('data', (b: Buffer) => this.read(b));
    socket.on('close', () => this.finish());
    socket.on('error', () => this.finish());
    if (head.length) this.read(head);
  }

  /** Opens a stream (SYN_STREAM) with these headers; names are sent lower-cased, as SPDY requires. */
  open(headers: Record<string, string>): SpdyStream {
    const id = this.nextId;
    this.nextId += 2;
    const block = this.headerBlock(headers);
    const body = Buffer.alloc(10);
    body.writeUInt32BE(id, 0);
    body.writeUInt32BE(0, 4); // associated stream
    body.writeUInt8(0, 8); // priority
    body.writeUInt8(0, 9); // slot
    this.control(TYPE.synStream, 0, Buffer.concat([body, block]));
    return {
      id,
      write: (data: Buffer) => {
        // A data frame holds at most 2^24-1 bytes.
        for (let off = 0; off < data.length; off += 0xffffff) this.data(id, 0, data.subarray(off, off + 0xffffff));
      },
      end: () => this.data(id, FLAG_FIN, Buffer.alloc(0)),
    };
  }

  close(): void {
    this.socket.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.h.onClose();
  }

  /** The header block in one zlib stored block (the stream's zlib header and dictionary id first). */
  private headerBlock(headers: Record<string, string>): Buffer {
    const entries = Object.entries(headers);
    const parts: Buffer[] = [u32(entries.length)];
    for (const [k, v] of entries) {
      const name = Buffer.from(k.toLowerCase());
      const value = Buffer.from(v);
      parts.push(u32(name.length), name, u32(value.length), value);
    }
    const raw = Buffer.concat(parts);
    const stored = Buffer.alloc(5);
    stored.writeUInt8(0, 0); // BFINAL=0, BTYPE=00 (stored), byte-aligned
    stored.writeUInt16LE(raw.length, 1);
    stored.writeUInt16LE(~raw.length & 0xffff, 3);
    // Then an empty stored block, as a sync flush ends each block: inflaters hand out data only at a block's end.
    const out: Buffer[] = [stored, raw, Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])];
    if (!this.headerStreamStarted) {
      this.headerStreamStarted = true;
      // CMF 0x78 (deflate, 32K window), FLG 0x20 (FDICT; 0x7820 is a multiple of 31), then the dictionary id.
      out.unshift(Buffer.from([0x78, 0x20]), u32(DICTIONARY_ID));
    }
    return Buffer.concat(out);
  }

  private control(type: number, flags: number, body: Buffer): void {
    const h = Buffer.alloc(8);
    h.writeUInt16BE(0x8000 | VERSION, 0);
    h.writeUInt16BE(type, 2);
    h.writeUInt32BE(((flags & 0xff) << 24) | body.length, 4);
    this.send(Buffer.concat([h, body]));
  }

  private data(id: number, flags: number, payload: Buffer): void {
    const h = Buffer.alloc(8);
    h.writeUInt32BE(id & 0x7fffffff, 0);
    h.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
    this.send(Buffer.concat([h, payload]));
  }

  private send(b: Buffer): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(b);
  }

  private read(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= 8) {
      const len = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + len) return;
      const flags = this.buf.readUInt8(4);
      const body = this.buf.subarray(8, 8 + len);
      const first = this.buf.readUInt32BE(0);
      this.buf = this.buf.subarray(8 + len);
      if (first & 0x80000000) this.onControl((first & 0xffff) as number, flags, body);
      else {
        const id = first & 0x7fffffff;
        if (body.length) this.h.onData(id, Buffer.from(body));
        if (flags & FLAG_FIN) this.h.onEnd(id);
      }
    }
  }

  private onControl(type: number, flags: number, body: Buffer): void {
    switch (type) {
      case TYPE.synReply:
      case TYPE.headers:
        if (flags & FLAG_FIN && body.length >= 4) this.h.onEnd(body.readUInt32BE(0) & 0x7fffffff);
        return;
      case TYPE.rstStream:
        if (body.length >= 4) this.h.onEnd(body.readUInt32BE(0) & 0x7fffffff);
        return;
      case TYPE.ping:
        // Our ids are odd; a peer's ping (even id) is echoed back.
        if (body.length >= 4 && body.readUInt32BE(0) % 2 === 0) this.control(TYPE.ping, 0, body);
        return;
      case TYPE.goAway:
        this.close();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, a server-initiated SYN_STREAM: nothing to do
    }
  }
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
};

export interface SpdyDial {
  url: URL;
  cert?: Buffer;
  key?: Buffer;
  /** X-Stream-Protocol-Version values, preferred first. */
  protocols: string[];
}

/** Upgrades a POST to SPDY/3.1: the socket, the protocol the server chose, and bytes read past its answer; else the server's status and body. */
export function dialSpdy(d: SpdyDial): Promise<{ socket: Duplex; protocol: string; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: d.url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(d.url.port) || 443,
      path: `${d.url.pathname}${d.url.search}`,
      method: 'POST',
      cert: d.cert,
      key: d.key,
      rejectUnauthorized: false,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'SPDY/3.1',
        'X-Stream-Protocol-Version': d.protocols,
        'Content-Length': '0',
      },
    });
    req.on('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) =>
      resolve({ socket, protocol: String(res.headers['x-stream-protocol-version'] ?? ''), head }),
    );
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        reject(new SpdyDialError(res.statusCode ?? 502, Buffer.concat(chunks).toString('utf8').slice(0, 4096).trim())),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

export class SpdyDialError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`upgrade refused with ${code}: ${body}`);
  }
}
