import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';

import { closer } from './server-close.js';

test('closing a server ends its upgraded connections too', async () => {
  const server = http.createServer();
  const upgraded = new Promise<void>((r) =>
    server.on('upgrade', (_req, socket: net.Socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
      r();
    }),
  );
  const close = closer(server);

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  const client = net.connect(port, '127.0.0.1');
  client.resume();
  const clientClosed = new Promise<void>((r) => client.on('close', () => r()));
  client.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
  await upgraded;
  await close();
  await clientClosed;
  assert.equal(server.listening, false);
});
