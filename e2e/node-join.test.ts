// e2e: a kubelet with --kubeconfig joins tskube apiserver running in its node's namespace;
// the real kubectl shows the Node Ready, with nodeInfo from the real containerd, and its Lease.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { e2eSkipReason, sweepStale, TestNode } from './harness.js';
import { ApiServerNode } from './apiserver-node.js';
import { alive, sh, waitFor } from './proc.js';

const skip = e2eSkipReason() ?? (sh('sh', ['-c', 'command -v kubectl'], { allowFail: true }).trim() ? undefined : 'kubectl missing');

describe('kubelet joins an apiserver', { skip, timeout: 5 * 60_000 }, () => {
  let node: TestNode;
  let as: ApiServerNode;
  before(async () => {
    await sweepStale();
    node = new TestNode('node-a');
    await node.start();
    as = new ApiServerNode(node.netns);
    await as.start([`--data-dir=${path.join(node.dir, 'apiserver-data')}`]);
    node.startKubelet([`--kubeconfig=${path.join(as.dir, 'pki', 'node-node-a.kubeconfig')}`]);
  });
  after(async () => {
    await as?.cleanup();
    await node?.cleanup();
  });

  test('kubectl get node shows Ready, with the runtime version and a renewed Lease', async () => {
    const out = await waitFor(() => {
      const o = as.kubectl(['get', 'nodes']);
      return /node-a\s+Ready/.test(o) ? o : undefined;
    }, 60_000, 500, 'node Ready');
    assert.match(out, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nnode-a\s+Ready\s+<none>\s+\d+s\s+v1\.32\.0-tskube/);
    assert.match(as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.status.nodeInfo.containerRuntimeVersion}']), /^containerd:\/\/1\./);
    assert.equal(as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.status.capacity.pods}']), '110');
    assert.equal(as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.holderIdentity} {.spec.leaseDurationSeconds}']), 'node-a 40');
    const first = as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
    const renewed = await waitFor(() => {
      const t = as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
      return t !== first ? t : undefined;
    }, 25_000, 1000, 'lease renewal within ~10 s');
    assert.ok(renewed > first);
  });

  test('the kubelet keeps running when the apiserver goes away, and re-registers status when it is back', async () => {
    await as.stop();
    await waitFor(() => /failed to renew lease kube-node-lease\/node-a, will retry/.test(node.kubeletLog()), 25_000, 500, 'a failed renewal');
    assert.ok(node.kubelet && alive(node.kubelet.pid), 'kubelet still running');
    await as.start([`--data-dir=${path.join(node.dir, 'apiserver-data')}`]);
    assert.match(as.kubectl(['get', 'nodes']), /node-a/, 'the Node survived the apiserver restart');
    const t = await waitFor(() => {
      const o = as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
      return o && Date.parse(o) > Date.now() - 15_000 ? o : undefined;
    }, 30_000, 1000, 'lease renewed after the apiserver came back');
    assert.ok(t);
  });
});
