// The SPDY/3.1 client framing: SYN_STREAM header blocks form one zlib stream
// of stored blocks each ending in a sync flush (so an inflater hands them out
// frame by frame), data and FIN go out per stream, incoming data, FIN, RST
// and pings are understood.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import zlib from 'node:zlib';

import { SpdySession } from './spdy.js';

interface Frame {
  control: boolean;
  type: number;
  id: number;
  flags: number;
  body: Buffer;
}

function frames(b: Buffer): Frame[] {
  const out: Frame[] = [];
  for (let off = 0; off + 8 <= b.length;) {
    const first = b.readUInt32BE(off);
    const len = b.readUInt32BE(off + 4) & 0xffffff;
    const body = b.subarray(off + 8, off + 8 + len);
    const control = (first & 0x80000000) !== 0;
    out.push({
      control,
      type: control ? first & 0xffff : 0,
      id: control ? (body.length >= 4 ? body.readUInt32BE(0) & 0x7fffffff : 0) : first & 0x7fffffff,
      flags: b.readUInt8(off + 4),
      body,
    });
    off += 8 + len;
  }
  return out;
}

function session() {
  const sent: Buffer[] = [];
  const socket = new PassThrough();
  socket.write = ((chunk: Buffer) => {
    sent.push(chunk);
    return true;
  }) as typeof socket.write;
  const events: string[] = [];
  const s = new SpdySession(socket, {
    onData: (id, d) => events.push(`data ${id} ${d.toString()}`),
    onEnd: (id) => events.push(`end ${id}`),
    onClose: () => events.push('closed'),
  });
  return { s, socket, sent: () => Buffer.concat(sent), events };
}

test('streams get odd ids; their header blocks inflate, frame by frame, to SPDY name/value blocks', () => {
  const { s, sent } = session();
  const a = s.open({ streamType: 'error' });
  const b = s.open({ streamType: 'stdout', Port: '8080' });
  assert.deepEqual([a.id, b.id], [1, 3]);
  const syn = frames(sent()).filter((f) => f.control && f.type === 1);
  assert.equal(syn.length, 2);
  const blocks = syn.map((f) => f.body.subarray(10));
  // The first block opens the zlib stream: deflate, FDICT, SPDY/3's dictionary id.
  assert.deepEqual([...blocks[0]!.subarray(0, 6)], [0x78, 0x20, 0xe3, 0xc6, 0xa7, 0xc2]);
  const readBlock = (raw: Buffer): Buffer => zlib.inflateRawSync(raw, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const parse = (h: Buffer): Record<string, string> => {
    const n = h.readUInt32BE(0);
    const out: Record<string, string> = {};
    let off = 4;
    for (let i = 0; i < n; i++) {
      const kl = h.readUInt32BE(off);
      const k = h.subarray(off + 4, off + 4 + kl).toString();
      off += 4 + kl;
      const vl = h.readUInt32BE(off);
      out[k] = h.subarray(off + 4, off + 4 + vl).toString();
      off += 4 + vl;
    }
    return out;
  };
  assert.deepEqual(parse(readBlock(blocks[0]!.subarray(6))), { streamtype: 'error' });
  assert.deepEqual(parse(readBlock(blocks[1]!)), { streamtype: 'stdout', port: '8080' });
  // Each block ends with a sync flush's empty stored block.
  for (const blk of blocks) assert.deepEqual([...blk.subarray(-5)], [0, 0, 0, 0xff, 0xff]);
});

test('data and FIN go out on the stream; an empty write sends nothing', () => {
  const { s, sent } = session();
  const st = s.open({ streamType: 'stdin' });
  st.write(Buffer.alloc(0));
  st.write(Buffer.from('abc'));
  st.end();
  const data = frames(sent()).filter((f) => !f.control);
  assert.deepEqual(
    data.map((f) => [f.id, f.flags, f.body.toString()]),
    [
      [1, 0, 'abc'],
      [1, 1, ''],
    ],
  );
});

test('incoming data (split across reads), FIN, RST_STREAM and GOAWAY reach the handlers; a peer ping is echoed', () => {
  const { socket, sent, events } = session();
  const data = (id: number, flags: number, payload: string) => {
    const h = Buffer.alloc(8);
    h.writeUInt32BE(id, 0);
    h.writeUInt32BE((flags << 24) | payload.length, 4);
    return Buffer.concat([h, Buffer.from(payload)]);
  };
  const control = (type: number, body: Buffer) => {
    const h = Buffer.alloc(8);
    h.writeUInt16BE(0x8003, 0);
    h.writeUInt16BE(type, 2);
    h.writeUInt32BE(body.length, 4);
    return Buffer.concat([h, body]);
  };
  const u32 = (...n: number[]) =>
    Buffer.concat(
      n.map((x) => {
        const b = Buffer.alloc(4);
        b.writeUInt32BE(x);
        return b;
      }),
    );
  const wire = Buffer.concat([data(3, 0, 'hello'), data(3, 1, '!'), control(3, u32(5, 5)), control(6, u32(2))]);
  socket.emit('data', wire.subarray(0, 5));
  socket.emit('data', wire.subarray(5));
  assert.deepEqual(events, ['data 3 hello', 'data 3 !', 'end 3', 'end 5']);
  const pong = frames(sent()).find((f) => f.control && f.type === 6);
  assert.equal(pong?.body.readUInt32BE(0), 2);
  socket.emit('data', control(7, u32(0, 0)));
  assert.equal(events.at(-1), 'closed');
});
