import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BASE64, BINARY, logMessage, logProtocol } from './log-websocket.js';

test('a log WebSocket answers binary.k8s.io, base64.binary.k8s.io or no subprotocol, and refuses others', () => {
  assert.equal(logProtocol(undefined), '');
  assert.equal(logProtocol(''), '');
  assert.equal(logProtocol('binary.k8s.io'), BINARY);
  assert.equal(logProtocol('v4.channel.k8s.io, base64.binary.k8s.io'), BASE64);
  assert.equal(logProtocol('channel.k8s.io'), undefined);
});

test('log chunks travel as they are, or base64 under base64.binary.k8s.io', () => {
  const chunk = Buffer.from('container is alive\n');
  assert.equal(logMessage(BINARY, chunk), chunk);
  assert.equal(logMessage('', chunk), chunk);
  assert.equal(logMessage(BASE64, chunk), 'Y29udGFpbmVyIGlzIGFsaXZlCg==');
});
