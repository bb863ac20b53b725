import assert from 'node:assert/strict';
import { test } from 'node:test';

import { admitPodOs } from './os-admission.js';

test("a pod for another OS (spec.os, or the kubernetes.io/os label) is rejected with upstream's reasons", () => {
  const c = [{ name: 'c', image: 'i' }];
  assert.equal(admitPodOs({ spec: { containers: c } }), undefined);
  assert.equal(admitPodOs({ spec: { os: { name: 'linux' }, containers: c } }), undefined);
  assert.deepEqual(admitPodOs({ spec: { os: { name: 'windows' }, containers: c } }), {
    reason: 'PodOSNotSupported',
    message: "Failed to admit pod as the OS field doesn't match node OS",
  });
  assert.equal(
    admitPodOs({ metadata: { labels: { 'kubernetes.io/os': 'windows' } }, spec: { containers: c } })?.reason,
    'PodOSSelectorNodeLabelDoesNotMatch',
  );
});
