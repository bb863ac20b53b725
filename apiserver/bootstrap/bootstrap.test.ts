// Bootstrap tokens (issue 14, part): authentication rules, upstream's JWS
// vectors, cluster-info signatures, the token controllers, `tskube token`.
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { test } from 'node:test';

import { caCertHash, runToken } from '../../cli/token.js';
import type { KObj } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { signedClusterInfo } from '../controllers/bootstrap-tokens.js';
import { rawRequest, useTestApiServer } from '../testing.js';
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

const s = useTestApiServer('n1', {
  controllers: ['bootstrapsigner', 'tokencleaner'],
  authorizationModes: ['Node', 'RBAC'],
  anonymousAuth: true,
});

test('tskube token create/list/delete; the token authenticates; cluster-info is signed and readable anonymously; expired tokens are cleaned up', async () => {
  const kubeconfig = s.api.srv.kubeconfigs['kubernetes-admin']!;
  let out = '';
  await runToken(
    ['create', '--kubeconfig', kubeconfig, '--print-join-command', '--description', 'unit'],
    (x) => (out += x),
  );
  const m =
    /^tskube join (https:\/\/\S+) --token ([a-z0-9]{6})\.([a-z0-9]{16}) --discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})\n$/.exec(
      out,
    );
  assert.ok(m, out);
  const ca = loadKubeconfig(kubeconfig).ca!;
  assert.equal(m[4], caCertHash(ca));
  assert.equal(
    `sha256:${execSync('openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | sha256sum', { input: ca }).toString().split(' ')[0]}`,
    m[4],
  );
  const whoami = await rawRequest(s.api, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    headers: { Authorization: `Bearer ${m[2]}.${m[3]}` },
    noClientCert: true,
  });
  assert.equal(JSON.parse(whoami.text).status.userInfo.username, `system:bootstrap:${m[2]}`);
  const wrong = await rawRequest(s.api, 'GET', '/api', {
    headers: { Authorization: `Bearer ${m[2]}.aaaaaaaaaaaaaaaa` },
    noClientCert: true,
  });
  assert.equal(wrong.code, 401);
  // The signer signs cluster-info with the new token; anyone may read it.
  let info: KObj = {};
  for (let i = 0; i < 50 && !info.data?.[`jws-kubeconfig-${m[2]}`]; i++) {
    await new Promise((r) => setTimeout(r, 100));
    info = JSON.parse(
      (await rawRequest(s.api, 'GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info', { noClientCert: true }))
        .text,
    ) as KObj;
  }
  assert.equal(info.data[`jws-kubeconfig-${m[2]}`], detachedSignature(info.data.kubeconfig, m[2]!, m[3]!));
  out = '';
  await runToken(['list', '--kubeconfig', kubeconfig], (x) => (out += x));
  assert.match(
    out,
    new RegExp(
      `^${m[2]}\\.${m[3]}\\s+2[34]h\\s+\\S+\\s+authentication,signing\\s+unit\\s+system:bootstrappers:kubeadm:default-node-token$`,
      'm',
    ),
  );
  out = '';
  await runToken(['delete', m[2]!, '--kubeconfig', kubeconfig], (x) => (out += x));
  assert.equal(out, `bootstrap token "${m[2]}" deleted\n`);
  // An already expired token is deleted by the cleaner.
  const { secret } = newTokenSecret({ token: 'expire.0123456789abcdef', ttlSeconds: 1, now: Date.now() - 5000 });
  await s.api.admin.create('/api/v1/namespaces/kube-system/secrets', secret);
  let gone = false;
  for (let i = 0; i < 50 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 100));
    gone =
      (await rawRequest(s.api, 'GET', '/api/v1/namespaces/kube-system/secrets/bootstrap-token-expire')).code === 404;
  }
  assert.ok(gone, 'the expired token Secret was deleted');
});
