import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import {
  podRequests,
  resizableResources,
  resizeFit,
  sameResources,
  statusResources,
  withAllocation,
} from './resize.js';
import type { ContainerInfo } from './runtime-state.js';

test('resizeFit: over the node is Infeasible, over what is free beside the other pods is Deferred (upstream messages)', () => {
  const node = { cpu: 4000, memory: 8 * 2 ** 30 };
  assert.deepEqual(resizeFit({ cpu: 5000, memory: 0 }, { cpu: 0, memory: 0 }, node), {
    reason: 'Infeasible',
    message: "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000",
  });
  assert.deepEqual(resizeFit({ cpu: 100, memory: 9 * 2 ** 30 }, { cpu: 0, memory: 0 }, node)?.reason, 'Infeasible');
  assert.deepEqual(resizeFit({ cpu: 2000, memory: 0 }, { cpu: 3000, memory: 0 }, node), {
    reason: 'Deferred',
    message: "Node didn't have enough resource: cpu, requested: 2000, used: 3000, capacity: 4000",
  });
  assert.equal(resizeFit({ cpu: 1000, memory: 2 ** 30 }, { cpu: 3000, memory: 0 }, node), undefined);
});

test('podRequests: containers and sidecars add up, a regular init container counts when it alone is larger, overhead is added', () => {
  const pod: Pod = {
    spec: {
      overhead: { cpu: '10m' },
      initContainers: [
        { name: 'side', image: 'i', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '10Mi' } } },
        { name: 'big', image: 'i', resources: { requests: { cpu: '2', memory: '1Mi' } } },
      ],
      containers: [
        { name: 'a', image: 'i', resources: { requests: { cpu: '250m', memory: '64Mi' } } },
        { name: 'b', image: 'i' },
      ],
    },
  };
  assert.deepEqual(podRequests(pod), { cpu: 2110, memory: 74 * 2 ** 20 });
});

test('allocation: the pod runs with the allocated resources until a resize is admitted; status reports what the runtime holds', () => {
  const pod: Pod = {
    spec: {
      containers: [
        { name: 'a', image: 'i', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m', memory: '64Mi' } } },
      ],
    },
  };
  const alloc = resizableResources(pod);
  const resized: Pod = {
    spec: {
      containers: [
        { name: 'a', image: 'i', resources: { requests: { cpu: '100m' }, limits: { cpu: '400m', memory: '64Mi' } } },
      ],
    },
  };
  assert.equal(sameResources(resizableResources(resized), alloc), false);
  assert.deepEqual(withAllocation(resized, alloc).spec!.containers[0]!.resources, pod.spec!.containers[0]!.resources);
  const running = {
    state: 'running',
    resources: { cpuShares: 102, cpuQuota: 30000, cpuPeriod: 100000, memoryLimit: 64 * 2 ** 20 },
  } as ContainerInfo;
  assert.deepEqual(
    statusResources(resized.spec!.containers[0]!, running),
    { limits: { cpu: '300m', memory: '64Mi' }, requests: { cpu: '100m' } },
    'the cpu limit the runtime still holds',
  );
  assert.deepEqual(
    statusResources(resized.spec!.containers[0]!, { ...running, state: 'exited' }),
    { limits: { cpu: '400m', memory: '64Mi' }, requests: { cpu: '100m' } },
    'allocated for a container not running',
  );
  assert.deepEqual(statusResources({ name: 'b', image: 'i' }, running), {}, 'BestEffort: empty');
});
