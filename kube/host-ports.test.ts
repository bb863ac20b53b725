import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { hostPortConflict } from './host-ports.js';

const pod = (...ports: { hostPort?: number; hostIP?: string; protocol?: string }[]): Pod => ({
  spec: { containers: [{ name: 'c', image: 'i', ports: ports.map((p) => ({ containerPort: 80, ...p })) }] },
});

test('a host port another pod holds conflicts for the same protocol and an overlapping address', () => {
  const holder = pod({ hostPort: 21017 });
  assert.equal(hostPortConflict(pod({ hostPort: 21017 }), [holder]), true);
  assert.equal(hostPortConflict(pod({ hostPort: 21017, protocol: 'UDP' }), [holder]), false);
  assert.equal(hostPortConflict(pod({ hostPort: 21018 }), [holder]), false);
  assert.equal(hostPortConflict(pod({}), [holder]), false, 'no host port: nothing to conflict');
  const onIp = pod({ hostPort: 8080, hostIP: '10.0.0.1' });
  assert.equal(hostPortConflict(pod({ hostPort: 8080, hostIP: '10.0.0.2' }), [onIp]), false);
  assert.equal(hostPortConflict(pod({ hostPort: 8080 }), [onIp]), true, '0.0.0.0 overlaps every address');
});
