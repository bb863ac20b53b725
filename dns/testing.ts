// For tests: one query over UDP to a server on 127.0.0.1, as a client sends it.
import dgram from 'node:dgram';

import type { DecodedPacket, Packet } from 'dns-packet';
import * as packet from 'dns-packet';

export function udpExchange(port: number, p: Packet | Buffer): Promise<{ buf: Buffer; msg: DecodedPacket }> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const t = setTimeout(() => (s.close(), reject(new Error('no answer'))), 5000);
    s.on('message', (buf) => {
      clearTimeout(t);
      s.close();
      resolve({ buf, msg: packet.decode(buf) });
    });
    s.send(Buffer.isBuffer(p) ? p : packet.encode(p), port, '127.0.0.1');
  });
}

/** The rcode dns-packet decodes (its types leave it out). */
export const rcodeOf = (m: DecodedPacket): string => (m as { rcode?: string }).rcode ?? '';
