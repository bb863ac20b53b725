// e2e: `tskube up` in a throwaway network namespace with its own data dir:
// it starts containerd and a registry, builds the images, runs apiserver,
// cluster DNS, kubelet and kube-proxy, and prints the kubeconfig; kubectl works; Ctrl-C
// stops everything; a second `up` picks up the same cluster.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { e2eSkipReason, REPO } from './harness.js';
import { sh, waitFor } from './proc.js';
import { UpNode } from './up-node.js';
import { mountsUnder } from '../agent/volumes/mounts.js';
import { clusterSkip } from './cluster.js';
import { CRD, tab } from './crd-fixture.js';

const skip = clusterSkip(e2eSkipReason());

describe('tskube up', { skip, timeout: 12 * 60_000 }, () => {
  const n = new UpNode();
  const dir = n.dir;
  const netns = n.netns;
  const kubeconfig = n.kubeconfig;
  const kubectl = (args: string[]) => n.kubectl(args);
  const runUp = () => n.run();
  const text = () => n.log();

  async function interrupt(): Promise<number | null> {
    n.proc!.child.kill('SIGINT');
    const code = await Promise.race([n.proc!.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 90_000).unref())]);
    if (code === 'timeout') throw new Error('tskube up did not stop within 90 s of SIGINT');
    return code;
  }

  before(() => n.create());
  after(() => n.stop());

  test('up starts containerd, a registry and the three components, shows progress, and prints the kubeconfig', async () => {
    await runUp();
    for (const step of ['[1/8] containerd', '[2/8] image registry on 127.0.0.1:5000', '[3/8] images', '[4/8] apiserver and controllers', '[5/8] cluster DNS', '[6/8] kubelet', '[7/8] kube-proxy', '[8/8] waiting for node up-node to be Ready']) assert.ok(text().includes(`${step}`), `progress line "${step}" in:\n${text()}`);
    assert.match(text(), /127\.0\.0\.1:5000\/tskube\/app:1: built and pushed \(\d+\.\d+s\)/);
    assert.ok(text().includes(`export KUBECONFIG=${kubeconfig}`));
    assert.match(kubectl(['get', 'nodes']), /up-node\s+Ready/);
  });

  test('a static pod and a deployment run', async () => {
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(n.manifests, 'web.yaml'));
    kubectl(['create', 'deployment', 'hello', '--image=127.0.0.1:5000/tskube/app:1']);
    await waitFor(() => /web-up-node\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) && /hello-\S+\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])), 120_000, 500, 'static pod and deployment running');
  });

  test('a CRD applied, then a custom resource created, listed with its printer columns, and refused when it violates the schema', () => {
    n.kubectl(['apply', '-f', '-'], { input: CRD });
    n.kubectl(['wait', '--for=condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']);
    assert.match(n.kubectl(['apply', '-f', '-'], { input: tab('nightly', '{cronSpec: "0 3 * * *", replicas: 2}') }), /crontab.stable.example.com\/nightly created/);
    assert.match(kubectl(['get', 'ct']), /NAME\s+SPEC\s+REPLICAS\s+AGE\nnightly\s+0 3 \* \* \*\s+2\s+\d+s/);
    assert.match(n.kubectlFails(['apply', '-f', '-'], { input: tab('broken', '{cronSpec: "0 3 * * *", replicas: 0}') }), /The CronTab "broken" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1/);
  });

  test('Ctrl-C stops everything it started; a second up brings the same cluster back', async () => {
    assert.equal(await interrupt(), 0);
    assert.match(text(), /SIGINT: stopping the cluster DNS, the kube-proxy, the kubelet, the apiserver and containerd, registry/);
    assert.match(text(), /stopped; `tskube up` again picks up where this left off/);
    assert.equal(fs.existsSync(path.join(dir, 'containerd.sock')) && sh('ss', ['-xl'], { netns, allowFail: true }).includes(`${dir}/containerd.sock`), false, 'containerd is gone');
    assert.deepEqual(await mountsUnder(n.rootDir), [], 'no secret or token tmpfs stays mounted');
    const uid = fs.readFileSync(path.join(dir, 'pki', 'admin.kubeconfig'), 'utf8');
    await runUp();
    assert.equal(fs.readFileSync(path.join(dir, 'pki', 'admin.kubeconfig'), 'utf8'), uid, 'same PKI');
    assert.match(text(), /tskube\/app:1: present/);
    assert.match(kubectl(['get', 'deployment', 'hello']), /hello\s+/);
    assert.match(kubectl(['get', 'ct', 'nightly']), /nightly\s+0 3 \* \* \*\s+2/, 'the definition and its objects survive the restart');
    await waitFor(() => /web-up-node\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) && /hello-\S+\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])), 120_000, 500, 'pods running again');
    assert.equal(await interrupt(), 0);
    n.proc = undefined;
  });
});
