// e2e helper: one WebSocket exec against a kubelet (remotecommand v4.channel.k8s.io).
// Prints the HTTP status line, then the stdout channel's bytes. Usage: ws-exec.mjs <url> <token>
import { randomBytes } from 'node:crypto';
import tls from 'node:tls';

const [url, token] = process.argv.slice(2);
const u = new URL(url);
const sock = tls.connect({ host: u.hostname, port: Number(u.port), rejectUnauthorized: false }, () => {
  sock.write(
    [
      `GET ${u.pathname}${u.search} HTTP/1.1`,
      `Host: ${u.host}`,
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Sec-WebSocket-Version: 13',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Protocol: v4.channel.k8s.io',
      `Authorization: Bearer ${token}`,
      '',
      '',
    ].join('\r\n'),
  );
});
let buf = Buffer.alloc(0);
let status = '';
let stdout = '';
sock.on('data', (b) => {
  buf = Buffer.concat([buf, b]);
  if (!status) {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    status = buf.subarray(0, buf.indexOf('\r\n')).toString();
    buf = buf.subarray(end + 4);
  }
  // Server frames are unmasked: FIN/opcode, length (7, 16 or 64 bit), payload; payload byte 0 is the channel.
  while (buf.length >= 2) {
    let len = buf[1] & 0x7f;
    let off = 2;
    if (len === 126) [len, off] = [buf.readUInt16BE(2), 4];
    else if (len === 127) [len, off] = [Number(buf.readBigUInt64BE(2)), 10];
    if (buf.length < off + len) return;
    const payload = buf.subarray(off, off + len);
    const opcode = buf[0] & 0x0f;
    if ((opcode === 1 || opcode === 2) && payload[0] === 1) stdout += payload.subarray(1).toString();
    buf = buf.subarray(off + len);
  }
});
const done = () => {
  process.stdout.write(`${status}\n${stdout}`);
  process.exit(0);
};
sock.on('close', done);
sock.on('error', done);
setTimeout(done, 8000);
