// pods/log asked for over a WebSocket, as kube-apiserver's stream writer
// answers it: every chunk of the log is one message, binary under
// binary.k8s.io (or no subprotocol), base64 text under base64.binary.k8s.io;
// the end of the log closes the socket normally.
import type { IncomingMessage } from 'node:http';
import type { Duplex, Readable } from 'node:stream';

import { type WebSocket, WebSocketServer } from 'ws';

export const BINARY = 'binary.k8s.io';
export const BASE64 = 'base64.binary.k8s.io';

/** The subprotocol to answer with: undefined when the client offered some and none is ours. */
export function logProtocol(offered: string | undefined): string | undefined {
  const list = String(offered ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.length) return '';
  return [BINARY, BASE64].find((p) => list.includes(p));
}

/** One log chunk as the message a client of `protocol` reads. */
export function logMessage(protocol: string, chunk: Buffer): Buffer | string {
  return protocol === BASE64 ? chunk.toString('base64') : chunk;
}

const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  handleProtocols: (offered) => [BINARY, BASE64].find((p) => offered.has(p)) ?? false,
});

/** Completes the client's upgrade and sends `log` over it; the client going away stops reading it. */
export function streamLogOverWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, log: Readable): void {
  const protocol = logProtocol(req.headers['sec-websocket-protocol']) ?? '';
  wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
    log.on('data', (b: Buffer) => {
      if (ws.readyState === ws.OPEN) ws.send(logMessage(protocol, b), { binary: protocol !== BASE64 });
    });
    log.on('end', () => ws.readyState === ws.OPEN && ws.close(1000));
    log.on('error', () => ws.terminate());
    ws.on('close', () => log.destroy());
    ws.on('error', () => log.destroy());
  });
}
