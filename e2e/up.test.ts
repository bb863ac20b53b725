// e2e: `tskube up` in a throwaway network namespace with its own data dir:
// it starts containerd and a registry, builds the images, runs apiserver,
// cluster DNS, kubelet and kube-proxy, and prints the kubeconfig; kubectl works; Ctrl-C
// stops everything; a second `up` picks up the same cluster.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CgroupTree } from '../agent/cm/cgroupfs.js';
import { mountsUnder } from '../agent/volumes/mounts.js';
import { clusterSkip } from './cluster.js';
import { CRD, tab } from './crd-fixture.js';
import { e2eCgroupRoot, e2eSkipReason, REPO } from './harness.js';
import { sh, waitFor } from './proc.js';
import { UpNode } from './up-node.js';

const skip = clusterSkip(e2eSkipReason());

describe('tskube up', { skip, timeout: 12 * 60_000 }, () => {
  const n = new UpNode();
  const dir = n.dir;
  const netns = n.netns;
  const kubeconfig = n.kubeconfig;
  const kubectl = (args: string[]) => n.kubectl(args);
  const runUp = () => n.run();
  const text = () => n.log();

  /** Ctrl-C in the terminal: SIGINT to up's whole process group. */
  async function interrupt(): Promise<number | null> {
    process.kill(-n.proc!.pid, 'SIGINT');
    const code = await Promise.race([
      n.proc!.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 90_000).unref()),
    ]);
    if (code === 'timeout') throw new Error('tskube up did not stop within 90 s of SIGINT');
    return code;
  }

  /** Shims of this node's containerd (their command line names its socket). */
  const shims = (): string[] =>
    sh('ps', ['-eo', 'pid,args'])
      .split('\n')
      .filter((l) => l.includes('containerd-shim') && l.includes(`${dir}/`));

  // Counts its starts in an emptyDir and says goodbye there on SIGTERM: a graceful stop and the data's survival both show.
  const KEEPER = `apiVersion: v1
kind: Pod
metadata: {name: keeper}
spec:
  terminationGracePeriodSeconds: 8
  containers:
  - name: c
    image: 127.0.0.1:5000/tskube/app:1
    command: ['/bin/sh', '-c', 'echo start >> /data/log; trap "echo term >> /data/log; exit 0" TERM; while true; do sleep 1; done']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, emptyDir: {}}]
`;

  before(() => n.create());
  after(async () => {
    await n.stop();
    // The reset test removes the data dir, and with it the harness's record of the namespace and cgroup root.
    sh('ip', ['netns', 'del', netns], { allowFail: true });
    await new CgroupTree().remove(e2eCgroupRoot(dir)).catch(() => undefined);
    await new CgroupTree().removeIfEmpty('/tskube-e2e');
  });

  test('up starts containerd, a registry and the three components, shows progress, and prints the kubeconfig', async () => {
    await runUp();
    for (const step of [
      '[1/8] containerd',
      '[2/8] image registry on 127.0.0.1:5000',
      '[3/8] images',
      '[4/8] apiserver and controllers',
      '[5/8] cluster DNS',
      '[6/8] kubelet',
      '[7/8] kube-proxy',
      '[8/8] waiting for node up-node to be Ready',
    ])
      assert.ok(text().includes(`${step}`), `progress line "${step}" in:\n${text()}`);
    assert.match(text(), /127\.0\.0\.1:5000\/tskube\/app:1: built and pushed \(\d+\.\d+s\)/);
    assert.ok(text().includes(`export KUBECONFIG=${kubeconfig}`));
    assert.match(kubectl(['get', 'nodes']), /up-node\s+Ready/);
    assert.equal(
      kubectl(['get', 'node', 'up-node', '-o', 'jsonpath={.spec.podCIDR}']),
      '10.247.0.0/24',
      '--cluster-cidr is honoured',
    );
  });

  test('a static pod and a deployment run', async () => {
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(n.manifests, 'web.yaml'));
    kubectl(['create', 'deployment', 'hello', '--image=127.0.0.1:5000/tskube/app:1']);
    await waitFor(
      () =>
        /web-up-node\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) &&
        /hello-\S+\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])),
      120_000,
      500,
      'static pod and deployment running',
    );
    assert.match(
      kubectl(['get', 'pods', '-l', 'app=hello', '-o', 'jsonpath={.items[0].status.podIP}']),
      /^10\.247\.0\.\d+$/,
      "pods get addresses from the node's podCIDR",
    );
  });

  test('a CRD applied, then a custom resource created, listed with its printer columns, and refused when it violates the schema', () => {
    n.kubectl(['apply', '-f', '-'], { input: CRD });
    n.kubectl(['wait', '--for=condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']);
    assert.match(
      n.kubectl(['apply', '-f', '-'], { input: tab('nightly', '{cronSpec: "0 3 * * *", replicas: 2}') }),
      /crontab.stable.example.com\/nightly created/,
    );
    assert.match(kubectl(['get', 'ct']), /NAME\s+SPEC\s+REPLICAS\s+AGE\nnightly\s+0 3 \* \* \*\s+2\s+\d+s/);
    assert.match(
      n.kubectlFails(['apply', '-f', '-'], { input: tab('broken', '{cronSpec: "0 3 * * *", replicas: 0}') }),
      /The CronTab "broken" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1/,
    );
  });

  test('Ctrl-C to the process group stops the pods within their grace periods, then everything up started; a second up brings the same cluster and data back', async () => {
    n.kubectl(['apply', '-f', '-'], { input: KEEPER });
    await waitFor(() => /keeper\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])), 60_000, 500, 'keeper running');
    await waitFor(
      () => kubectl(['exec', 'keeper', '--', 'cat', '/data/log']) === 'start\n',
      20_000,
      500,
      'keeper started',
    );
    assert.ok(shims().length >= 3, `three pods' shims: ${shims().join('; ')}`);
    assert.equal(await interrupt(), 0);
    assert.match(
      text(),
      /SIGINT: stopping the cluster DNS, the kubelet and its pods, the kube-proxy, the apiserver and registry-lan, registry, containerd/,
    );
    assert.match(text(), /stopping \d+ container\(s\) of 3 pod\(s\), each within its grace period \(at most 10s/);
    assert.match(text(), /stopped 3 pod\(s\)/);
    assert.match(text(), /stopped; `tskube up` again picks up where this left off/);
    assert.deepEqual(shims(), [], 'no shim outlives up');
    assert.equal(
      fs.existsSync(path.join(dir, 'containerd.sock')) &&
        sh('ss', ['-xl'], { netns, allowFail: true }).includes(`${dir}/containerd.sock`),
      false,
      'containerd is gone',
    );
    assert.deepEqual(await mountsUnder(n.rootDir), [], 'no secret or token tmpfs stays mounted');
    const uid = fs.readFileSync(path.join(dir, 'pki', 'admin.kubeconfig'), 'utf8');
    await runUp();
    assert.equal(fs.readFileSync(path.join(dir, 'pki', 'admin.kubeconfig'), 'utf8'), uid, 'same PKI');
    assert.match(text(), /tskube\/app:1: present/);
    assert.match(kubectl(['get', 'deployment', 'hello']), /hello\s+/);
    assert.match(
      kubectl(['get', 'ct', 'nightly']),
      /nightly\s+0 3 \* \* \*\s+2/,
      'the definition and its objects survive the restart',
    );
    await waitFor(
      () =>
        /web-up-node\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) &&
        /hello-\S+\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) &&
        /keeper\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])),
      120_000,
      500,
      'pods running again',
    );
    // Stopped with SIGTERM (its trap ran), started again with the same emptyDir.
    await waitFor(
      () => kubectl(['exec', 'keeper', '--', 'cat', '/data/log']) === 'start\nterm\nstart\n',
      20_000,
      500,
      'keeper log',
    );
    assert.equal(await interrupt(), 0);
    n.proc = undefined;
  });

  test('tskube reset leaves no pod, mount, KUBE-* or pod network rule, bridge, route, cgroup or data dir behind', async () => {
    const asked = spawnSync(
      'nsenter',
      [
        `--net=/run/netns/${netns}`,
        process.execPath,
        path.join(REPO, 'dist/cli/tskube.js'),
        'reset',
        `--data-dir=${dir}`,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    assert.equal(asked.status, 1);
    assert.match(asked.stderr, /stdin is not a terminal; use --force/, 'without a terminal it asks for --force');
    assert.ok(fs.existsSync(dir), 'and changes nothing');
    const out = sh(process.execPath, [path.join(REPO, 'dist/cli/tskube.js'), 'reset', '--force', `--data-dir=${dir}`], {
      netns,
      timeoutMs: 120_000,
    });
    assert.match(out, /removed:/);
    assert.match(out, /the tskube0 device/);
    assert.match(out, /kube-proxy: the iptables mode's rules/);
    assert.deepEqual(shims(), []);
    assert.deepEqual(await mountsUnder(dir), [], 'no mount under the node dirs');
    for (const save of ['iptables-save', 'ip6tables-save'])
      for (const table of ['nat', 'filter'])
        assert.doesNotMatch(
          sh(save, ['-t', table], { netns }),
          /KUBE-|TSKUBE-/,
          `no KUBE-* or TSKUBE-* rule in ${save} ${table}`,
        );
    assert.doesNotMatch(
      sh('nft', ['list', 'tables'], { netns }),
      /kube-proxy/,
      'no nftables table of the proxy in either family',
    );
    assert.equal(
      sh('ip', ['link', 'show', 'tskube0'], { netns, allowFail: true }).includes('tskube0:'),
      false,
      'no bridge',
    );
    assert.equal(sh('ip', ['route', 'show', 'proto', '77'], { netns }).trim(), '', 'no pod network route');
    assert.equal(fs.existsSync(dir), false, 'the data dir is gone');
    assert.equal(
      fs.existsSync(path.join('/sys/fs/cgroup/memory', e2eCgroupRoot(dir), 'kubepods')) ||
        fs.existsSync(path.join('/sys/fs/cgroup', e2eCgroupRoot(dir), 'kubepods')),
      false,
      'no kubepods cgroup',
    );
    assert.match(
      sh(process.execPath, [path.join(REPO, 'dist/cli/tskube.js'), 'reset', '--force', `--data-dir=${dir}`], { netns }),
      /nothing to remove/,
      'a second reset finds nothing',
    );
  });
});
