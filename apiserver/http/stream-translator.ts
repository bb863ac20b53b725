// WebSocket clients of pods/exec, pods/attach and pods/portforward, carried
// to the kubelet's SPDY endpoints, as kube-apiserver's stream translator
// does: kubectl 1.32 asks for v5.channel.k8s.io (exec, attach) and for
// SPDY-over-WebSocket (port-forward); the Python and JavaScript clients ask
// for v4.channel.k8s.io (exec, and port-forward's channel form). Kubelets and
// runtimes speak remotecommand v4 and portforward.k8s.io over SPDY, so the
// channels become SPDY streams and back.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

import { type RawData, type WebSocket, WebSocketServer } from 'ws';

import { dialSpdy, type SpdyDial, SpdySession, type SpdyStream } from '../../kube/spdy.js';

export const V5 = 'v5.channel.k8s.io';
export const V4 = 'v4.channel.k8s.io';
export const PORTFORWARD_TUNNEL = 'SPDY/3.1+portforward.k8s.io';
const ACCEPTED = [V5, V4, PORTFORWARD_TUNNEL];

/** remotecommand channels (the first byte of every message). */
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

// 'SPDY/3.1+portforward.k8s.io' is not an RFC 7230 token ('/'), which ws refuses to parse: it travels
// through ws under a stand-in name and is put back into the answer's headers.
const TUNNEL_TOKEN = 'tskube-spdy-portforward-tunnel';
const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  handleProtocols: (offered) => [V5, V4, TUNNEL_TOKEN].find((p) => offered.has(p)) ?? false,
});
wss.on('headers', (headers: string[]) => {
  const i = headers.indexOf(`Sec-WebSocket-Protocol: ${TUNNEL_TOKEN}`);
  if (i >= 0) headers[i] = `Sec-WebSocket-Protocol: ${PORTFORWARD_TUNNEL}`;
});

/** The subprotocol this server would choose from a client's Sec-WebSocket-Protocol, if any. */
export function chooseProtocol(req: IncomingMessage): string | undefined {
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((s) => s.trim());
  return ACCEPTED.find((p) => offered.includes(p));
}

const toBuffer = (d: RawData): Buffer =>
  Buffer.isBuffer(d) ? d : Array.isArray(d) ? Buffer.concat(d) : Buffer.from(d);

export interface ExecStreams {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/**
 * A SPDY session to the kubelet behind a client's WebSocket: data of a stream in `channelOf` goes out on its
 * channel (first byte); the session's end closes the WebSocket normally, and the WebSocket's end closes the session.
 */
function relay(
  ws: WebSocket,
  up: { socket: Duplex; head: Buffer },
  onEnd: (streamId: number) => void = () => {},
): { session: SpdySession; channelOf: Map<number, number> } {
  const channelOf = new Map<number, number>();
  let ended = false;
  const session = new SpdySession(
    up.socket,
    {
      onData: (id, data) => {
        const ch = channelOf.get(id);
        if (ch !== undefined && ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([ch]), data]));
      },
      onEnd,
      onClose: () => {
        ended = true;
        if (ws.readyState === ws.OPEN) ws.close(1000);
      },
    },
    up.head,
  );
  ws.on('close', () => {
    if (!ended) session.close();
  });
  ws.on('error', () => session.close());
  return { session, channelOf };
}

/**
 * exec/attach: dials the kubelet (remotecommand v4 over SPDY) first, so a refusal is answered as the upgrade's
 * status; then completes the client's WebSocket and relays channels and streams both ways.
 */
export async function translateExec(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  dial: Omit<SpdyDial, 'protocols'>,
  s: ExecStreams,
): Promise<void> {
  const up = await dialSpdy({ ...dial, protocols: [V4] });
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    const { session, channelOf } = relay(ws, up);
    // The order kubectl's SPDY client uses: the error stream first, the resize stream last.
    const streams: Partial<Record<keyof typeof CHANNEL, SpdyStream>> = {};
    for (const name of ['error', 'stdin', 'stdout', 'stderr', 'resize'] as const) {
      if (name !== 'error' && !(name === 'resize' ? s.tty : s[name])) continue;
      const st = session.open({ streamType: name });
      streams[name] = st;
      channelOf.set(st.id, CHANNEL[name]);
    }
    ws.on('message', (raw: RawData) => {
      const m = toBuffer(raw);
      if (!m.length) return;
      const payload = m.subarray(1);
      if (m[0] === CHANNEL.stdin && payload.length) streams.stdin?.write(payload);
      else if (m[0] === CHANNEL.resize && payload.length) streams.resize?.write(payload);
      // v5: the client closed one of its streams (stdin reached EOF).
      else if (m[0] === CHANNEL.close && payload[0] === CHANNEL.stdin) streams.stdin?.end();
    });
  });
}

/** port-forward from kubectl: its SPDY session travels inside WebSocket messages, spliced to the kubelet's SPDY connection. */
export async function tunnelPortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  dial: Omit<SpdyDial, 'protocols'>,
): Promise<void> {
  const up = await dialSpdy({ ...dial, protocols: ['portforward.k8s.io'] });
  req.headers['sec-websocket-protocol'] = TUNNEL_TOKEN;
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    if (up.head.length) ws.send(up.head);
    up.socket.on('data', (b: Buffer) => ws.readyState === ws.OPEN && ws.send(b));
    up.socket.on('close', () => ws.readyState === ws.OPEN && ws.close(1000));
    up.socket.on('error', () => ws.terminate());
    ws.on('message', (raw: RawData) => up.socket.write(toBuffer(raw)));
    ws.on('close', () => up.socket.destroy());
    ws.on('error', () => up.socket.destroy());
  });
}

/**
 * port-forward in the channel protocol (v4.channel.k8s.io; the Python client's portforward): per requested port,
 * channel 2i carries data and 2i+1 errors, each opened by a message holding the port (2 bytes, little endian);
 * every port becomes a SPDY data and error stream pair of the kubelet's portforward.k8s.io.
 */
export async function translatePortForward(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  dial: Omit<SpdyDial, 'protocols'>,
  ports: number[],
): Promise<void> {
  const up = await dialSpdy({ ...dial, protocols: ['portforward.k8s.io'] });
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    const dataIds = new Set<number>();
    // Once every forwarded connection is closed by the pod side, so is the WebSocket.
    const { session, channelOf } = relay(ws, up, (id) => {
      if (dataIds.delete(id) && !dataIds.size && ws.readyState === ws.OPEN) ws.close(1000);
    });
    const data: SpdyStream[] = [];
    ports.forEach((port, i) => {
      // As kubectl's SPDY port-forward: the error stream first, then the data stream, sharing a request id.
      const err = session.open({ streamType: 'error', port: String(port), requestID: String(i) });
      const dat = session.open({ streamType: 'data', port: String(port), requestID: String(i) });
      channelOf.set(dat.id, 2 * i);
      dataIds.add(dat.id);
      channelOf.set(err.id, 2 * i + 1);
      data.push(dat);
      const portBytes = Buffer.from([port & 0xff, port >> 8]);
      ws.send(Buffer.concat([Buffer.from([2 * i]), portBytes]));
      ws.send(Buffer.concat([Buffer.from([2 * i + 1]), portBytes]));
    });
    ws.on('message', (raw: RawData) => {
      const m = toBuffer(raw);
      if (m.length > 1 && m[0]! % 2 === 0) data[m[0]! / 2]?.write(m.subarray(1));
    });
  });
}
