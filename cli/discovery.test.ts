// Token discovery for `tskube join`: the detached JWS checked
// against upstream's vector, the CA pinned by hash, and kubeadm's errors for a
// wrong token, an expired one and a wrong hash, against a real apiserver.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parse as parseYaml } from 'yaml';

import { newTokenSecret } from '../apiserver/bootstrap/tokens.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { useTestApiServer } from '../testing/apiserver.js';
import { bootstrapKubeconfig, detachedJwsValid, fetchClusterInfo, parsePins, verifyClusterInfo } from './discovery.js';
import { parseServer } from './join.js';
import { caCertHash, runToken } from './token.js';

// cluster-bootstrap's jws_test.go vector.
const CONTENT = 'Hello from the other side. I must have called a thousand times.';
const JWS = 'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8';

test("detached JWS: upstream's vector verifies; another secret, id, content or algorithm does not", () => {
  assert.equal(detachedJwsValid(JWS, CONTENT, 'joshua', 'my voice is my passcode'), true);
  assert.equal(detachedJwsValid(JWS, CONTENT, 'joshua', 'my voice is not my passcode'), false);
  assert.equal(detachedJwsValid(JWS, CONTENT, 'joshub', 'my voice is my passcode'), false);
  assert.equal(detachedJwsValid(JWS, `${CONTENT}!`, 'joshua', 'my voice is my passcode'), false);
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'joshua' })).toString('base64url')}..`;
  assert.equal(detachedJwsValid(none, CONTENT, 'joshua', 'my voice is my passcode'), false);
  assert.equal(detachedJwsValid('garbage', CONTENT, 'joshua', 'x'), false);
});

test('join arguments: https://host:port or host:port; hashes are sha256:<64 hex>', () => {
  assert.equal(parseServer('192.0.2.1:6443').origin, 'https://192.0.2.1:6443');
  assert.equal(parseServer('https://192.0.2.1').origin, 'https://192.0.2.1:6443');
  assert.throws(() => parseServer('http://192.0.2.1:6443'), /the apiserver is reached over https/);
  assert.throws(() => parseServer(undefined), /give the apiserver to join/);
  assert.deepEqual(parsePins([`SHA256:${'A'.repeat(64)}`]), [`sha256:${'a'.repeat(64)}`]);
  assert.throws(
    () => parsePins(['sha256:abc']),
    /--discovery-token-ca-cert-hash: "sha256:abc" is not of the form sha256:<64 hex digits>/,
  );
});

const s = useTestApiServer('n1', {
  controllers: ['bootstrapsigner', 'tokencleaner'],
  authorizationModes: ['Node', 'RBAC'],
  anonymousAuth: true,
});

test("discovery against the apiserver: the printed join line verifies and pins the CA; wrong secret, unknown or expired token and wrong hash fail with kubeadm's reasons", async () => {
  const admin = s.api.srv.kubeconfigs['kubernetes-admin']!;
  let out = '';
  await runToken(['create', '--kubeconfig', admin, '--print-join-command'], (x) => (out += x));
  const [, server, token, hash] = /^tskube join (\S+) --token (\S+) --discovery-token-ca-cert-hash (\S+)\n$/.exec(out)!;
  const { secret: expiredSecret } = newTokenSecret({
    token: 'gone00.0123456789abcdef',
    ttlSeconds: 1,
    now: Date.now() - 10_000,
  });
  await s.api.admin.create('/api/v1/namespaces/kube-system/secrets', expiredSecret);
  let data: Record<string, string> = {};
  for (let i = 0; i < 100 && !data[`jws-kubeconfig-${token!.split('.')[0]}`]; i++) {
    await new Promise((r) => setTimeout(r, 50));
    data = await fetchClusterInfo(server!);
  }
  const cluster = verifyClusterInfo(data, token!, parsePins([hash!]));
  assert.equal(cluster.server, server);
  assert.equal(caCertHash(cluster.caPem), hash);
  assert.deepEqual(
    await fetchClusterInfo(cluster.server, cluster.caPem),
    data,
    'the same object over a verified connection',
  );
  assert.equal(verifyClusterInfo(data, token!, []).server, server, 'unsafe skip: the signature alone');
  const id = token!.split('.')[0]!;
  assert.throws(
    () => verifyClusterInfo(data, `${id}.aaaaaaaaaaaaaaaa`, [hash!]),
    /^Error: failed to verify JWS signature of received cluster info object, can't trust this API Server/,
  );
  assert.throws(
    () => verifyClusterInfo(data, 'zzzzzz.aaaaaaaaaaaaaaaa', [hash!]),
    /could not find a JWS signature in the cluster-info ConfigMap for token ID "zzzzzz": the token is wrong or has expired/,
  );
  assert.throws(
    () => verifyClusterInfo(data, 'gone00.0123456789abcdef', [hash!]),
    /for token ID "gone00"/,
    'an expired token signs nothing',
  );
  const wrong = `sha256:${'0'.repeat(64)}`;
  assert.throws(
    () => verifyClusterInfo(data, token!, [wrong]),
    new RegExp(`cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "${hash}" are pinned`),
  );
  assert.throws(() => verifyClusterInfo(data, 'not-a-token', [hash!]), /was not of the form/);
  // The bootstrap kubeconfig authenticates as the token and trusts the CA.
  // A private directory, removed at once: the file holds a token.
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const dir = mkdtempSync(`${process.env.TMPDIR ?? '/tmp'}/tskube-boot-`);
  const file = `${dir}/bootstrap.conf`;
  writeFileSync(file, bootstrapKubeconfig(cluster, token!));
  const parsed = parseYaml(bootstrapKubeconfig(cluster, token!)) as { users: { user: { token: string } }[] };
  assert.equal(parsed.users[0]!.user.token, token);
  const loaded = loadKubeconfig(file);
  rmSync(dir, { recursive: true, force: true });
  const c = new KubeClient(loaded);
  const who = await c.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  c.close();
  assert.equal(who.status.userInfo.username, `system:bootstrap:${id}`);
  await assert.rejects(
    fetchClusterInfo('https://127.0.0.1:1'),
    /cannot reach the apiserver at https:\/\/127\.0\.0\.1:1: connect ECONNREFUSED/,
  );
});

test("token create on a control plane without kubeadm's join objects creates them, says so, and leaves existing ones alone", async () => {
  const admin = s.api.srv.kubeconfigs['kubernetes-admin']!;
  await s.api.admin.delete('/api/v1/namespaces/kube-public/configmaps/cluster-info');
  await s.api.admin.delete('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kubeadm:node-autoapprove-bootstrap');
  await s.api.admin.delete('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/tskube:node-proxier');
  const notes: string[] = [];
  let out = '';
  await runToken(
    ['create', '--kubeconfig', admin, '--print-join-command'],
    (x) => (out += x),
    (x) => notes.push(x),
  );
  assert.deepEqual(notes, [
    'created ConfigMap kube-public/cluster-info, as kubeadm init does for joining nodes\n',
    'created ClusterRoleBinding kubeadm:node-autoapprove-bootstrap, as kubeadm init does for joining nodes\n',
    'created ClusterRoleBinding tskube:node-proxier, as kubeadm init does for joining nodes\n',
  ]);
  assert.match(out, /^tskube join https:\/\/\S+ --token \S+ --discovery-token-ca-cert-hash sha256:[0-9a-f]{64}\n$/);
  const binding = await s.api.admin.get(
    '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kubeadm:node-autoapprove-bootstrap',
  );
  assert.deepEqual(binding.subjects, [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:bootstrappers:kubeadm:default-node-token' },
  ]);
  const again: string[] = [];
  await runToken(
    ['create', '--kubeconfig', admin],
    () => undefined,
    (x) => again.push(x),
  );
  assert.deepEqual(again, [], 'nothing to add the second time');
});
