import assert from 'node:assert/strict';
import fs from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { codeOfHttpStatus, frame, GrpcCallError, grpcTimeout, Status, UnaryChannel, unframe } from './unary-channel.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-unary-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const tracked = new WeakMap<http2.Http2Server, Set<http2.ServerHttp2Session>>();
type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer) => void;

/** A bare HTTP/2 server on a unix socket answering as `handler` says: the cases a gRPC server library would not produce on demand. */
async function server(sock: string, handler: Handler): Promise<http2.Http2Server> {
  const s = http2.createServer();
  const open = new Set<http2.ServerHttp2Session>();
  tracked.set(s, open);
  s.on('session', (sess) => {
    open.add(sess);
    sess.on('close', () => open.delete(sess));
  });
  s.on('stream', (stream, headers) => {
    stream.on('error', () => undefined); // the resets the tests make
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => handler(stream, headers, Buffer.concat(chunks)));
  });
  await new Promise<void>((r) => s.listen(sock, r));
  return s;
}
const close = (s: http2.Http2Server) => new Promise<void>((r) => s.close(() => r()));
const rejectsWith = (p: Promise<unknown>, code: number, details: RegExp) =>
  assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof GrpcCallError, String(e));
    assert.equal(e.code, code, e.details);
    assert.match(e.details, details);
    return true;
  });

test('framing, timeouts and HTTP status codes as gRPC specifies them', () => {
  assert.deepEqual([...frame(Buffer.from('ab'))], [0, 0, 0, 0, 2, 97, 98]);
  assert.deepEqual(unframe(frame(Buffer.from('ab')), 10), Buffer.from('ab'));
  assert.equal((unframe(frame(Buffer.alloc(11)), 10) as GrpcCallError).code, Status.RESOURCE_EXHAUSTED);
  assert.equal((unframe(Buffer.from([1, 0, 0, 0, 0]), 10) as GrpcCallError).code, Status.INTERNAL);
  assert.match(
    (unframe(Buffer.concat([frame(Buffer.from('a')), frame(Buffer.from('b'))]), 10) as GrpcCallError).details,
    /more than one/,
  );
  assert.equal(grpcTimeout(120_000), '120000m');
  assert.equal(grpcTimeout(1e9), '1000000S');
  assert.equal(grpcTimeout(1e15), '99999999H');
  assert.deepEqual([400, 401, 403, 404, 429, 503, 500].map(codeOfHttpStatus), [13, 16, 7, 12, 14, 14, 2]);
});

test('a call sends gRPC headers and one framed message, and returns the response message', async () => {
  const sock = path.join(dir, 'ok.sock');
  let seen: http2.IncomingHttpHeaders = {};
  const s = await server(sock, (stream, headers, body) => {
    seen = headers;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame(Buffer.concat([Buffer.from('echo:'), unframe(body, 100) as Buffer])));
  });
  const ch = new UnaryChannel({ socketPath: sock, maxMessageBytes: 1024 });
  try {
    assert.equal(String(await ch.call('/runtime.v1.RuntimeService/Version', Buffer.from('hi'), 5000)), 'echo:hi');
    assert.equal(seen[':path'], '/runtime.v1.RuntimeService/Version');
    assert.equal(seen['content-type'], 'application/grpc');
    assert.equal(seen.te, 'trailers');
    assert.equal(seen['grpc-timeout'], '5000m');
    // Many calls at once share the connection.
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => ch.call('/x/Y', Buffer.from(String(i)), 5000)));
    assert.deepEqual(
      many.map(String),
      Array.from({ length: 20 }, (_, i) => `echo:${i}`),
    );
    await rejectsWith(
      ch.call('/x/Y', Buffer.alloc(2000), 5000),
      Status.RESOURCE_EXHAUSTED,
      /Sent message larger than max \(2000 vs\. 1024\)/,
    );
  } finally {
    ch.close();
    await close(s);
  }
});

test('error statuses: trailers-only with a percent-encoded message, HTTP errors, resets, oversized responses, deadlines', async () => {
  const sock = path.join(dir, 'err.sock');
  const s = await server(sock, (stream, headers) => {
    const p = headers[':path'];
    if (p === '/t/NotFound')
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '5',
          'grpc-message': 'container%20%22x%22 not found',
        },
        { endStream: true },
      );
    else if (p === '/t/Http503') stream.respond({ ':status': 503 }, { endStream: true });
    else if (p === '/t/Refused') stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    else if (p === '/t/Big') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.end(frame(Buffer.alloc(4096)));
    } else if (p === '/t/NoStatus') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.end(frame(Buffer.from('x')));
    } // '/t/Slow': never answers
  });
  const ch = new UnaryChannel({ socketPath: sock, maxMessageBytes: 1024 });
  try {
    await rejectsWith(ch.call('/t/NotFound', Buffer.alloc(0), 5000), Status.NOT_FOUND, /^container "x" not found$/);
    await rejectsWith(ch.call('/t/Http503', Buffer.alloc(0), 5000), Status.UNAVAILABLE, /HTTP status code 503/);
    await rejectsWith(ch.call('/t/Refused', Buffer.alloc(0), 5000), Status.UNAVAILABLE, /RST_STREAM with code 7/);
    await rejectsWith(ch.call('/t/Big', Buffer.alloc(0), 5000), Status.RESOURCE_EXHAUSTED, /larger than max/);
    await rejectsWith(ch.call('/t/NoStatus', Buffer.alloc(0), 5000), Status.UNKNOWN, /without a status/);
    await rejectsWith(ch.call('/t/Slow', Buffer.alloc(0), 200), Status.DEADLINE_EXCEEDED, /Deadline exceeded/);
    // The connection survives all of the above.
    await rejectsWith(ch.call('/t/NotFound', Buffer.alloc(0), 5000), Status.NOT_FOUND, /not found/);
  } finally {
    ch.close();
    await close(s);
  }
});

test('no runtime listening is UNAVAILABLE; once it is (again), the next call connects', async () => {
  const sock = path.join(dir, 'later.sock');
  const ch = new UnaryChannel({ socketPath: sock, maxMessageBytes: 1024 });
  await rejectsWith(
    ch.call('/t/X', Buffer.alloc(0), 5000),
    Status.UNAVAILABLE,
    /No connection established\. Last error: connect ENOENT/,
  );
  const answer = (stream: http2.ServerHttp2Stream): void => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame(Buffer.from('up')));
  };
  let s = await server(sock, answer);
  assert.equal(String(await ch.call('/t/X', Buffer.alloc(0), 5000)), 'up');
  // The runtime restarts: its connections close.
  const closed = new Promise<void>((r) => s.close(() => r()));
  for (const sess of sessions(s)) sess.destroy();
  await closed;
  s = await server(sock, answer);
  try {
    // A call racing the old connection's end may fail, as UNAVAILABLE; a later one reconnects.
    let answered = '';
    for (let i = 0; i < 50 && !answered; i++) {
      answered = String(
        await ch
          .call('/t/X', Buffer.alloc(0), 5000)
          .catch((e: GrpcCallError) => assert.equal(e.code, Status.UNAVAILABLE, e.details) ?? ''),
      );
      if (!answered) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(answered, 'up');
  } finally {
    ch.close();
    await close(s);
  }
});

/** The server's open sessions (http2 servers do not list them). */
const sessions = (s: http2.Http2Server): http2.ServerHttp2Session[] => [...(tracked.get(s) ?? [])];
