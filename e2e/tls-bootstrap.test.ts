// e2e (issue 14, part): a kubelet started the way kubeadm starts it — its
// drop-in flags, a bootstrap kubeconfig holding a token, no node credentials —
// gets its client certificate through an auto-approved CSR from the real
// apiserver, registers, and runs a pod in real containerd.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { APP_IMAGE, e2eSkipReason, REPO } from './harness.js';
import { sh, waitFor } from './proc.js';
import { clusterSkip, TestCluster } from './cluster.js';

class BootstrapCluster extends TestCluster {
  token = '';

  override apiserverFlags(): string[] {
    return [...super.apiserverFlags(), '--authorization-mode=Node,RBAC'];
  }

  override kubeletFlags(): string[] {
    this.token ||= sh(process.execPath, ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), 'token', 'create', '--kubeconfig', this.as.kubeconfig, '--ttl', '1h'], { netns: this.node.netns }).trim();
    const server = this.as.kubectl(['config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}']);
    const boot = path.join(this.node.dir, 'bootstrap-kubelet.conf');
    fs.writeFileSync(boot, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'kubernetes', cluster: { server, 'certificate-authority-data': fs.readFileSync(this.as.caFile).toString('base64') } }], contexts: [{ name: 'tls-bootstrap-token-user@kubernetes', context: { cluster: 'kubernetes', user: 'tls-bootstrap-token-user' } }], 'current-context': 'tls-bootstrap-token-user@kubernetes', users: [{ name: 'tls-bootstrap-token-user', user: { token: this.token } }] }));
    return [`--bootstrap-kubeconfig=${boot}`, `--kubeconfig=${path.join(this.node.dir, 'kubelet.conf')}`, `--cert-dir=${path.join(this.node.dir, 'kubelet-pki')}`, '--pod-infra-container-image=registry.k8s.io/pause:3.10', `--client-ca-file=${this.as.caFile}`, `--node-ip=${this.node.nodeIP}`];
  }
}

describe('kubelet TLS bootstrap with a bootstrap token', { skip: clusterSkip(e2eSkipReason()), timeout: 5 * 60_000 }, () => {
  const cluster = new BootstrapCluster();
  before(() => cluster.start());
  after(() => cluster.cleanup());

  test('the kubelet gets a client certificate through an approved CSR, registers as system:node:<name> and runs a pod', async () => {
    const node = cluster.node.name;
    await waitFor(() => /\bReady\b/.test(cluster.kubectl(['get', 'node', node]) || ''), 60_000, 500, 'node Ready');
    const csrs = cluster.kubectl(['get', 'csr']);
    assert.match(csrs, new RegExp(`node-csr-\\S+\\s+\\S+\\s+kubernetes.io/kube-apiserver-client-kubelet\\s+system:bootstrap:${cluster.token.split('.')[0]}\\s+<none>\\s+Approved,Issued`));
    const current = path.join(cluster.node.dir, 'kubelet-pki', 'kubelet-client-current.pem');
    assert.match(path.basename(fs.readlinkSync(current)), /^kubelet-client-\d{4}(-\d{2}){5}\.pem$/);
    assert.match(sh('openssl', ['x509', '-noout', '-subject'], { input: fs.readFileSync(current, 'utf8') }), new RegExp(`O = system:nodes, CN = system:node:${node}`));
    assert.match(fs.readFileSync(path.join(cluster.node.dir, 'kubelet.conf'), 'utf8'), /client-certificate: .*kubelet-client-current\.pem/);
    cluster.apply({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'boot' }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }] } });
    await waitFor(() => /Running/.test(cluster.kubectl(['get', 'pod', 'boot'])), 60_000, 300, 'pod Running');
    assert.equal(cluster.kubectl(['exec', 'boot', '--', 'echo', 'joined']).trim(), 'joined');
    // Restarted, the kubelet keeps its certificate: no second CSR.
    await cluster.node.stopKubelet();
    cluster.node.startKubelet(cluster.kubeletFlags());
    await new Promise((r) => setTimeout(r, 3000));
    await waitFor(() => /\bReady\b/.test(cluster.kubectl(['get', 'node', node]) || ''), 30_000, 500, 'node Ready again');
    assert.equal(cluster.kubectl(['get', 'csr', '-o', 'name']).trim().split('\n').length, 1);
  });
});
