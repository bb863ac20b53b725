// The DNS listeners: one UDP socket and one TCP server on the same address.
// TCP carries length-prefixed messages (RFC 1035 4.2.2), several per
// connection, answered in order; idle connections close after 10 s, as CoreDNS.
import dgram from 'node:dgram';
import net from 'node:net';

import type { Logger } from '../kube/log.js';
import type { QueryHandler } from './handler.js';
import { errorResponse } from './message.js';

const TCP_IDLE_MS = 10_000;

export interface DnsListening {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** REFUSED for a message that has a DNS header at all. */
const refused = (msg: Buffer): Buffer | undefined =>
  msg.length >= 12 && !(msg[2]! & 0x80) ? errorResponse(msg.readUInt16BE(0), 'REFUSED') : undefined;

export function splitHostPort(bind: string, flag: string): { host: string; port: number } {
  const i = bind.lastIndexOf(':');
  const port = Number(bind.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--${flag}: want host:port, got "${bind}"`);
  const host = bind.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
  if (!net.isIP(host)) throw new Error(`--${flag}: "${host}" is not an IP address`);
  return { host, port };
}

/** `allows` says whether a client address is answered; others get REFUSED. */
export async function serveDns(
  handler: QueryHandler,
  bind: string,
  log: Logger,
  allows: (address: string) => boolean = () => true,
): Promise<DnsListening> {
  const { host, port } = splitHostPort(bind, 'dns-address');
  const family = net.isIPv6(host) ? 6 : 4;
  const conns = new Set<net.Socket>();
  const tcp = net.createServer((conn) => {
    conns.add(conn);
    const allowed = allows(conn.remoteAddress ?? '');
    conn.on('close', () => conns.delete(conn));
    conn.setTimeout(TCP_IDLE_MS, () => conn.destroy());
    conn.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let chain = Promise.resolve();
    conn.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        chain = chain.then(async () => {
          const out = allowed
            ? await handler
                .handle(msg, 'tcp', family)
                .catch((e: Error) => (log.error(`dns: tcp query: ${e.message}`), undefined))
            : refused(msg);
          if (!out) return void conn.destroy();
          const len = Buffer.alloc(2);
          len.writeUInt16BE(out.length);
          if (!conn.destroyed) conn.write(Buffer.concat([len, out]));
        });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, host, () => resolve());
  });
  const boundPort = (tcp.address() as net.AddressInfo).port;
  const udp = dgram.createSocket({ type: family === 6 ? 'udp6' : 'udp4' });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(boundPort, host, () => resolve());
  }).catch((e: Error) => {
    tcp.close();
    throw e;
  });
  udp.on('error', (e) => log.error(`dns: udp socket: ${e.message}`));
  udp.on('message', (msg, rinfo) => {
    if (!allows(rinfo.address)) {
      const out = refused(msg);
      if (out) udp.send(out, rinfo.port, rinfo.address);
      return;
    }
    handler.handle(msg, 'udp', family).then(
      (out) => {
        if (out) udp.send(out, rinfo.port, rinfo.address);
      },
      (e: Error) => log.error(`dns: udp query from ${rinfo.address}: ${e.message}`),
    );
  });
  return {
    host,
    port: boundPort,
    close: () =>
      new Promise<void>((resolve) => {
        udp.close();
        tcp.close(() => resolve());
        // Open TCP connections would hold close() until their idle timeout.
        for (const c of conns) c.destroy();
      }),
  };
}
