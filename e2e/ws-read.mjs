// e2e helper: one WebSocket read, as upstream's e2e tests open them (exec under channel.k8s.io and friends, logs under
// binary.k8s.io). Prints the HTTP status, then what the stdout channel (channel protocols) or every message (binary
// protocols) carried. Usage: ws-read.mjs <url> <token> <subprotocol>
import WebSocket from 'ws';

const [url, token, protocol] = process.argv.slice(2);
const channels = protocol.includes('channel.k8s.io');
const base64 = protocol === 'base64.binary.k8s.io';
let status = '';
let out = '';
const ws = new WebSocket(url, [protocol], {
  headers: { Authorization: `Bearer ${token}` },
  rejectUnauthorized: false,
  perMessageDeflate: false,
});
ws.on('upgrade', (res) => (status = `${res.statusCode} ${res.headers['sec-websocket-protocol'] ?? ''}`));
ws.on('unexpected-response', (_req, res) => {
  let body = '';
  res.on('data', (b) => (body += b));
  res.on('end', () => {
    process.stdout.write(`${res.statusCode} ${body}\n`);
    process.exit(0);
  });
});
ws.on('message', (data) => {
  let b = Buffer.from(data);
  if (base64) b = Buffer.from(b.toString(), 'base64');
  if (!channels) out += b.toString();
  else if (b[0] === 1) out += b.subarray(1).toString();
});
ws.on('close', (code) => {
  process.stdout.write(`${status} close=${code}\n${out}`);
  process.exit(0);
});
ws.on('error', (e) => {
  process.stdout.write(`${status} error=${e.message}\n${out}`);
  process.exit(0);
});
setTimeout(() => {
  process.stdout.write(`${status} timeout\n${out}`);
  process.exit(0);
}, 10_000);
