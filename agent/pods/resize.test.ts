import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { linuxResources } from './cri-config.js';
import {
  isDecrease,
  isPodMemoryDecrease,
  POD_LEVEL,
  podMemoryDecreaseError,
  podRequests,
  resizableResources,
  resizeChanges,
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
  // 1m/5m and 2m/10m give the cgroup the same 2 shares and 1 ms quota: the allocated values show.
  const tiny = {
    state: 'running',
    resources: { cpuShares: 2, cpuQuota: 1000, cpuPeriod: 100000, memoryLimit: 0 },
  } as ContainerInfo;
  assert.deepEqual(
    statusResources({ name: 'c', image: 'i', resources: { requests: { cpu: '1m' }, limits: { cpu: '5m' } } }, tiny),
    { limits: { cpu: '5m' }, requests: { cpu: '1m' } },
  );
  assert.deepEqual(
    statusResources({ name: 'c', image: 'i', resources: { requests: { cpu: '20m' }, limits: { cpu: '50m' } } }, tiny),
    { limits: { cpu: '10m' }, requests: { cpu: '2m' } },
    'the runtime still holds less than asked',
  );
});

test('pod-level resources: containers without their own limits take the pod-level ones; they are allocated and resized', () => {
  const podResources = { requests: { cpu: '40m', memory: '100Mi' }, limits: { cpu: '80m', memory: '200Mi' } };
  const own = { name: 'own', image: 'i', resources: { requests: { cpu: '10m' }, limits: { cpu: '20m' } } };
  const bare = { name: 'bare', image: 'i' };
  assert.deepEqual(linuxResources(bare, podResources), {
    cpu_shares: String(Math.floor((80 * 1024) / 1000)),
    cpu_quota: '8000',
    cpu_period: '100000',
    memory_limit_in_bytes: String(200 * 2 ** 20),
  });
  assert.deepEqual(linuxResources(own, podResources), {
    cpu_shares: String(Math.floor((10 * 1024) / 1000)),
    cpu_quota: '2000',
    cpu_period: '100000',
    memory_limit_in_bytes: String(200 * 2 ** 20),
  });
  assert.equal(linuxResources(bare).cpu_quota, '0', 'no pod-level limits: unlimited');
  // A change of the pod-level limit alone is a resize of the container that inherits it.
  const running = { cpuShares: 81, cpuQuota: 8000, cpuPeriod: 100000, memoryLimit: 200 * 2 ** 20 };
  assert.deepEqual(resizeChanges(bare, running, podResources), []);
  assert.deepEqual(resizeChanges(bare, running, { ...podResources, limits: { cpu: '90m', memory: '150Mi' } }), [
    'cpu',
    'memory',
  ]);
  assert.equal(isDecrease(bare, running, { ...podResources, limits: { memory: '150Mi' } }), true);

  const pod = { spec: { resources: podResources, containers: [bare], initContainers: [own] } } as Pod;
  assert.deepEqual(podRequests(pod), { cpu: 40, memory: 100 * 2 ** 20 }, 'pod-level requests are the pod’s');
  const alloc = resizableResources(pod);
  assert.deepEqual([...alloc.keys()], ['own', 'bare', POD_LEVEL], 'init containers and the pod level are resizable');
  const resized = { spec: { ...pod.spec, resources: { ...podResources, limits: { cpu: '1' } } } } as Pod;
  assert.equal(sameResources(resizableResources(resized), alloc), false);
  const asRunning = withAllocation(resized, alloc).spec as Pod['spec'] & { resources?: unknown };
  assert.deepEqual(asRunning.resources, podResources, 'not admitted yet: the pod runs with its allocation');
});

test('a pod memory limit lowered to or below what the pod uses is refused with upstream’s message', () => {
  const limit = (memory: string) => ({ limits: { memory } });
  assert.equal(isPodMemoryDecrease(limit('90Mi'), limit('100Mi')), true);
  assert.equal(isPodMemoryDecrease(limit('110Mi'), limit('100Mi')), false);
  assert.equal(isPodMemoryDecrease(limit('90Mi'), undefined), false, 'nothing actuated yet');
  assert.equal(
    podMemoryDecreaseError(limit('10Ki'), 225280),
    'cannot decrease memory limits: attempting to set pod memory limit (10240) below current usage (225280)',
  );
  assert.equal(podMemoryDecreaseError(limit('90Mi'), 225280), undefined);
  assert.equal(podMemoryDecreaseError(limit('10Ki'), undefined), undefined, 'usage unknown: the runtime decides');
});
