import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fieldValue } from './downward-api.js';

test("downward API: status.hostIPs and status.podIPs join a dual-stack node's and pod's addresses with commas, as upstream; one address without a pair", () => {
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u' }, spec: { containers: [] } };
  assert.equal(
    fieldValue(pod, 'status.hostIPs', {
      podIP: '10.244.0.5',
      hostIP: '192.0.2.1',
      hostIPs: ['192.0.2.1', 'fd00:192::1'],
    }),
    '192.0.2.1,fd00:192::1',
  );
  assert.equal(fieldValue(pod, 'status.hostIPs', { podIP: '10.244.0.5', hostIP: '192.0.2.1' }), '192.0.2.1');
  assert.equal(
    fieldValue(pod, 'status.podIPs', {
      podIP: '10.244.0.5',
      podIPs: ['10.244.0.5', 'fd00:10:244::5'],
      hostIP: '192.0.2.1',
    }),
    '10.244.0.5,fd00:10:244::5',
  );
  assert.equal(fieldValue(pod, 'status.podIPs', { podIP: '10.244.0.5', hostIP: '192.0.2.1' }), '10.244.0.5');
  assert.equal(
    fieldValue(pod, 'status.hostIP', {
      podIP: '10.244.0.5',
      hostIP: '192.0.2.1',
      hostIPs: ['192.0.2.1', 'fd00:192::1'],
    }),
    '192.0.2.1',
  );
});
