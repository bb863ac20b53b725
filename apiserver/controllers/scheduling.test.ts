import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  effectiveTaints,
  fitErrorMessage,
  leastAllocatedScore,
  pickPreemptionNode,
  podRequest,
  tolerates,
  unfit,
  victimsOn,
} from './scheduling.js';

const node = (
  name: string,
  o: {
    cpu?: string;
    memory?: string;
    pods?: string;
    labels?: Record<string, string>;
    taints?: object[];
    ready?: string;
    unschedulable?: boolean;
  } = {},
) => ({
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(o.labels ?? {}) } },
  spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.unschedulable ? { unschedulable: true } : {}) },
  status: {
    allocatable: { cpu: o.cpu ?? '2', memory: o.memory ?? '4Gi', pods: o.pods ?? '110' },
    conditions: [{ type: 'Ready', status: o.ready ?? 'True' }],
  },
});
const pod = (spec: Record<string, unknown> = {}, req?: { cpu?: string; memory?: string }) => ({
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'i', ...(req ? { resources: { requests: req } } : {}) }], ...spec },
});

test('requests: containers summed, init containers as a max, limits stand in for missing requests', () => {
  const p = {
    spec: {
      initContainers: [{ resources: { requests: { cpu: '1500m' } } }],
      containers: [
        { resources: { requests: { cpu: '500m', memory: '1Gi' } } },
        { resources: { limits: { cpu: '250m' } } },
      ],
    },
  };
  assert.deepEqual(podRequest(p), { milliCpu: 1500, memory: 2 ** 30 });
  assert.deepEqual(podRequest({ spec: { containers: [{}] } }), { milliCpu: 0, memory: 0 });
  assert.deepEqual(
    podRequest({ spec: { containers: [{}] } }, true),
    { milliCpu: 100, memory: 200 * 2 ** 20 },
    'non-zero defaults for scoring',
  );
});

test('filters: resources, pod count, selectors and affinity, taints and tolerations, readiness, cordon, host ports', () => {
  const used = [pod({}, { cpu: '1500m', memory: '1Gi' })];
  assert.deepEqual(unfit(pod({}, { cpu: '1' }), node('a'), used), ['Insufficient cpu']);
  assert.deepEqual(unfit(pod({}, { cpu: '500m', memory: '3Gi' }), node('a'), used), []);
  assert.deepEqual(unfit(pod({}, { cpu: '500m', memory: '4Gi' }), node('a'), used), ['Insufficient memory']);
  assert.deepEqual(unfit(pod(), node('a', { pods: '1' }), used), ['Too many pods']);
  assert.deepEqual(unfit(pod({ nodeSelector: { disk: 'ssd' } }), node('a'), []), [
    "node(s) didn't match Pod's node affinity/selector",
  ]);
  assert.deepEqual(unfit(pod({ nodeSelector: { disk: 'ssd' } }), node('a', { labels: { disk: 'ssd' } }), []), []);
  const aff = (op: string, values: string[]) =>
    pod({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'zone', operator: op, values }] },
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['b'] }] },
            ],
          },
        },
      },
    });
  assert.deepEqual(unfit(aff('In', ['z1']), node('a', { labels: { zone: 'z1' } }), []), []);
  assert.equal(unfit(aff('NotIn', ['z1']), node('a', { labels: { zone: 'z1' } }), []).length, 1);
  assert.deepEqual(unfit(aff('In', ['z9']), node('b'), []), [], 'matchFields on metadata.name');
  const tainted = node('a', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
  assert.deepEqual(unfit(pod(), tainted, []), ['node(s) had untolerated taint {dedicated: gpu}']);
  assert.deepEqual(
    unfit(
      pod({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }),
      tainted,
      [],
    ),
    [],
  );
  assert.deepEqual(unfit(pod({ tolerations: [{ operator: 'Exists' }] }), tainted, []), []);
  assert.deepEqual(
    unfit(pod(), node('a', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }), []),
    [],
    'PreferNoSchedule does not filter',
  );
  assert.deepEqual(unfit(pod(), node('a', { ready: 'False' }), []), [
    'node(s) had untolerated taint {node.kubernetes.io/not-ready: }',
  ]);
  assert.deepEqual(unfit(pod(), node('a', { ready: 'Unknown' }), []), [
    'node(s) had untolerated taint {node.kubernetes.io/unreachable: }',
  ]);
  assert.deepEqual(unfit(pod(), node('a', { unschedulable: true }), []), ['node(s) were unschedulable']);
  const hp = pod({ containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }] }] });
  assert.deepEqual(unfit(hp, node('a'), [hp]), ["node(s) didn't have free ports for the requested pod ports"]);
  assert.equal(effectiveTaints(node('a')).length, 0);
  assert.ok(
    tolerates(
      [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' },
    ),
  );
  assert.equal(
    tolerates([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }], {
      key: 'node.kubernetes.io/unreachable',
      effect: 'NoSchedule',
    }),
    undefined,
  );
});

test('least requested scoring prefers the emptier node; the FitError message is upstream-shaped', () => {
  const busy = [pod({}, { cpu: '1', memory: '2Gi' })];
  assert.ok(leastAllocatedScore(pod(), node('a'), []) > leastAllocatedScore(pod(), node('a'), busy));
  assert.equal(leastAllocatedScore(pod({}, { cpu: '2', memory: '4Gi' }), node('a'), []), 0);
  assert.equal(fitErrorMessage(0, []), 'no nodes available to schedule pods');
  assert.equal(
    fitErrorMessage(3, [
      ['Insufficient cpu'],
      ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }'],
      ['Insufficient cpu', 'Insufficient memory'],
    ]),
    '0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
  );
});

test('preemption: the fewest, least important lower-priority victims that make room, and the node where they matter least', () => {
  const n = node('a', { cpu: '1' });
  const low = (name: string, cpu: string, priority: number, start = '2026-01-01T00:00:00Z') => ({
    metadata: { name, namespace: 'default', creationTimestamp: start },
    spec: { priority, containers: [{ name: 'c', image: 'i', resources: { requests: { cpu } } }] },
  });
  const high = { ...pod({ priority: 1000 }, { cpu: '600m' }) };
  const victims = victimsOn(high, n, [low('small', '300m', 10), low('big', '500m', 0), low('peer', '100m', 1000)]);
  assert.deepEqual(
    victims?.map((p) => p.metadata.name),
    ['big'],
    'the higher of the lower-priority pods is reprieved when it can be',
  );
  assert.equal(victimsOn(high, n, [low('peer', '900m', 1000)]), undefined, 'equal priority is never a victim');
  assert.equal(
    victimsOn(high, node('t', { cpu: '1', taints: [{ key: 'x', effect: 'NoSchedule' }] }), [low('l', '900m', 0)]),
    undefined,
    'evictions cannot cure a taint',
  );
  const pick = pickPreemptionNode([
    { node: 'a', victims: [low('a1', '1', 500)] },
    { node: 'b', victims: [low('b1', '1', 100), low('b2', '1', 100)] },
    { node: 'c', victims: [low('c1', '1', 100)] },
  ]);
  assert.equal(pick?.node, 'c', 'lowest highest-victim priority, then fewer victims');
});
