// Static pod validation: the manifest's structure first, then the same pod-spec rules the apiserver applies.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { validatePod } from './validate.js';

const pod = (spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
});

test('a good static pod passes', () => {
  assert.deepEqual(
    validatePod(
      pod({
        initContainers: [
          { name: 'sc', image: 'i', restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } },
        ],
        dnsPolicy: 'None',
        dnsConfig: { nameservers: ['10.96.0.10'] },
      }),
    ),
    [],
  );
});

test('what the apiserver refuses in a pod spec is refused in a static pod with its words: requests over limits, a bad dnsConfig, init restartPolicy, probe handlers', () => {
  assert.deepEqual(
    validatePod(
      pod({ containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }] }),
    ),
    ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
  );
  assert.deepEqual(validatePod(pod({ dnsPolicy: 'None' })), [
    'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None',
  ]);
  assert.deepEqual(validatePod(pod({ initContainers: [{ name: 'i', image: 'i', restartPolicy: 'Sometimes' }] })), [
    'spec.initContainers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
  ]);
  // Structural problems are reported first, alone: the deeper rules assume a well-formed spec.
  assert.deepEqual(validatePod(pod({ containers: 5 })), ['spec.containers: Invalid type: expected array, got number']);
});
