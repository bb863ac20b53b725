// Splices an upgraded HTTP connection (SPDY or WebSocket) to a backend: the
// request is replayed on a new connection with its upgrade headers, then
// bytes flow both ways untouched. The apiserver uses it towards kubelets and
// the kubelet towards the runtime's streaming server.
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';

export interface UpgradeTarget {
  /** http: or https: URL of the backend, path and query included. */
  url: URL;
  /** For https: a client certificate, as the apiserver presents to kubelets. */
  cert?: Buffer;
  key?: Buffer;
  /** Called when the backend cannot be reached before any byte came back. */
  onDialError(e: Error): void;
}

/** Request headers not forwarded: the backend gets its own Host, and credentials stay with this hop. */
const DROP = new Set(['host', 'authorization', 'content-length']);

export function spliceUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, t: UpgradeTarget): void {
  const port = Number(t.url.port) || (t.url.protocol === 'https:' ? 443 : 80);
  const host = t.url.hostname.replace(/^\[|\]$/g, '');
  const onConnect = (): void => {
    const lines = [`${req.method ?? 'GET'} ${t.url.pathname}${t.url.search} HTTP/1.1`, `Host: ${t.url.host}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (!DROP.has(req.rawHeaders[i]!.toLowerCase())) lines.push(`${req.rawHeaders[i]!}: ${req.rawHeaders[i + 1]!}`);
    }
    up.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length) up.write(head);
    up.pipe(socket);
    socket.pipe(up);
  };
  const up: net.Socket =
    t.url.protocol === 'https:'
      ? tls.connect(
          {
            host,
            port,
            cert: t.cert,
            key: t.key,
            rejectUnauthorized: false,
            servername: net.isIP(host) ? undefined : host,
          },
          onConnect,
        )
      : net.connect({ host, port }, onConnect);
  const close = (): void => {
    up.destroy();
    socket.destroy();
  };
  up.on('error', (e) => (up.bytesRead ? close() : t.onDialError(e)));
  socket.on('error', close);
  up.on('close', () => socket.destroy());
  socket.on('close', () => up.destroy());
}

/** A plain HTTP answer on a connection that asked to be upgraded. */
export function answerUpgrade(socket: Duplex, code: number, contentType: string, body: string): void {
  const text = STATUS_CODES[code] ?? 'Internal Server Error';
  socket.end(
    `HTTP/1.1 ${code} ${text}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
