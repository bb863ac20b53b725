// e2e: a kubelet with --kubeconfig joins tskube apiserver running in its node's namespace;
// the real kubectl shows the Node Ready, with nodeInfo from the real containerd, and its Lease.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { APP_IMAGE, e2eSkipReason, REPO, sweepStale, TestNode } from './harness.js';
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

  test('a pod created with kubectl for this node runs in containerd; kubectl delete stops it with SIGTERM, then it is gone', async () => {
    as.kubectl(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'api-web' }, spec: { nodeName: 'node-a', terminationGracePeriodSeconds: 20, containers: [{ name: 'httpd', image: APP_IMAGE, command: ['/bin/sh', '-c', "trap 'echo got SIGTERM; exit 0' TERM; httpd -f -p 8080 -h /www & wait"] }] } }));
    const uid = as.kubectl(['get', 'pod', 'api-web', '-o', 'jsonpath={.metadata.uid}']);
    const c = await waitFor(async () => (await node.podContainers(uid)).find((x) => x.state === 'CONTAINER_RUNNING'), 60_000, 300, 'API pod running in containerd');
    const sb = (await node.podSandboxes(uid))[0]!;
    const ip = (await node.cri.podSandboxStatus(sb.id)).status?.network?.ip;
    assert.equal(await waitFor(() => node.httpGet(`http://${ip}:8080/`), 20_000, 300, 'HTTP from the API pod'), 'hello from tskube\n');
    // The kubelet writes the status back: kubectl shows it Running with the pod IP that answered.
    const wide = await waitFor(() => {
      const o = as.kubectl(['get', 'pod', 'api-web', '-o', 'wide']);
      return /1\/1\s+Running/.test(o) ? o : undefined;
    }, 30_000, 500, 'kubectl shows Running');
    assert.match(wide, new RegExp(`api-web\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${ip!.replace(/\./g, '\\.')}\\s+node-a`));
    assert.equal(as.kubectl(['get', 'pod', 'api-web', '-o', 'jsonpath={.status.containerStatuses[0].containerID}']), `containerd://${c.id}`);
    // The kubelet's events, in order, in kubectl describe.
    const events = await waitFor(() => {
      const d = as.kubectl(['describe', 'pod', 'api-web']);
      return /Started\s+\S+\s+kubelet\s+Started container httpd/.test(d) ? d : undefined;
    }, 20_000, 500, 'kubelet events in describe');
    assert.match(events, /Normal\s+Pulling\s+\S+\s+kubelet\s+Pulling image "127\.0\.0\.1:5000\/tskube\/app:1"[\s\S]*Normal\s+Pulled\s+\S+\s+kubelet\s+Successfully pulled image[\s\S]*Normal\s+Created\s+\S+\s+kubelet\s+Created container: httpd[\s\S]*Normal\s+Started\s+\S+\s+kubelet\s+Started container httpd/);
    const t0 = Date.now();
    assert.match(as.kubectl(['delete', 'pod', 'api-web', '--wait=true', '--timeout=60s']), /pod "api-web" deleted/);
    assert.ok(Date.now() - t0 < 15_000, 'the container exited on SIGTERM instead of waiting out the 20 s grace period');
    assert.throws(() => as.kubectl(['get', 'pod', 'api-web']), /not found/);
    await waitFor(async () => (await node.podSandboxes(uid)).length === 0, 30_000, 300, 'sandbox removed');
    const st = await node.cri.containerStatus(c.id).catch(() => undefined);
    assert.equal(st, undefined, 'container removed');
    assert.match(node.kubeletLog(), /pod default\/api-web terminated and deleted from the API/);
  });

  test('a static pod shows as <name>-<node> mirror pod with its status; kubectl delete brings it back and the container is untouched', async () => {
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(node.manifests, 'web.yaml'));
    const c = await waitFor(async () => (await node.podContainers()).find((x) => x.labels['io.kubernetes.pod.name'] === 'web-node-a' && x.state === 'CONTAINER_RUNNING'), 60_000, 300, 'static web running');
    const row = await waitFor(() => {
      const o = as.kubectl(['get', 'pods', '-o', 'wide']);
      return /web-node-a\s+1\/1\s+Running/.test(o) ? o : undefined;
    }, 30_000, 500, 'mirror pod Running in kubectl');
    assert.match(row, /web-node-a\s+1\/1\s+Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+node-a/);
    const m = JSON.parse(as.kubectl(['get', 'pod', 'web-node-a', '-o', 'json']));
    assert.ok(m.metadata.annotations['kubernetes.io/config.mirror'], 'config.mirror annotation');
    assert.equal(m.metadata.annotations['kubernetes.io/config.source'], 'file');
    assert.deepEqual(m.metadata.labels, { app: 'web' });
    const nodeUid = as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.metadata.uid}']);
    assert.deepEqual(m.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeUid, controller: true }]);
    const firstUid = m.metadata.uid;
    const startedBefore = (await node.cri.containerStatus(c.id)).started_at;
    assert.match(as.kubectl(['delete', 'pod', 'web-node-a', '--wait=false']), /deleted/);
    const back = await waitFor(() => {
      const u = as.kubectl(['get', 'pod', 'web-node-a', '-o', 'jsonpath={.metadata.uid} {.metadata.deletionTimestamp}']).trim();
      return u && u !== firstUid && !u.includes(' ') ? u : undefined;
    }, 30_000, 500, 'mirror pod recreated');
    assert.ok(back);
    const still = await node.cri.containerStatus(c.id);
    assert.equal(still.state, 'CONTAINER_RUNNING', 'the static pod kept running');
    assert.equal(still.started_at, startedBefore, 'same container, same start time');
    assert.equal((await node.podContainers()).filter((x) => x.labels['io.kubernetes.pod.name'] === 'web-node-a').length, 1, 'no new container');
    fs.rmSync(path.join(node.manifests, 'web.yaml'));
    await waitFor(() => {
      try {
        as.kubectl(['get', 'pod', 'web-node-a']);
        return false;
      } catch {
        return true;
      }
    }, 60_000, 500, 'mirror pod removed with the static pod');
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
