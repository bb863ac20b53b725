// TLS bootstrap: a bootstrap token kubeconfig becomes a
// node client certificate through an auto-approved CSR.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { KubeClient } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { createLogger } from '../../kube/log.js';
import { useTestApiServer, writeBootstrapKubeconfig } from '../../testing/apiserver.js';
import { loadBootstrappedServingCert } from '../server/serving-cert.js';
import { certFileName, clientConfigValid, requestCertificate, tlsBootstrap } from './tls-bootstrap.js';

const s = useTestApiServer('n1', { controllers: ['csrapproving', 'csrsigning'], authorizationModes: ['Node', 'RBAC'] });
const log = createLogger('test', { sink: () => {} });

test('certificate files are named by time as upstream', () => {
  assert.equal(certFileName(new Date('2026-12-03T07:30:05.123Z')), 'kubelet-client-2026-12-03-07-30-05.pem');
});

test('--bootstrap-kubeconfig: a token gets a client certificate for system:node:<name>, kept behind kubelet-client-current.pem; a valid kubeconfig is left alone', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-tlsboot-'));
  const boot = await writeBootstrapKubeconfig(s.api, path.join(dir, 'bootstrap-kubelet.conf'));
  const kubeconfig = path.join(dir, 'kubelet.conf');
  const o = {
    nodeName: 'joiner',
    kubeconfig,
    bootstrapKubeconfig: boot,
    certDir: path.join(dir, 'pki'),
    pollMs: 100,
    timeoutMs: 20_000,
  };
  assert.equal(clientConfigValid(kubeconfig), false);
  assert.equal(await tlsBootstrap(o, log), true);
  const current = path.join(dir, 'pki', 'kubelet-client-current.pem');
  assert.match(fs.readlinkSync(current), /kubelet-client-\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.pem$/);
  assert.match(fs.readFileSync(current, 'utf8'), /BEGIN CERTIFICATE[\s\S]*BEGIN PRIVATE KEY/);
  assert.equal((fs.statSync(current).mode & 0o777).toString(8), '600');
  const c = new KubeClient(loadKubeconfig(kubeconfig));
  const who = await c.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  c.close();
  assert.equal(who.status.userInfo.username, 'system:node:joiner');
  assert.deepEqual(who.status.userInfo.groups, ['system:nodes', 'system:authenticated']);
  assert.equal(await tlsBootstrap(o, log), false, 'a valid kubeconfig needs no bootstrap');
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a serving certificate (serverTLSBootstrap) waits for a human approval, then carries the node's names", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-serving-'));
  const node = new KubeClient(loadKubeconfig(s.api.srv.kubeconfigs['system:node:n1']!));
  const pending = requestCertificate(
    node,
    { nodeName: 'n1', certDir: dir, kind: 'server', sans: ['DNS:n1', 'IP:10.9.9.9'], pollMs: 100, timeoutMs: 20_000 },
    log,
  );
  let csr: KObj | undefined;
  for (let i = 0; i < 50 && !csr; i++) {
    await new Promise((r) => setTimeout(r, 100));
    csr = ((await s.api.admin.get('/apis/certificates.k8s.io/v1/certificatesigningrequests')).items as KObj[]).find(
      (c) => c.spec.signerName === 'kubernetes.io/kubelet-serving',
    );
  }
  assert.ok(csr, 'a kubelet-serving CSR was posted');
  assert.equal(csr.spec.username, 'system:node:n1');
  assert.deepEqual(csr.spec.usages, ['digital signature', 'server auth']);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(
    (await s.api.admin.get(`/apis/certificates.k8s.io/v1/certificatesigningrequests/${csr.metadata.name}`)).status
      .conditions,
    undefined,
    'not auto-approved',
  );
  await s.api.admin.update(`/apis/certificates.k8s.io/v1/certificatesigningrequests/${csr.metadata.name}/approval`, {
    ...csr,
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove' }] },
  });
  assert.equal(await pending, path.join(dir, 'kubelet-server-current.pem'));
  const c = loadBootstrappedServingCert(dir)!;
  const x = new X509Certificate(c.cert);
  assert.equal(x.subjectAltName, 'DNS:n1, IP Address:10.9.9.9');
  assert.match(x.subject, /CN=system:node:n1/);
  node.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
