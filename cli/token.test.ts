import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { test } from 'node:test';

import { detachedSignature, newTokenSecret } from '../apiserver/bootstrap/tokens.js';
import type { KObj } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { rawRequest, useTestApiServer } from '../testing/apiserver.js';
import { caCertHash, runToken } from './token.js';

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
