// Client certificate rotation: the deadline, and a renewal
// through a selfnodeclient CSR that the kubelet's clients pick up in place.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { KubeClient } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { createLogger } from '../../kube/log.js';
import { useTestApiServer, writeBootstrapKubeconfig } from '../../testing/apiserver.js';
import { CertificateRotator, ClientCertRotation, clientCredentials, rotationDeadline } from './cert-rotation.js';
import { tlsBootstrap } from './tls-bootstrap.js';

const s = useTestApiServer('n1', {
  controllers: ['csrapproving', 'csrsigning'],
  authorizationModes: ['Node', 'RBAC'],
  clusterSigningDurationMs: 3600_000,
});
const log = createLogger('test', { sink: () => {} });

test('the renewal deadline falls between 70 % and 90 % of the lifetime', () => {
  const cert = { validFrom: 'Dec  3 00:00:00 2026 GMT', validTo: 'Dec  3 10:00:00 2026 GMT' } as X509Certificate;
  const from = Date.parse(cert.validFrom);
  assert.equal(rotationDeadline(cert, 0), from + 7 * 3600_000);
  assert.equal(rotationDeadline(cert, 1), from + 9 * 3600_000);
});

test('rotation: a new certificate through a CSR posted with the current one; the clients use it without restarting', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-rotate-'));
  const boot = await writeBootstrapKubeconfig(s.api, path.join(dir, 'bootstrap-kubelet.conf'));
  const kubeconfig = path.join(dir, 'kubelet.conf');
  const certDir = path.join(dir, 'pki');
  await tlsBootstrap({ nodeName: 'rot', kubeconfig, bootstrapKubeconfig: boot, certDir, pollMs: 100 }, log);
  const first = new X509Certificate(loadKubeconfig(kubeconfig).cert!);
  // An hour from the signer, valid from five minutes ago: due in 42-54 minutes from its start.
  assert.equal(Date.parse(first.validTo) - Date.parse(first.validFrom), 65 * 60_000);
  const client = new KubeClient(loadKubeconfig(kubeconfig));
  const r = new ClientCertRotation(
    {
      kubeconfig,
      nodeName: 'rot',
      certDir,
      clients: [client],
      pollMs: 100,
      rand: () => 0,
      now: () => Date.parse(first.validTo),
    },
    log,
  );
  assert.equal(r.due(), 0);
  await r.rotate();
  const second = new X509Certificate(loadKubeconfig(kubeconfig).cert!);
  assert.notEqual(second.serialNumber, first.serialNumber);
  assert.equal(fs.readdirSync(certDir).filter((f) => /^kubelet-client-\d/.test(f)).length >= 1, true);
  const who = await client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(who.status.userInfo.username, 'system:node:rot');
  const csrs = (await s.api.admin.get('/apis/certificates.k8s.io/v1/certificatesigningrequests')).items as {
    spec: { username: string };
    status: { conditions: { message: string }[] };
  }[];
  assert.ok(
    csrs.some(
      (c) =>
        c.spec.username === 'system:node:rot' &&
        c.status.conditions[0]!.message === 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    ),
  );
  client.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("an inline certificate (kubeadm init's kubelet.conf) is rotated out at once; the pair in kubelet-client-current.pem then replaces it", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-rotate-inline-'));
  const boot = await writeBootstrapKubeconfig(s.api, path.join(dir, 'bootstrap-kubelet.conf'));
  const bootstrapped = path.join(dir, 'bootstrapped.conf');
  await tlsBootstrap(
    {
      nodeName: 'inl',
      kubeconfig: bootstrapped,
      bootstrapKubeconfig: boot,
      certDir: path.join(dir, 'first'),
      pollMs: 100,
    },
    log,
  );
  // kubeadm writes the node's first certificate into kubelet.conf itself.
  const first = loadKubeconfig(bootstrapped);
  const kubeconfig = path.join(dir, 'kubelet.conf');
  const b64 = (b: Buffer) => b.toString('base64');
  fs.writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster: {server: "${first.server}", certificate-authority-data: ${b64(first.ca!)}}\nusers:\n- name: u\n  user: {client-certificate-data: ${b64(first.cert!)}, client-key-data: ${b64(first.key!)}}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n`,
  );
  const certDir = path.join(dir, 'pki');
  assert.equal(clientCredentials(kubeconfig, certDir, true).certEmbedded, true, 'no rotated pair yet: the inline one');
  const client = new KubeClient(clientCredentials(kubeconfig, certDir, true));
  const r = new ClientCertRotation(
    { kubeconfig, nodeName: 'inl', certDir, clients: [client], pollMs: 100, rand: () => 0 },
    log,
  );
  // As upstream's store: the inline pair is written as the current one at once (kubeadm's kubelet-finalize looks for it).
  const adopted = clientCredentials(kubeconfig, certDir, true);
  assert.equal(new X509Certificate(adopted.cert!).serialNumber, new X509Certificate(first.cert!).serialNumber);
  assert.equal(
    r.due(),
    0,
    "and rotated out immediately, as upstream's certificate manager does with a kubeconfig's certificate",
  );
  await r.rotate();
  assert.ok(fs.existsSync(path.join(certDir, 'kubelet-client-current.pem')));
  const now = clientCredentials(kubeconfig, certDir, true);
  assert.equal(now.certEmbedded, false);
  assert.notEqual(new X509Certificate(now.cert!).serialNumber, new X509Certificate(first.cert!).serialNumber);
  assert.ok(r.due() > 0, 'then due at 70-90 % of the new lifetime');
  assert.equal(
    clientCredentials(kubeconfig, certDir, false).certEmbedded,
    true,
    'without rotation the kubeconfig is used as it is',
  );
  const who = await client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  assert.equal(who.status.userInfo.username, 'system:node:inl');
  client.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a rotator whose certificate is missing waits (client) or asks at once, retrying failures with backoff (serving, before its first CSR is issued)', async () => {
  const none = () => undefined;
  assert.equal(new CertificateRotator({ what: 'x', current: none, renew: async () => {} }, log).due(), Infinity);
  let calls = 0;
  let cert: X509Certificate | undefined;
  const r = new CertificateRotator(
    {
      what: 'serving certificate',
      current: () => cert,
      missingIsDue: true,
      renew: async () => {
        calls++;
        if (calls === 1) throw new Error('socket hang up');
        cert = {
          validFrom: new Date(Date.now() - 60_000).toUTCString(),
          validTo: new Date(Date.now() + 3600_000).toUTCString(),
        } as X509Certificate;
      },
    },
    log,
  );
  assert.equal(r.due(), 0);
  r.start();
  for (let i = 0; i < 60 && calls < 2; i++) await new Promise((res) => setTimeout(res, 100));
  await new Promise((res) => setTimeout(res, 200));
  r.stop();
  assert.equal(calls, 2, 'retried once after the failure (1 s backoff), then due only at 70-90 % of the new lifetime');
  assert.equal(r.rotations, 1);
});
