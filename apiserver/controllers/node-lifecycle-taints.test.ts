import assert from 'node:assert/strict';
import { test } from 'node:test';

import { desiredTaints } from './node-lifecycle.js';

const condition = (type: string, status: string) => ({ type, status });

test('pressure conditions a kubelet posts become their NoSchedule taints; none without pressure', () => {
  const node = (conditions: { type: string; status: string }[]) => ({
    metadata: { name: 'n' },
    spec: {},
    status: { conditions },
  });
  const healthy = [
    condition('MemoryPressure', 'False'),
    condition('DiskPressure', 'False'),
    condition('PIDPressure', 'False'),
    condition('Ready', 'True'),
  ];
  assert.deepEqual(desiredTaints(node(healthy), 'now'), []);
  const disk = healthy.map((c) => (c.type === 'DiskPressure' ? condition('DiskPressure', 'True') : c));
  assert.deepEqual(desiredTaints(node(disk), 'now'), [
    { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' },
  ]);
});
