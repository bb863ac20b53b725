// e2e: a kubelet started the way kubeadm starts it — its drop-in
// flags, a bootstrap kubeconfig holding a token, kubeadm's own config.yaml, no
// node credentials — gets its client certificate through an auto-approved CSR
// from the real apiserver, registers, runs a pod in real containerd, and renews
// its short-lived certificate in place without disturbing the pod.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eCgroupRoot, e2eSkipReason, REPO } from './harness.js';
import { sh, waitFor } from './proc.js';

class BootstrapCluster extends TestCluster {
  token = '';

  override apiserverFlags(): string[] {
    // One-minute certificates (valid from five minutes back): due for renewal within about 25 s of being issued.
    return [...super.apiserverFlags(), '--authorization-mode=Node,RBAC', '--cluster-signing-duration=1m'];
  }

  override kubeletFlags(): string[] {
    this.token ||= sh(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO, 'cli/tskube.ts'),
        'token',
        'create',
        '--kubeconfig',
        this.as.kubeconfig,
        '--ttl',
        '1h',
      ],
      { netns: this.node.netns },
    ).trim();
    const server = this.as.kubectl(['config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}']);
    const boot = path.join(this.node.dir, 'bootstrap-kubelet.conf');
    fs.writeFileSync(
      boot,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'kubernetes',
            cluster: { server, 'certificate-authority-data': fs.readFileSync(this.as.caFile).toString('base64') },
          },
        ],
        contexts: [
          {
            name: 'tls-bootstrap-token-user@kubernetes',
            context: { cluster: 'kubernetes', user: 'tls-bootstrap-token-user' },
          },
        ],
        'current-context': 'tls-bootstrap-token-user@kubernetes',
        users: [{ name: 'tls-bootstrap-token-user', user: { token: this.token } }],
      }),
    );
    // kubeadm's config.yaml as kubeadm 1.32 writes it (rotateCertificates: true, zero values meaning defaults), plus
    // podLogsDir so the test's logs stay in its own dir, and serverTLSBootstrap (a kubeadm option).
    const config = path.join(this.node.dir, 'kubeadm-config.yaml');
    // kubeadm writes cgroupDriver: systemd; this node's containerd uses cgroupfs, so the file says so, as on such a kubeadm node
    // (a mismatch is an error at start). Its pods go under this node's own cgroup root.
    const kubeadm = fs
      .readFileSync(path.join(REPO, 'cli/testdata/kubeadm-kubelet-config.yaml'), 'utf8')
      .replace('cgroupDriver: systemd', 'cgroupDriver: cgroupfs');
    fs.writeFileSync(
      config,
      `${kubeadm}podLogsDir: ${this.node.podLogsDir}\nserverTLSBootstrap: true\ncgroupRoot: ${e2eCgroupRoot(this.node.dir)}\n`,
    );
    return [
      `--config=${config}`,
      `--bootstrap-kubeconfig=${boot}`,
      `--kubeconfig=${path.join(this.node.dir, 'kubelet.conf')}`,
      `--cert-dir=${path.join(this.node.dir, 'kubelet-pki')}`,
      '--pod-infra-container-image=registry.k8s.io/pause:3.10',
      `--client-ca-file=${this.as.caFile}`,
      `--node-ip=${this.node.nodeIP}`,
    ];
  }
}

describe(
  'kubelet TLS bootstrap with a bootstrap token',
  { skip: clusterSkip(e2eSkipReason()), timeout: 5 * 60_000 },
  () => {
    const cluster = new BootstrapCluster();
    before(() => cluster.start());
    after(() => cluster.cleanup());

    test('the kubelet gets a client certificate through an approved CSR, registers as system:node:<name> and runs a pod', async () => {
      const node = cluster.node.name;
      await waitFor(() => /\bReady\b/.test(cluster.kubectl(['get', 'node', node]) || ''), 60_000, 500, 'node Ready');
      const csrs = cluster.kubectl(['get', 'csr']);
      assert.match(
        csrs,
        new RegExp(
          `node-csr-\\S+\\s+\\S+\\s+kubernetes.io/kube-apiserver-client-kubelet\\s+system:bootstrap:${cluster.token.split('.')[0]}\\s+<none>\\s+Approved,Issued`,
        ),
      );
      const current = path.join(cluster.node.dir, 'kubelet-pki', 'kubelet-client-current.pem');
      assert.match(path.basename(fs.readlinkSync(current)), /^kubelet-client-\d{4}(-\d{2}){5}\.pem$/);
      assert.match(
        sh('openssl', ['x509', '-noout', '-subject'], { input: fs.readFileSync(current, 'utf8') }),
        new RegExp(`O = system:nodes, CN = system:node:${node}`),
      );
      assert.match(
        fs.readFileSync(path.join(cluster.node.dir, 'kubelet.conf'), 'utf8'),
        /client-certificate: .*kubelet-client-current\.pem/,
      );
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'boot' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
        },
      });
      await waitFor(() => /Running/.test(cluster.kubectl(['get', 'pod', 'boot'])), 60_000, 300, 'pod Running');
      assert.equal(cluster.kubectl(['exec', 'boot', '--', 'echo', 'joined']).trim(), 'joined');
      // Restarted, the kubelet keeps its certificate: no second bootstrap CSR.
      await cluster.node.stopKubelet();
      cluster.node.startKubelet(cluster.kubeletFlags());
      await new Promise((r) => setTimeout(r, 3000));
      await waitFor(
        () => /\bReady\b/.test(cluster.kubectl(['get', 'node', node]) || ''),
        30_000,
        500,
        'node Ready again',
      );
      const byBootstrap = () =>
        cluster
          .kubectl(['get', 'csr', '-o', 'jsonpath={range .items[*]}{.spec.username}{"\\n"}{end}'])
          .trim()
          .split('\n')
          .filter((u) => u.startsWith('system:bootstrap:'));
      assert.equal(byBootstrap().length, 1);
    });

    test("rotateCertificates from kubeadm's config.yaml: the one-minute certificate is renewed through a CSR of the node itself, in place; the pod is untouched and the node stays Ready", async () => {
      const node = cluster.node.name;
      const current = path.join(cluster.node.dir, 'kubelet-pki', 'kubelet-client-current.pem');
      const first = fs.readlinkSync(current);
      const firstWritten = fs.statSync(current).mtimeMs;
      const serial = (): string =>
        sh('openssl', ['x509', '-noout', '-serial'], { input: fs.readFileSync(current, 'utf8') });
      const before = serial();
      const firstExpires = Date.parse(
        sh('openssl', ['x509', '-noout', '-enddate'], { input: fs.readFileSync(current, 'utf8') })
          .trim()
          .replace(/^notAfter=/, ''),
      );
      const containerId = cluster.kubectl([
        'get',
        'pod',
        'boot',
        '-o',
        'jsonpath={.status.containerStatuses[0].containerID}',
      ]);
      await waitFor(() => serial() !== before, 90_000, 500, 'a renewed client certificate');
      // A new kubelet-client-<time>.pem behind the link (upstream's names have seconds: a certificate renewed within the
      // second the previous one was written, right after a restart, replaces that file).
      assert.match(path.basename(fs.readlinkSync(current)), /^kubelet-client-\d{4}(-\d\d){5}\.pem$/);
      assert.ok(
        fs.readlinkSync(current) !== first || fs.statSync(current).mtimeMs > firstWritten,
        'the link points at a newly written file',
      );
      const csrs = cluster.kubectl([
        'get',
        'csr',
        '-o',
        'jsonpath={range .items[*]}{.spec.username} {.spec.signerName} {.status.conditions[0].type}{"\\n"}{end}',
      ]);
      assert.match(csrs, new RegExp(`^system:node:${node} kubernetes.io/kube-apiserver-client-kubelet Approved$`, 'm'));
      // The kubelet goes on talking to the apiserver with the new certificate: its Lease keeps being renewed after the old one expired.
      const lease = () =>
        cluster.kubectl(['get', 'lease', node, '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
      await new Promise((r) => setTimeout(r, Math.max(0, firstExpires - Date.now()) + 1000));
      const t0 = lease();
      await waitFor(() => lease() !== t0, 20_000, 1000, 'lease renewed after the first certificate expired');
      assert.match(cluster.kubectl(['get', 'node', node]), /\bReady\b/);
      assert.equal(
        cluster.kubectl([
          'get',
          'pod',
          'boot',
          '-o',
          'jsonpath={.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}',
        ]),
        `${containerId} 0`,
      );
      assert.equal(cluster.kubectl(['exec', 'boot', '--', 'echo', 'still here']).trim(), 'still here');
    });

    test('serverTLSBootstrap: the approved kubelet-serving certificate is served, and renewed through a new CSR that needs approval again', async () => {
      const node = cluster.node.name;
      const pendingServing = (): string[] =>
        cluster
          .kubectl([
            'get',
            'csr',
            '-o',
            'jsonpath={range .items[*]}{.metadata.name} {.spec.signerName} {.status.conditions[0].type}{"\\n"}{end}',
          ])
          .trim()
          .split('\n')
          .filter((l) => / kubernetes\.io\/kubelet-serving $/.test(l))
          .map((l) => l.split(' ')[0]!);
      const served = (): string =>
        sh(
          'sh',
          [
            '-c',
            `openssl s_client -connect ${cluster.node.nodeIP}:10250 </dev/null 2>/dev/null | openssl x509 -noout -serial -issuer`,
          ],
          { netns: cluster.node.netns, allowFail: true },
        );
      // Each kubelet start posted one (the restart in the first test too): approve what is pending, as an admin would.
      const first = await waitFor(
        () => (pendingServing().length ? pendingServing() : undefined),
        30_000,
        500,
        'a pending kubelet-serving CSR',
      );
      assert.doesNotMatch(served(), /issuer=CN ?= ?tskube-ca/, 'self-signed until approved');
      cluster.kubectl(['certificate', 'approve', ...first]);
      const issued = await waitFor(
        () => (/issuer=CN ?= ?tskube-ca/.test(served()) ? served() : undefined),
        30_000,
        500,
        'the issued serving certificate served',
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}; served: ${served()}; kubelet log:\n${cluster.node.kubeletLog().split('\n').slice(-30).join('\n')}`,
        );
      });
      // One-minute certificates: a renewal CSR comes within about 25 s; until it is approved the current one is served.
      const second = await waitFor(
        () => pendingServing().find((n) => !first.includes(n)),
        60_000,
        500,
        'a renewal kubelet-serving CSR',
      );
      assert.equal(served(), issued);
      cluster.kubectl(['certificate', 'approve', second]);
      await waitFor(
        () => /issuer=CN ?= ?tskube-ca/.test(served()) && served() !== issued,
        30_000,
        500,
        'the renewed serving certificate served',
      );
      assert.match(cluster.kubectl(['get', 'node', node]), /\bReady\b/);
      assert.equal(cluster.kubectl(['logs', 'boot']).trim(), '');
    });
  },
);
