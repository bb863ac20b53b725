// Unary gRPC calls over one HTTP/2 connection to a unix socket, with Node's
// own http2: what the CRI needs (every CRI call is unary) without grpc-js's
// channel, load balancing, filter and credential layers, whose CPU per call and
// loaded code dominated an idle kubelet (docs/benchmarks.md, "Engine settings").
// Wire format and status mapping: gRPC's PROTOCOL-HTTP2.md and
// http-grpc-status-mapping.md.
import http2 from 'node:http2';
import net from 'node:net';

/** gRPC status codes used here (the numbers are the wire contract). */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

export class GrpcCallError extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
  ) {
    super(`${code} ${details}`);
    this.name = 'GrpcCallError';
  }
}

/** The gRPC code for a response without grpc-status, from its HTTP status. */
export function codeOfHttpStatus(status: number): number {
  if (status === 400) return Status.INTERNAL;
  if (status === 401) return Status.UNAUTHENTICATED;
  if (status === 403) return Status.PERMISSION_DENIED;
  if (status === 404) return Status.UNIMPLEMENTED;
  if (status === 429 || status === 502 || status === 503 || status === 504) return Status.UNAVAILABLE;
  return Status.UNKNOWN;
}

/** The gRPC code for a stream the server reset without a status. */
export function codeOfRstStream(code: number): number {
  const c = http2.constants;
  if (code === c.NGHTTP2_REFUSED_STREAM) return Status.UNAVAILABLE;
  if (code === c.NGHTTP2_CANCEL) return Status.CANCELLED;
  if (code === c.NGHTTP2_ENHANCE_YOUR_CALM) return Status.RESOURCE_EXHAUSTED;
  if (code === c.NGHTTP2_INADEQUATE_SECURITY) return Status.PERMISSION_DENIED;
  return Status.INTERNAL;
}

/** The grpc-timeout header: at most 8 digits and a unit. */
export function grpcTimeout(ms: number): string {
  const m = Math.max(0, Math.ceil(ms));
  if (m < 1e8) return `${m}m`;
  if (m / 1000 < 1e8) return `${Math.ceil(m / 1000)}S`;
  return `${Math.min(99_999_999, Math.ceil(m / 3_600_000))}H`;
}

/** A message with gRPC's 5-byte prefix: not compressed, big-endian length. */
export function frame(msg: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + msg.length);
  out[0] = 0;
  out.writeUInt32BE(msg.length, 1);
  msg.copy(out, 5);
  return out;
}

/** The one message of a unary response body, or an error status. */
export function unframe(body: Buffer, maxBytes: number): Buffer | GrpcCallError {
  if (body.length < 5) return new GrpcCallError(Status.INTERNAL, 'no response message');
  if (body[0] !== 0)
    return new GrpcCallError(Status.INTERNAL, 'compressed response message, but no compression was asked for');
  const len = body.readUInt32BE(1);
  if (len > maxBytes)
    return new GrpcCallError(Status.RESOURCE_EXHAUSTED, `Received message larger than max (${len} vs. ${maxBytes})`);
  if (body.length !== 5 + len)
    return new GrpcCallError(
      Status.INTERNAL,
      body.length < 5 + len ? 'truncated response message' : 'more than one response message to a unary call',
    );
  return body.subarray(5);
}

function decodeMessage(v: string | string[] | undefined): string {
  const s = Array.isArray(v) ? v.join(',') : (v ?? '');
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export interface UnaryChannelOptions {
  socketPath: string;
  maxMessageBytes: number;
}

/** One connection, opened on the first call and again after it closed (the runtime restarted). */
export class UnaryChannel {
  private session: http2.ClientHttp2Session | undefined;
  /** Each connection's state, for the calls it ended: why it failed or broke. */
  private readonly states = new WeakMap<
    http2.ClientHttp2Session,
    { connected: boolean; closed: boolean; error?: Error }
  >();

  constructor(private readonly o: UnaryChannelOptions) {}

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = http2.connect('http://localhost', {
      createConnection: () => net.connect(this.o.socketPath),
      settings: { initialWindowSize: 1 << 20 },
    });
    const state: { connected: boolean; closed: boolean; error?: Error } = { connected: false, closed: false };
    this.states.set(s, state);
    const forget = (): void => {
      if (this.session === s) this.session = undefined;
    };
    s.on('connect', () => (state.connected = true));
    s.on('error', (e: Error) => {
      state.error = e;
      forget();
    });
    // Calls in flight finish on the old connection; new ones open another.
    s.on('goaway', forget);
    s.on('close', () => {
      state.closed = true;
      forget();
    });
    // The deadline timer of a call in flight keeps the process alive, not the idle connection.
    s.unref();
    this.session = s;
    return s;
  }

  call(path: string, request: Buffer, timeoutMs: number): Promise<Buffer> {
    if (request.length > this.o.maxMessageBytes)
      return Promise.reject(
        new GrpcCallError(
          Status.RESOURCE_EXHAUSTED,
          `Sent message larger than max (${request.length} vs. ${this.o.maxMessageBytes})`,
        ),
      );
    return new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      const done = (r: Buffer | GrpcCallError): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (r instanceof GrpcCallError) reject(r);
        else resolve(r);
      };
      const timer = setTimeout(() => {
        done(new GrpcCallError(Status.DEADLINE_EXCEEDED, `Deadline exceeded after ${(timeoutMs / 1000).toFixed(3)}s`));
        stream?.close(http2.constants.NGHTTP2_CANCEL);
      }, timeoutMs);
      let stream: http2.ClientHttp2Stream | undefined;
      let session: http2.ClientHttp2Session;
      try {
        session = this.connect();
        stream = session.request({
          ':method': 'POST',
          ':path': path,
          'content-type': 'application/grpc',
          te: 'trailers',
          'grpc-timeout': grpcTimeout(timeoutMs),
          'user-agent': 'tskube-kubelet',
        });
      } catch (e) {
        return done(
          new GrpcCallError(Status.UNAVAILABLE, `No connection established. Last error: ${(e as Error).message}`),
        );
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let httpStatus = 0;
      const status = (h: http2.IncomingHttpHeaders): void => {
        const code = h['grpc-status'];
        if (code === undefined) return;
        const n = Number(code);
        if (n === Status.OK) done(unframe(Buffer.concat(chunks, size), this.o.maxMessageBytes));
        else done(new GrpcCallError(Number.isInteger(n) ? n : Status.UNKNOWN, decodeMessage(h['grpc-message'])));
      };
      stream.on('response', (h) => {
        httpStatus = Number(h[':status']);
        if (httpStatus !== 200)
          return done(new GrpcCallError(codeOfHttpStatus(httpStatus), `Received HTTP status code ${httpStatus}`));
        status(h); // trailers-only: an error with no body
      });
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size > this.o.maxMessageBytes + 5) {
          done(
            new GrpcCallError(
              Status.RESOURCE_EXHAUSTED,
              `Received message larger than max (${size - 5} vs. ${this.o.maxMessageBytes})`,
            ),
          );
          stream!.close(http2.constants.NGHTTP2_CANCEL);
          return;
        }
        chunks.push(c);
      });
      stream.on('trailers', status);
      stream.on('error', () => undefined); // reported on close, below
      const ended = (): void => {
        if (settled) return;
        const state = this.states.get(session)!;
        const rst = stream!.rstCode ?? http2.constants.NGHTTP2_NO_ERROR;
        if (!state.connected)
          done(
            new GrpcCallError(
              Status.UNAVAILABLE,
              `No connection established. Last error: ${state.error?.message ?? 'connection closed'}`,
            ),
          );
        else if (state.error)
          done(new GrpcCallError(Status.UNAVAILABLE, `Connection dropped. Last error: ${state.error.message}`));
        else if (rst !== http2.constants.NGHTTP2_NO_ERROR)
          done(new GrpcCallError(codeOfRstStream(rst), `Received RST_STREAM with code ${rst}`));
        else if (!httpStatus)
          done(new GrpcCallError(Status.UNAVAILABLE, 'Connection closed before the runtime answered'));
        else done(new GrpcCallError(Status.UNKNOWN, 'Server closed the call without a status'));
      };
      // A failed connection closes its streams before it reports its error: wait for it.
      stream.on('close', () => {
        const state = this.states.get(session)!;
        if (!settled && !state.connected && !state.closed) session.once('close', ended);
        else ended();
      });
      stream.end(frame(request));
    });
  }

  close(): void {
    this.session?.close();
    this.session = undefined;
  }
}
