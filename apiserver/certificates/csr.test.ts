// CertificateSigningRequests (issue 14, part): kubelet client CSR rules,
// approval rules, auto-approval for bootstrap tokens and renewing nodes,
// signing with the cluster CA.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { notKubeletClient, signCsr, validateApproval } from './csr.js';
import { approvalDecision } from '../controllers/csr-controllers.js';
import { newTokenSecret } from '../bootstrap/tokens.js';
import { rawRequest, useTestApiServer } from '../testing.js';
import type { KObj } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-csr-test-'));
// It holds a private key: gone with the tests.
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
function csrPem(subj: string, sans?: string): string {
  const key = path.join(tmp, 'k.pem');
  if (!fs.existsSync(key)) execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  return execFileSync('openssl', ['req', '-new', '-key', key, '-subj', subj, ...(sans ? ['-addext', `subjectAltName=${sans}`] : [])], { encoding: 'utf8' });
}
const csr = (name: string, pem: string, usages = ['digital signature', 'client auth'], signerName = 'kubernetes.io/kube-apiserver-client-kubelet') => ({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name }, spec: { request: Buffer.from(pem).toString('base64'), signerName, usages } });

test("upstream's kubelet client CSR rules and the approver's decisions", () => {
  const ok = { cn: 'system:node:n1', orgs: ['system:nodes'], hasSans: false };
  assert.equal(notKubeletClient(ok, ['key encipherment', 'digital signature', 'client auth']), undefined);
  assert.equal(notKubeletClient({ ...ok, orgs: ['system:nodes', 'system:masters'] }, ['digital signature', 'client auth']), 'organization must be exactly ["system:nodes"], not ["system:nodes","system:masters"]');
  assert.equal(notKubeletClient({ ...ok, cn: 'admin' }, ['digital signature', 'client auth']), 'common name must begin with "system:node:", not "admin"');
  assert.equal(notKubeletClient({ ...ok, hasSans: true }, ['digital signature', 'client auth']), 'subject alternative names are not allowed');
  assert.match(notKubeletClient(ok, ['digital signature', 'server auth'])!, /^usages must be/);
  const c = (username: string): KObj => ({ metadata: { name: 'x' }, spec: { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', username, groups: ['g'], usages: ['digital signature', 'client auth'] }, status: {} }) as KObj;
  const parse = () => ok;
  const may = (allowed: string[]) => (_u: unknown, sub: string) => allowed.includes(sub);
  assert.deepEqual(approvalDecision(c('system:bootstrap:abcdef'), may(['nodeclient']), parse), { approve: true, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' });
  assert.deepEqual(approvalDecision(c('system:node:n1'), may(['selfnodeclient']), parse), { approve: true, message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' });
  assert.deepEqual(approvalDecision(c('system:node:n2'), may(['selfnodeclient']), parse), { approve: false, why: 'system:node:n2 may not create certificatesigningrequests/nodeclient' });
  assert.equal(approvalDecision({ ...c('u'), spec: { ...c('u').spec, signerName: 'kubernetes.io/kubelet-serving' } } as KObj, may(['nodeclient']), parse).approve, false);
});

test('signing: from five minutes ago for expirationSeconds, at most the signing duration', () => {
  const ca = path.join(tmp, 'ca');
  fs.mkdirSync(ca, { recursive: true });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', path.join(ca, 'ca.key'), '-subj', '/CN=test-ca', '-days', '2', '-out', path.join(ca, 'ca.crt')], { stdio: 'ignore' });
  const now = Date.parse('2026-12-03T10:00:00Z');
  const o = { spec: { ...csr('x', csrPem('/O=system:nodes/CN=system:node:n1')).spec, expirationSeconds: 600 } };
  const c = new X509Certificate(signCsr(o, ca, 3600, now));
  assert.equal(Date.parse(c.validFrom), now - 300_000);
  assert.equal(Date.parse(c.validTo), now + 600_000);
  const capped = new X509Certificate(signCsr({ spec: { ...o.spec, expirationSeconds: 7200 } }, ca, 3600, now));
  assert.equal(Date.parse(capped.validTo), now + 3600_000);
});

test('approval: Approved and Denied are exclusive and cannot be taken back', () => {
  const cur = { status: { conditions: [{ type: 'Approved', status: 'True' }] } };
  assert.deepEqual(validateApproval(cur, { status: { conditions: [] } }).map((c) => `${c.field}: ${c.message}`), ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"']);
  assert.deepEqual(validateApproval(cur, { status: { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] } }).map((c) => `${c.field}: ${c.message}`), ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive']);
});

const s = useTestApiServer('n1', { controllers: ['csrapproving', 'csrsigning'], authorizationModes: ['Node', 'RBAC'] });

async function waitCsr(name: string, until: (o: KObj) => boolean): Promise<KObj> {
  let o: KObj = {};
  for (let i = 0; i < 60; i++) {
    o = await s.api.admin.get(`/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`);
    if (until(o)) return o;
    await new Promise((r) => setTimeout(r, 100));
  }
  return o;
}

test('a bootstrap token posts a node client CSR: it is approved, issued by the cluster CA, and records who asked; a serving CSR waits for a human', async () => {
  const { token, secret } = newTokenSecret();
  await s.api.admin.create('/api/v1/namespaces/kube-system/secrets', secret);
  const post = (body: object) => rawRequest(s.api, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', { body, headers: { Authorization: `Bearer ${token}` }, noClientCert: true });
  const created = await post({ ...csr('node-csr-a', csrPem('/O=system:nodes/CN=system:node:n9')), spec: { ...csr('node-csr-a', csrPem('/O=system:nodes/CN=system:node:n9')).spec, username: 'forged' } });
  assert.equal(created.code, 201, created.text);
  assert.equal(JSON.parse(created.text).spec.username, `system:bootstrap:${token.split('.')[0]}`);
  const done = await waitCsr('node-csr-a', (o) => !!o.status?.certificate);
  assert.deepEqual(done.status.conditions.map((c: KObj) => `${c.type}/${c.reason}`), ['Approved/AutoApproved']);
  const cert = Buffer.from(done.status.certificate, 'base64').toString();
  const ca = path.join(tmp, 'ca.crt');
  fs.writeFileSync(ca, loadKubeconfig(s.api.srv.kubeconfigs['kubernetes-admin']!).ca!);
  assert.match(execFileSync('openssl', ['verify', '-CAfile', ca], { input: cert, encoding: 'utf8' }), /stdin: OK/);
  assert.match(execFileSync('openssl', ['x509', '-noout', '-subject'], { input: cert, encoding: 'utf8' }), /O = system:nodes, CN = system:node:n9/);
  // A bootstrap token may not ask for a serving certificate by itself, and nobody auto-approves one.
  await s.api.admin.create('/apis/certificates.k8s.io/v1/certificatesigningrequests', csr('serving', csrPem('/O=system:nodes/CN=system:node:n9', 'DNS:n9,IP:10.0.0.9'), ['digital signature', 'server auth'], 'kubernetes.io/kubelet-serving'));
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await waitCsr('serving', () => true)).status?.conditions, undefined);
  // Approval by hand (what kubectl certificate approve sends), then the signer issues it with the SANs.
  const cur = await s.api.admin.get('/apis/certificates.k8s.io/v1/certificatesigningrequests/serving');
  await s.api.admin.update('/apis/certificates.k8s.io/v1/certificatesigningrequests/serving/approval', { ...cur, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'This CSR was approved by kubectl certificate approve.' }] } });
  const serving = await waitCsr('serving', (o) => !!o.status?.certificate);
  const text = execFileSync('openssl', ['x509', '-noout', '-ext', 'subjectAltName,extendedKeyUsage'], { input: Buffer.from(serving.status.certificate, 'base64').toString(), encoding: 'utf8' });
  assert.match(text, /DNS:n9, IP Address:10.0.0.9/);
  assert.match(text, /TLS Web Server Authentication/);
});
