import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Container } from 'kubernetes-types/core/v1.js';

import { podQos, qosClass } from './pod-qos.js';

const c = (resources: Container['resources'] = {}): Container => ({ name: 'c', image: 'i', resources });

test("qosClass: each container's class, Burstable when one is or two differ (upstream v1.37 ComputePodQOS)", () => {
  assert.equal(qosClass({ containers: [c()] }), 'BestEffort');
  assert.equal(
    qosClass({ containers: [c({ limits: { cpu: '1', memory: '1Gi' } })] }),
    'Guaranteed',
    'requests default to limits',
  );
  assert.equal(qosClass({ containers: [c({ requests: { cpu: '100m' } })] }), 'Burstable');
  assert.equal(
    qosClass({ containers: [c({ limits: { cpu: '1' } })] }),
    'Burstable',
    'cpu Guaranteed, memory BestEffort',
  );
  assert.equal(qosClass({ containers: [c({ limits: { cpu: '1', memory: '1Gi' } }), c()] }), 'Burstable');
  assert.equal(
    qosClass({ containers: [c({ requests: { 'ephemeral-storage': '1Gi' } })] }),
    'BestEffort',
    'only cpu and memory count',
  );
  assert.equal(
    qosClass({
      initContainers: [c({ requests: { cpu: '1' }, limits: { cpu: '2' } })],
      containers: [c({ limits: { cpu: '1', memory: '1Gi' } })],
    }),
    'Burstable',
  );
});

test('qosClass: pod-level resources, when they set cpu or memory, decide alone', () => {
  const spec = (resources: object) => ({ resources, containers: [c()] });
  assert.equal(
    qosClass(spec({ requests: { cpu: '20m', memory: '35Mi' }, limits: { cpu: '20m', memory: '35Mi' } })),
    'Guaranteed',
  );
  assert.equal(qosClass(spec({ requests: { cpu: '20m' } })), 'Burstable');
  assert.equal(qosClass(spec({})), 'BestEffort', 'empty pod-level resources: the containers decide');
});

test('podQos: the class the apiserver stored wins over a computed one', () => {
  assert.equal(podQos({ spec: { containers: [c()] }, status: { qosClass: 'Burstable' } }), 'Burstable');
  assert.equal(podQos({ spec: { containers: [c()] }, status: {} }), 'BestEffort');
});
