import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseNodeIPs } from './node-ips.js';

test("--node-ip: one address or a dual-stack pair (primary first), with upstream's errors", () => {
  assert.deepEqual(parseNodeIPs(''), []);
  assert.deepEqual(parseNodeIPs('192.0.2.1'), ['192.0.2.1']);
  assert.deepEqual(parseNodeIPs('192.0.2.1, fd00:0:0::0001'), ['192.0.2.1', 'fd00::1']);
  assert.deepEqual(parseNodeIPs('fd00::1,192.0.2.1'), ['fd00::1', '192.0.2.1']);
  assert.throws(
    () => parseNodeIPs('192.0.2.1,192.0.2.2'),
    /^Error: bad --node-ip "192.0.2.1,192.0.2.2"; must contain either a single IP or a dual-stack pair of IPs$/,
  );
  assert.throws(
    () => parseNodeIPs('192.0.2.1,fd00::1,fd00::2'),
    /must contain either a single IP or a dual-stack pair/,
  );
  assert.throws(() => parseNodeIPs('192.0.2.300'), /bad --node-ip "192.0.2.300"; could not parse "192.0.2.300"/);
  assert.throws(
    () => parseNodeIPs('0.0.0.0,fd00::1'),
    /dual-stack --node-ip "0.0.0.0,fd00::1" cannot include '0.0.0.0' or '::'/,
  );
});
