import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { needsImageUser, verifyRunAsNonRoot } from './non-root.js';

const pod = (podSc: object, cSc: object): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
  spec: { securityContext: podSc, containers: [{ name: 'c', image: 'i', securityContext: cSc }] },
});
const c = (p: Pod) => p.spec!.containers[0]!;

test('runAsNonRoot as upstream verifyRunAsNonRoot: runAsUser decides first, then the image user; none means root', () => {
  const off = pod({}, {});
  assert.equal(needsImageUser(off, c(off)), false);
  assert.equal(verifyRunAsNonRoot(off, c(off), {}), undefined);
  const root = pod({ runAsNonRoot: true }, { runAsUser: 0 });
  assert.equal(
    verifyRunAsNonRoot(root, c(root)),
    `container's runAsUser breaks non-root policy (pod: "p_ns(u1)", container: c)`,
  );
  const user = pod({ runAsNonRoot: true, runAsUser: 1000 }, {});
  assert.equal(needsImageUser(user, c(user)), false);
  assert.equal(verifyRunAsNonRoot(user, c(user)), undefined);
  const img = pod({}, { runAsNonRoot: true });
  assert.equal(needsImageUser(img, c(img)), true);
  assert.equal(
    verifyRunAsNonRoot(img, c(img), {}),
    `container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)`,
  );
  assert.equal(
    verifyRunAsNonRoot(img, c(img), { uid: '0' }),
    `container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)`,
  );
  assert.equal(verifyRunAsNonRoot(img, c(img), { uid: '65534' }), undefined);
  assert.equal(
    verifyRunAsNonRoot(img, c(img), { username: 'app' }),
    `container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root (pod: "p_ns(u1)", container: c)`,
  );
  // The container's setting wins over the pod's.
  const allowed = pod({ runAsNonRoot: true }, { runAsNonRoot: false });
  assert.equal(verifyRunAsNonRoot(allowed, c(allowed), {}), undefined);
});
