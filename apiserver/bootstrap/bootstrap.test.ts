// Bootstrap tokens: authentication rules, upstream's JWS
// vectors, cluster-info signatures, the token controllers, `tskube token`.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { signedClusterInfo } from '../controllers/bootstrap-tokens.js';
import { authenticate, detachedSignature, newTokenSecret } from './tokens.js';

const CONTENT = 'Hello from the other side. I must have called a thousand times.';

test("the detached JWS matches upstream's vectors (k8s.io/cluster-bootstrap token/jws)", () => {
  assert.equal(
    detachedSignature(CONTENT, 'joshua', 'my voice is my passcode'),
    'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8',
  );
  assert.equal(
    detachedSignature('', 'joshua', 'my voice is my passcode'),
    'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk',
  );
  assert.equal(
    detachedSignature(CONTENT, 'joshua', ''),
    'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8',
  );
});

test('token authentication: system:bootstrap:<id> with its groups; wrong, expired, unusable or malformed tokens are refused', () => {
  const now = Date.parse('2026-12-03T00:00:00Z');
  const { token, secret } = newTokenSecret({
    token: 'abcdef.0123456789abcdef',
    ttlSeconds: 3600,
    now,
    groups: ['system:bootstrappers:kubeadm:default-node-token', 'system:bootstrappers:extra'],
  });
  const store = new Map<string, KObj>([[String((secret.metadata as KObj).name), secret as KObj]]);
  const lookup = (n: string) => store.get(n);
  assert.deepEqual(authenticate(token, lookup, now), {
    user: {
      name: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token', 'system:bootstrappers:extra'],
    },
  });
  assert.deepEqual(authenticate('abcdef.0123456789abcdee', lookup, now), { reason: 'token secret does not match' });
  assert.deepEqual(authenticate(token, lookup, now + 3600_000), { reason: 'token has expired' });
  assert.deepEqual(authenticate('zzzzzz.0123456789abcdef', lookup, now), {
    reason: 'secret kube-system/bootstrap-token-zzzzzz not found',
  });
  assert.equal(authenticate('not-a-bootstrap-token', lookup, now), undefined);
  const noAuth = {
    ...secret,
    data: {
      ...(secret.data as Record<string, string>),
      'usage-bootstrap-authentication': Buffer.from('false').toString('base64'),
    },
  } as KObj;
  assert.deepEqual(
    authenticate(token, () => noAuth, now),
    { reason: 'token not marked for authentication' },
  );
  const badGroup = {
    ...secret,
    data: {
      ...(secret.data as Record<string, string>),
      'auth-extra-groups': Buffer.from('system:masters').toString('base64'),
    },
  } as KObj;
  assert.deepEqual(
    authenticate(token, () => badGroup, now),
    { reason: 'token has invalid auth-extra-groups' },
  );
  assert.deepEqual(
    authenticate(token, () => ({ ...secret, type: 'Opaque' }) as KObj, now),
    { reason: 'secret has wrong type "Opaque"' },
  );
});

test('cluster-info signatures: one per signing, unexpired token; stale ones go', () => {
  const now = Date.parse('2026-12-03T00:00:00Z');
  const a = newTokenSecret({ token: 'aaaaaa.0123456789abcdef', now }).secret as KObj;
  const expiredTok = newTokenSecret({ token: 'bbbbbb.0123456789abcdef', ttlSeconds: 1, now: now - 10_000 })
    .secret as KObj;
  const data = signedClusterInfo({ kubeconfig: CONTENT, 'jws-kubeconfig-gone00': 'x' }, [a, expiredTok], now);
  assert.deepEqual(data, {
    kubeconfig: CONTENT,
    'jws-kubeconfig-aaaaaa': detachedSignature(CONTENT, 'aaaaaa', '0123456789abcdef'),
  });
});
