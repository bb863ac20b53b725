// e2e: a kubelet with --kubeconfig joins tskube apiserver (with NodeRestriction on, so everything
// the kubelet writes passes upstream's rules) running in its node's namespace. The real kubectl
// drives it: pods are scheduled, run, report status and events, and are deleted gracefully; static
// pods show as mirror pods; status catches up after an apiserver outage; the node goes NotReady
// when its kubelet dies and comes back Ready, with no container restarted.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eSkipReason, REPO } from './harness.js';
import { alive, stopPid, waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());

describe('kubelet joins an apiserver', { skip, timeout: 8 * 60_000 }, () => {
  // A short node-monitor grace period keeps the NotReady test quick; the default is 40 s.
  const cluster = new TestCluster({ apiserverFlags: ['--node-monitor-grace-period=16s', '--node-monitor-period=2s'] });
  const gone = (args: string[]): boolean => cluster.gone(args);
  let node: TestCluster['node'];
  let as: TestCluster['as'];

  before(async () => {
    await cluster.start();
    node = cluster.node;
    as = cluster.as;
  });
  after(() => cluster.cleanup());

  test('kubectl get node shows Ready, with the runtime version and a renewed Lease', async () => {
    const out = await waitFor(
      () => {
        const o = as.kubectl(['get', 'nodes']);
        return /node-a\s+Ready/.test(o) ? o : undefined;
      },
      60_000,
      500,
      'node Ready',
    );
    assert.match(out, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nnode-a\s+Ready\s+<none>\s+\d+s\s+v1\.37\.2-tskube/);
    assert.match(
      as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.status.nodeInfo.containerRuntimeVersion}']),
      /^containerd:\/\/1\./,
    );
    assert.equal(as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.status.capacity.pods}']), '110');
    assert.equal(
      as.kubectl([
        'get',
        'lease',
        'node-a',
        '-n',
        'kube-node-lease',
        '-o',
        'jsonpath={.spec.holderIdentity} {.spec.leaseDurationSeconds}',
      ]),
      'node-a 40',
    );
    const first = as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
    const renewed = await waitFor(
      () => {
        const t = as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
        return t !== first ? t : undefined;
      },
      25_000,
      1000,
      'lease renewal within ~10 s',
    );
    assert.ok(renewed > first);
  });

  test('kubectl run: the scheduler binds the pod to our node, it runs and answers at the IP kubectl shows; describe lists the events in order; kubectl delete stops it with SIGTERM, then it is gone', async () => {
    assert.match(as.kubectl(['run', 'web', `--image=${APP_IMAGE}`, '--port=8080']), /pod\/web created/);
    const wide = await waitFor(
      () => {
        const o = as.kubectl(['get', 'pod', 'web', '-o', 'wide']);
        return /1\/1\s+Running/.test(o) ? o : undefined;
      },
      60_000,
      500,
      'kubectl shows web Running',
    );
    const ip = as.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.podIP}']);
    assert.match(wide, new RegExp(`web\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${ip.replace(/\./g, '\\.')}\\s+node-a`));
    assert.equal(
      await waitFor(() => node.httpGet(`http://${ip}:8080/`), 20_000, 300, 'HTTP from the pod IP'),
      'hello from tskube\n',
    );
    const uid = as.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.metadata.uid}']);
    const c = (await node.podContainers(uid)).find((x) => x.state === 'CONTAINER_RUNNING')!;
    assert.equal(
      as.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.containerStatuses[0].containerID}']),
      `containerd://${c.id}`,
    );
    const events = await waitFor(
      () => {
        const d = as.kubectl(['describe', 'pod', 'web']);
        return /Started\s+\S+\s+kubelet\s+Started container web/.test(d) ? d : undefined;
      },
      20_000,
      500,
      'kubelet events in describe',
    );
    assert.match(
      events,
      /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\/web to node-a[\s\S]*Normal\s+Pulling\s+\S+\s+kubelet\s+Pulling image "127\.0\.0\.1:5000\/tskube\/app:1"[\s\S]*Normal\s+Pulled\s+\S+\s+kubelet\s+Successfully pulled image[\s\S]*Normal\s+Created\s+\S+\s+kubelet\s+Created container: web[\s\S]*Normal\s+Started\s+\S+\s+kubelet\s+Started container web/,
    );
    const t0 = Date.now();
    assert.match(as.kubectl(['delete', 'pod', 'web', '--wait=true', '--timeout=60s']), /pod "web" deleted/);
    assert.ok(Date.now() - t0 < 15_000, 'the container exited on SIGTERM instead of waiting out the 30 s grace period');
    assert.ok(gone(['get', 'pod', 'web']));
    await waitFor(async () => (await node.podSandboxes(uid)).length === 0, 30_000, 300, 'sandbox removed');
    assert.equal(await node.cri.containerStatus(c.id).catch(() => undefined), undefined, 'container removed');
    assert.match(node.kubeletLog(), /event Normal Killing pod\/default\/web: Stopping container web/);
    assert.match(node.kubeletLog(), /pod default\/web terminated and deleted from the API/);
  });

  test('a pod that fits nowhere stays Pending with a FailedScheduling event that says why', async () => {
    as.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'greedy' },
        spec: { containers: [{ name: 'c', image: APP_IMAGE, resources: { requests: { cpu: '500' } } }] },
      }),
    );
    const d = await waitFor(
      () => {
        const o = as.kubectl(['describe', 'pod', 'greedy']);
        return /FailedScheduling/.test(o) ? o : undefined;
      },
      20_000,
      500,
      'FailedScheduling',
    );
    assert.match(
      d,
      /Warning\s+FailedScheduling\s+\S+\s+default-scheduler\s+0\/1 nodes are available: 1 Insufficient cpu\. preemption: 0\/1 nodes are available: 1 No preemption victims found for incoming pod\./,
    );
    assert.match(as.kubectl(['get', 'pod', 'greedy']), /greedy\s+0\/1\s+Pending/);
    as.kubectl(['delete', 'pod', 'greedy', '--wait=true']);
  });

  test('an image that does not exist shows ErrImagePull, then ImagePullBackOff, in kubectl get pods', async () => {
    // Watched, not polled: ErrImagePull may show for less than a second before the next sync turns it into ImagePullBackOff.
    const out = path.join(node.dir, 'nosuch-watch.out');
    const w = as.spawnKubectl(
      [
        'get',
        'pods',
        '--field-selector=metadata.name=nosuch',
        '-w',
        '-o',
        'jsonpath={.status.containerStatuses[0].state.waiting.reason}{"\\n"}',
      ],
      out,
    );
    await waitFor(() => fs.existsSync(out), 5000, 50, 'watch started');
    await new Promise((r) => setTimeout(r, 1000)); // the watch is open before the pod exists
    as.kubectl(['run', 'nosuch', '--image=127.0.0.1:5000/tskube/nosuch:1']);
    let seen: string[] = [];
    try {
      await waitFor(
        () => {
          seen = fs
            .readFileSync(out, 'utf8')
            .split('\n')
            .filter(Boolean)
            .filter((r, i, a) => a[i - 1] !== r);
          // If kubectl's watch came up late and missed the first ErrImagePull, the next pull attempt shows it again.
          return seen.includes('ErrImagePull') && seen.lastIndexOf('ImagePullBackOff') > seen.indexOf('ErrImagePull');
        },
        60_000,
        250,
        'ErrImagePull, then ImagePullBackOff',
      );
    } finally {
      await stopPid(w.pid, 2000);
    }
    assert.ok(
      seen.indexOf('ErrImagePull') >= 0 && seen.indexOf('ErrImagePull') < seen.lastIndexOf('ImagePullBackOff'),
      `ErrImagePull before ImagePullBackOff: ${seen.join(' -> ')}`,
    );
    assert.match(as.kubectl(['get', 'pod', 'nosuch']), /nosuch\s+0\/1\s+(ErrImagePull|ImagePullBackOff)/);
    const msg = as.kubectl([
      'get',
      'pod',
      'nosuch',
      '-o',
      'jsonpath={.status.containerStatuses[0].state.waiting.message}',
    ]);
    assert.match(msg, /Back-off pulling image "127\.0\.0\.1:5000\/tskube\/nosuch:1"/);
    as.kubectl(['delete', 'pod', 'nosuch', '--wait=true', '--timeout=60s']);
  });

  test('a static pod shows as <name>-<node> mirror pod with its status; kubectl delete brings it back and the container is untouched', async () => {
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(node.manifests, 'web.yaml'));
    const c = await waitFor(
      async () =>
        (await node.podContainers()).find(
          (x) => x.labels['io.kubernetes.pod.name'] === 'web-node-a' && x.state === 'CONTAINER_RUNNING',
        ),
      60_000,
      300,
      'static web running',
    );
    const row = await waitFor(
      () => {
        const o = as.kubectl(['get', 'pods', '-o', 'wide']);
        return /web-node-a\s+1\/1\s+Running/.test(o) ? o : undefined;
      },
      30_000,
      500,
      'mirror pod Running in kubectl',
    );
    assert.match(row, /web-node-a\s+1\/1\s+Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+node-a/);
    const m = JSON.parse(as.kubectl(['get', 'pod', 'web-node-a', '-o', 'json']));
    assert.ok(m.metadata.annotations['kubernetes.io/config.mirror'], 'config.mirror annotation');
    assert.equal(m.metadata.annotations['kubernetes.io/config.source'], 'file');
    assert.deepEqual(m.metadata.labels, { app: 'web' });
    const nodeUid = as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.metadata.uid}']);
    assert.deepEqual(m.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: nodeUid, controller: true },
    ]);
    const firstUid = m.metadata.uid;
    const startedBefore = (await node.cri.containerStatus(c.id)).started_at;
    assert.match(as.kubectl(['delete', 'pod', 'web-node-a', '--wait=false']), /deleted/);
    const back = await waitFor(
      () => {
        const u = as
          .kubectl(['get', 'pod', 'web-node-a', '-o', 'jsonpath={.metadata.uid} {.metadata.deletionTimestamp}'])
          .trim();
        return u && u !== firstUid && !u.includes(' ') ? u : undefined;
      },
      30_000,
      500,
      'mirror pod recreated',
    );
    assert.ok(back);
    const still = await node.cri.containerStatus(c.id);
    assert.equal(still.state, 'CONTAINER_RUNNING', 'the static pod kept running');
    assert.equal(still.started_at, startedBefore, 'same container, same start time');
    assert.equal(
      (await node.podContainers()).filter((x) => x.labels['io.kubernetes.pod.name'] === 'web-node-a').length,
      1,
      'no new container',
    );
    fs.rmSync(path.join(node.manifests, 'web.yaml'));
    await waitFor(() => gone(['get', 'pod', 'web-node-a']), 60_000, 500, 'mirror pod removed with the static pod');
  });

  test('with the apiserver away, pods keep running and restarting; status catches up when it is back', async () => {
    as.kubectl(['run', 'steady', `--image=${APP_IMAGE}`]);
    await waitFor(
      () => /steady\s+1\/1\s+Running\s+0/.test(as.kubectl(['get', 'pod', 'steady'])),
      60_000,
      500,
      'steady Running',
    );
    const uid = as.kubectl(['get', 'pod', 'steady', '-o', 'jsonpath={.metadata.uid}']);
    await as.stop();
    await waitFor(
      () => /failed to renew lease kube-node-lease\/node-a, will retry/.test(node.kubeletLog()),
      25_000,
      500,
      'a failed renewal',
    );
    // The container dies while nobody can be told: the kubelet restarts it anyway.
    const first = (await node.podContainers(uid)).find((x) => x.state === 'CONTAINER_RUNNING')!;
    await node.cri.stopContainer(first.id, 0);
    await waitFor(
      async () => (await node.podContainers(uid)).some((x) => x.state === 'CONTAINER_RUNNING' && x.id !== first.id),
      30_000,
      300,
      'restarted while the apiserver is down',
    );
    assert.ok(node.kubelet && alive(node.kubelet.pid), 'kubelet still running');
    await as.start(cluster.apiserverFlags());
    assert.match(as.kubectl(['get', 'nodes']), /node-a/, 'the Node survived the apiserver restart');
    await waitFor(
      () => /steady\s+1\/1\s+Running\s+1\b/.test(as.kubectl(['get', 'pod', 'steady'])),
      30_000,
      500,
      'kubectl shows 1 restart after the apiserver is back',
    );
    assert.match(
      as.kubectl(['get', 'pod', 'steady', '-o', 'jsonpath={.status.containerStatuses[0].lastState.terminated.reason}']),
      /^(Completed|Error)$/,
    );
    const t = await waitFor(
      () => {
        const o = as.kubectl(['get', 'lease', 'node-a', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
        return o && Date.parse(o) > Date.now() - 15_000 ? o : undefined;
      },
      30_000,
      1000,
      'lease renewed after the apiserver came back',
    );
    assert.ok(t);
  });

  test('a dead kubelet turns the node NotReady (Unknown, tainted) after the grace period; restarted, it is Ready again and no container restarted', async () => {
    const uid = as.kubectl(['get', 'pod', 'steady', '-o', 'jsonpath={.metadata.uid}']);
    const before = (await node.podContainers(uid)).find((x) => x.state === 'CONTAINER_RUNNING')!;
    await node.stopKubelet('SIGKILL');
    const t0 = Date.now();
    await waitFor(() => /node-a\s+NotReady/.test(as.kubectl(['get', 'nodes'])), 60_000, 1000, 'node NotReady');
    assert.ok(Date.now() - t0 >= 10_000, 'not before the lease had time to expire');
    assert.equal(
      as.kubectl([
        'get',
        'node',
        'node-a',
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}',
      ]),
      'Unknown NodeStatusUnknown',
    );
    assert.match(
      as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.spec.taints[*].key}']),
      /node\.kubernetes\.io\/unreachable/,
    );
    const podReady = (): string =>
      as.kubectl(['get', 'pod', 'steady', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
    await waitFor(() => podReady() === 'False', 20_000, 1000, 'pods on the node marked not Ready');
    cluster.startKubelet();
    await waitFor(() => /node-a\s+Ready/.test(as.kubectl(['get', 'nodes'])), 60_000, 1000, 'node Ready again');
    await waitFor(
      () => as.kubectl(['get', 'node', 'node-a', '-o', 'jsonpath={.spec.taints}']) === '',
      20_000,
      1000,
      'taints removed',
    );
    await waitFor(() => podReady() === 'True', 30_000, 1000, 'pod Ready again');
    assert.match(as.kubectl(['get', 'pod', 'steady']), /steady\s+1\/1\s+Running\s+1\b/);
    const now = (await node.podContainers(uid)).filter((x) => x.state === 'CONTAINER_RUNNING');
    assert.deepEqual(
      now.map((x) => x.id),
      [before.id],
      'same container: the kubelet restart restarted nothing',
    );
    as.kubectl(['delete', 'pod', 'steady', '--wait=true', '--timeout=60s']);
  });
});
