// CertificateSigningRequests: kubelet client CSR rules,
// approval rules, auto-approval for bootstrap tokens and renewing nodes,
// signing with the cluster CA.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';
import { newTokenSecret } from '../bootstrap/tokens.js';
import { approvalDecision } from '../controllers/csr-controllers.js';
import { signCsr, validateApproval } from './csr.js';
import type { CertificateRequest } from './csr-request.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-csr-test-'));
// It holds a private key: gone with the tests.
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
function csrPem(subj: string, sans?: string): string {
  const key = path.join(tmp, 'k.pem');
  if (!fs.existsSync(key))
    execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  return execFileSync(
    'openssl',
    ['req', '-new', '-key', key, '-subj', subj, ...(sans ? ['-addext', `subjectAltName=${sans}`] : [])],
    { encoding: 'utf8' },
  );
}
const csr = (
  name: string,
  pem: string,
  usages = ['digital signature', 'client auth'],
  signerName = 'kubernetes.io/kube-apiserver-client-kubelet',
) => ({
  apiVersion: 'certificates.k8s.io/v1',
  kind: 'CertificateSigningRequest',
  metadata: { name },
  spec: { request: Buffer.from(pem).toString('base64'), signerName, usages },
});

test("the approver's decisions: the kubelet client signer's rules, then nodeclient or selfnodeclient", () => {
  const ok: CertificateRequest = {
    subject: [
      [{ type: 'O', oid: '2.5.4.10', value: 'system:nodes' }],
      [{ type: 'CN', oid: '2.5.4.3', value: 'system:node:n1' }],
    ],
    organizations: ['system:nodes'],
    commonName: 'system:node:n1',
    dnsNames: [],
    emailAddresses: [],
    ipAddresses: [],
    uris: [],
    publicKeyAlgorithm: 'ECDSA',
  };
  const c = (username: string): KObj =>
    ({
      metadata: { name: 'x' },
      spec: {
        signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
        username,
        groups: ['g'],
        usages: ['digital signature', 'client auth'],
      },
      status: {},
    }) as KObj;
  const parse = () => ok;
  const may = (allowed: string[]) => (_u: unknown, sub: string) => allowed.includes(sub);
  assert.deepEqual(approvalDecision(c('system:bootstrap:abcdef'), may(['nodeclient']), parse), {
    approve: true,
    message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
  });
  assert.deepEqual(approvalDecision(c('system:node:n1'), may(['selfnodeclient']), parse), {
    approve: true,
    message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
  });
  assert.deepEqual(approvalDecision(c('system:node:n2'), may(['selfnodeclient']), parse), {
    approve: false,
    why: 'system:node:n2 may not create certificatesigningrequests/nodeclient',
  });
  assert.equal(
    approvalDecision(
      { ...c('u'), spec: { ...c('u').spec, signerName: 'kubernetes.io/kubelet-serving' } } as KObj,
      may(['nodeclient']),
      parse,
    ).approve,
    false,
  );
  const masters = {
    ...ok,
    subject: [ok.subject[0]!, [...ok.subject[1]!, { type: 'O', oid: '2.5.4.10', value: 'system:masters' }]],
    organizations: ['system:nodes', 'system:masters'],
  };
  assert.deepEqual(
    approvalDecision(c('system:bootstrap:abcdef'), may(['nodeclient', 'selfnodeclient']), () => masters),
    { approve: false, why: 'subject name parts must each hold one attribute' },
  );
  assert.deepEqual(
    approvalDecision(c('system:bootstrap:abcdef'), may(['nodeclient']), () => {
      throw new Error('x509: ECDSA verification failure');
    }),
    { approve: false, why: 'unparsable request: x509: ECDSA verification failure' },
  );
});

test('signing: from five minutes ago for expirationSeconds, at most the signing duration', () => {
  const ca = path.join(tmp, 'ca');
  fs.mkdirSync(ca, { recursive: true });
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      path.join(ca, 'ca.key'),
      '-subj',
      '/CN=test-ca',
      '-days',
      '2',
      '-out',
      path.join(ca, 'ca.crt'),
    ],
    { stdio: 'ignore' },
  );
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
  assert.deepEqual(
    validateApproval(cur, { status: { conditions: [] } }).map((c) => `${c.field}: ${c.message}`),
    ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"'],
  );
  assert.deepEqual(
    validateApproval(cur, {
      status: {
        conditions: [
          { type: 'Approved', status: 'True' },
          { type: 'Denied', status: 'True' },
        ],
      },
    }).map((c) => `${c.field}: ${c.message}`),
    ['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'],
  );
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
  const post = (body: object) =>
    rawRequest(s.api, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      body,
      headers: { Authorization: `Bearer ${token}` },
      noClientCert: true,
    });
  const created = await post({
    ...csr('node-csr-a', csrPem('/O=system:nodes/CN=system:node:n9')),
    spec: { ...csr('node-csr-a', csrPem('/O=system:nodes/CN=system:node:n9')).spec, username: 'forged' },
  });
  assert.equal(created.code, 201, created.text);
  assert.equal(JSON.parse(created.text).spec.username, `system:bootstrap:${token.split('.')[0]}`);
  const done = await waitCsr('node-csr-a', (o) => !!o.status?.certificate);
  assert.deepEqual(
    done.status.conditions.map((c: KObj) => `${c.type}/${c.reason}`),
    ['Approved/AutoApproved'],
  );
  const cert = Buffer.from(done.status.certificate, 'base64').toString();
  const ca = path.join(tmp, 'ca.crt');
  fs.writeFileSync(ca, loadKubeconfig(s.api.srv.kubeconfigs['kubernetes-admin']!).ca!);
  assert.match(execFileSync('openssl', ['verify', '-CAfile', ca], { input: cert, encoding: 'utf8' }), /stdin: OK/);
  assert.match(
    execFileSync('openssl', ['x509', '-noout', '-subject'], { input: cert, encoding: 'utf8' }),
    /O = system:nodes, CN = system:node:n9/,
  );
  // A bootstrap token may not ask for a serving certificate by itself, and nobody auto-approves one.
  await s.api.admin.create(
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    csr(
      'serving',
      csrPem('/O=system:nodes/CN=system:node:n9', 'DNS:n9,IP:10.0.0.9'),
      ['digital signature', 'server auth'],
      'kubernetes.io/kubelet-serving',
    ),
  );
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await waitCsr('serving', () => true)).status?.conditions, undefined);
  // Approval by hand (what kubectl certificate approve sends), then the signer issues it with the SANs.
  const cur = await s.api.admin.get('/apis/certificates.k8s.io/v1/certificatesigningrequests/serving');
  await s.api.admin.update('/apis/certificates.k8s.io/v1/certificatesigningrequests/serving/approval', {
    ...cur,
    status: {
      conditions: [
        {
          type: 'Approved',
          status: 'True',
          reason: 'KubectlApprove',
          message: 'This CSR was approved by kubectl certificate approve.',
        },
      ],
    },
  });
  const serving = await waitCsr('serving', (o) => !!o.status?.certificate);
  const text = execFileSync('openssl', ['x509', '-noout', '-ext', 'subjectAltName,extendedKeyUsage'], {
    input: Buffer.from(serving.status.certificate, 'base64').toString(),
    encoding: 'utf8',
  });
  assert.match(text, /DNS:n9, IP Address:10.0.0.9/);
  assert.match(text, /TLS Web Server Authentication/);
});

test('a crafted CSR is never approved or signed: multi-valued subjects, system:masters in a kubelet signer, bad signatures', async () => {
  const { token, secret } = newTokenSecret();
  await s.api.admin.create('/api/v1/namespaces/kube-system/secrets', secret);
  const key = path.join(tmp, 'k.pem');
  const multi = (subj: string) =>
    execFileSync('openssl', ['req', '-new', '-key', key, '-multivalue-rdn', '-subj', subj], { encoding: 'utf8' });
  for (const [name, subj] of [
    ['mv-ou', '/O=system:nodes/OU=x+O=system:masters/CN=system:node:cp'],
    ['mv-cn', '/O=system:nodes/CN=system:node:mv+O=system:masters'],
  ] as const) {
    const posted = await rawRequest(s.api, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
      body: csr(name, multi(subj)),
      headers: { Authorization: `Bearer ${token}` },
      noClientCert: true,
    });
    assert.equal(posted.code, 201, posted.text);
  }
  // A serving request with system:masters and client auth, approved by hand: the signer refuses it.
  await s.api.admin.create(
    '/apis/certificates.k8s.io/v1/certificatesigningrequests',
    csr(
      'masters-serving',
      csrPem('/O=system:masters/CN=system:node:n1', 'DNS:n1'),
      ['digital signature', 'server auth', 'client auth'],
      'kubernetes.io/kubelet-serving',
    ),
  );
  const cur = await s.api.admin.get('/apis/certificates.k8s.io/v1/certificatesigningrequests/masters-serving');
  await s.api.admin.update('/apis/certificates.k8s.io/v1/certificatesigningrequests/masters-serving/approval', {
    ...cur,
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'approved' }] },
  });
  const failed = await waitCsr('masters-serving', (o) =>
    (o.status?.conditions ?? []).some((c: KObj) => c.type === 'Failed'),
  );
  assert.deepEqual(
    failed.status.conditions.filter((c: KObj) => c.type === 'Failed').map((c: KObj) => `${c.reason}: ${c.message}`),
    ['SignerValidationFailure: subject organization is not system:nodes'],
  );
  assert.equal(failed.status.certificate, undefined);
  for (const name of ['mv-ou', 'mv-cn']) {
    const o = await waitCsr(name, () => true);
    assert.equal(o.status?.conditions, undefined, `${name} is not approved`);
    assert.equal(o.status?.certificate, undefined, `${name} is not signed`);
  }
  // A request whose signature does not verify is refused at create, as upstream's validation.
  const pem = csrPem('/O=system:nodes/CN=system:node:n1');
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, ''), 'base64');
  der[der.length - 1]! ^= 0x01;
  const broken = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  const refused = await rawRequest(s.api, 'POST', '/apis/certificates.k8s.io/v1/certificatesigningrequests', {
    body: csr('broken', broken),
  });
  assert.equal(refused.code, 422, refused.text);
  assert.match(
    JSON.parse(refused.text).message,
    /spec\.request: Invalid value: \[\]byte\{\.\.\.\}: x509: ECDSA verification failure/,
  );
});

test("CSR admission: no system:masters through kube-apiserver-client; approve and sign need the signer's verbs; issued certificates stay", async () => {
  const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
  const rbac = (kind: string, name: string, body: object) =>
    s.api.admin.create(`/apis/rbac.authorization.k8s.io/v1/${kind}`, { metadata: { name }, ...body });
  await rbac('clusterroles', 'csr-writer', {
    rules: [
      {
        apiGroups: ['certificates.k8s.io'],
        resources: [
          'certificatesigningrequests',
          'certificatesigningrequests/approval',
          'certificatesigningrequests/status',
        ],
        verbs: ['create', 'get', 'update'],
      },
    ],
  });
  await rbac('clusterrolebindings', 'alice-csr-writer', {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'csr-writer' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  await rbac('clusterrolebindings', 'alice-serving-approver', {
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'system:certificates.k8s.io:kubelet-serving-approver',
    },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  const asAlice = (method: string, p: string, body: object) =>
    rawRequest(s.api, method, p, { body, headers: { 'Impersonate-User': 'alice' } });
  const masters = await asAlice(
    'POST',
    CSR_PATH,
    csr(
      'alice-masters',
      csrPem('/O=system:masters/CN=alice'),
      ['digital signature', 'client auth'],
      'kubernetes.io/kube-apiserver-client',
    ),
  );
  assert.equal(masters.code, 403, masters.text);
  assert.equal(
    JSON.parse(masters.text).message,
    'certificatesigningrequests.certificates.k8s.io "alice-masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
  const team = await asAlice(
    'POST',
    CSR_PATH,
    csr(
      'alice-team',
      csrPem('/O=team/CN=alice'),
      ['digital signature', 'client auth'],
      'kubernetes.io/kube-apiserver-client',
    ),
  );
  assert.equal(team.code, 201, team.text);
  const approve = (o: KObj) => ({
    ...o,
    status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'approved' }] },
  });
  const refused = await asAlice('PUT', `${CSR_PATH}/alice-team/approval`, approve(JSON.parse(team.text)));
  assert.equal(refused.code, 403, refused.text);
  assert.equal(
    JSON.parse(refused.text).message,
    'certificatesigningrequests.certificates.k8s.io "alice-team" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
  );
  const serving = await asAlice(
    'POST',
    CSR_PATH,
    csr(
      'alice-serving',
      csrPem('/O=system:nodes/CN=system:node:n7', 'DNS:n7'),
      ['digital signature', 'server auth'],
      'kubernetes.io/kubelet-serving',
    ),
  );
  assert.equal(serving.code, 201, serving.text);
  const approved = await asAlice('PUT', `${CSR_PATH}/alice-serving/approval`, approve(JSON.parse(serving.text)));
  assert.equal(approved.code, 200, approved.text);
  // Setting a certificate needs `sign`; approval conditions do not change through status.
  const cur = JSON.parse(team.text);
  delete cur.metadata.resourceVersion;
  const forged = await asAlice('PUT', `${CSR_PATH}/alice-team/status`, {
    ...cur,
    status: { certificate: Buffer.from('forged').toString('base64') },
  });
  assert.equal(forged.code, 403, forged.text);
  assert.match(
    JSON.parse(forged.text).message,
    /user not permitted to sign requests with signerName "kubernetes.io\/kube-apiserver-client"$/,
  );
  const unapprove = await rawRequest(s.api, 'PUT', `${CSR_PATH}/alice-team/status`, { body: approve(cur) });
  assert.equal(unapprove.code, 422, unapprove.text);
  assert.match(
    JSON.parse(unapprove.text).message,
    /status\.conditions: Forbidden: updates may not add a condition of type "Approved"/,
  );
  const signed = await waitCsr('alice-serving', (o) => !!o.status?.certificate);
  const rewrite = await rawRequest(s.api, 'PUT', `${CSR_PATH}/alice-serving/status`, {
    body: { ...signed, status: { ...signed.status, certificate: Buffer.from('other').toString('base64') } },
  });
  assert.equal(rewrite.code, 422, rewrite.text);
  assert.match(
    JSON.parse(rewrite.text).message,
    /status\.certificate: Forbidden: updates may not modify existing certificate content/,
  );
});
