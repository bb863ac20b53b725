// e2e: transient CRI faults never restart what is healthy. The
// kubelet talks to containerd through a proxy that fails 30 % of
// PodSandboxStatus, ContainerStatus and ListContainers calls (10 % of
// ListPodSandbox) and stalls every call for 5 s twice a minute, while 30 pods
// run (29 from a Deployment, one a hostNetwork static pod), and the kubelet
// restarts halfway. Over the fault window (TSKUBE_FAULT_SECONDS, default 180)
// no sandbox is recreated, no container restarted, no pod leaves Running; once
// the faults stop, every pod is Ready again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { CriFaultProxy } from './cri-fault-proxy.js';
import { APP_IMAGE, e2eSkipReason } from './harness.js';
import { waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());
const SECONDS = Number(process.env.TSKUBE_FAULT_SECONDS ?? 180);

describe('CRI faults: a flaky runtime restarts nothing', { skip, timeout: (SECONDS + 420) * 1000 }, () => {
  const cluster = new TestCluster();
  let proxy: CriFaultProxy;
  before(async () => {
    await cluster.start();
    await cluster.node.stopKubelet();
    proxy = new CriFaultProxy(path.join(cluster.node.dir, 'faulty.sock'), cluster.node.socket);
    await proxy.start();
    cluster.node.startKubelet([
      ...cluster.kubeletFlags(),
      `--container-runtime-endpoint=unix://${path.join(cluster.node.dir, 'faulty.sock')}`,
    ]);
  });
  after(async () => {
    await cluster.cleanup();
    await proxy?.stop();
  });

  test(`30 pods through ${SECONDS} s of failed and stalled CRI calls and a kubelet restart: same sandboxes, same containers, no restarts, still Running; Ready again after`, async () => {
    fs.writeFileSync(
      path.join(cluster.node.manifests, 'etcd-like.yaml'),
      `apiVersion: v1
kind: Pod
metadata: {name: etcd-like, namespace: kube-system}
spec:
  hostNetwork: true
  containers: [{name: c, image: ${APP_IMAGE}, command: [sleep, '36000']}]
`,
    );
    cluster.apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'steady' },
      spec: {
        replicas: 29,
        selector: { matchLabels: { app: 'steady' } },
        template: {
          metadata: { labels: { app: 'steady' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: 'c',
                image: APP_IMAGE,
                command: ['sleep', '36000'],
                readinessProbe: { exec: { command: ['true'] }, periodSeconds: 5 },
              },
            ],
          },
        },
      },
    });
    const allReady = (): boolean => {
      const r = cluster
        .kubectl([
          'get',
          'pods',
          '-A',
          '-o',
          'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status} {end}',
        ])
        .trim()
        .split(/\s+/);
      return r.length === 30 && r.every((x) => x === 'True');
    };
    const allPods = (): string[] =>
      cluster
        .kubectl([
          'get',
          'pods',
          '-A',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}{"\\n"}{end}',
        ])
        .trim()
        .split('\n')
        .filter(Boolean);
    await waitFor(
      () => {
        const p = allPods();
        return p.length === 30 && p.every((l) => / Running containerd:\/\/\S+ 0$/.test(l));
      },
      300_000,
      1000,
      '30 pods running',
    );
    await waitFor(allReady, 120_000, 1000, 'all 30 pods Ready');
    const cri = cluster.node.cri;
    const runtime = async () => ({
      sandboxes: (await cri.listPodSandbox()).map((s) => `${s.id} ${s.state}`).sort(),
      containers: (await cri.listContainers()).map((c) => `${c.id} ${c.state}`).sort(),
    });
    const before = await runtime();
    const apiBefore = allPods().sort();
    assert.equal(before.sandboxes.length, 30);

    proxy.faults.fail = { PodSandboxStatus: 0.3, ContainerStatus: 0.3, ListContainers: 0.3, ListPodSandbox: 0.1 };
    const end = Date.now() + SECONDS * 1000;
    const seen = new Set<string>();
    let nextStall = Date.now() + 10_000;
    let nextTouch = Date.now();
    let touch = 0;
    // Halfway, the kubelet restarts under the faults: its workers know no sandbox yet and ask PodSandboxStatus for
    // each (later syncs have its answer and do not ask again).
    let restartAt = Date.now() + (SECONDS * 1000) / 2;
    while (Date.now() < end) {
      if (Date.now() >= restartAt) {
        restartAt = Infinity;
        await cluster.node.stopKubelet();
        cluster.node.startKubelet([
          ...cluster.kubeletFlags(),
          `--container-runtime-endpoint=unix://${path.join(cluster.node.dir, 'faulty.sock')}`,
        ]);
      }
      if (Date.now() >= nextStall) {
        proxy.faults.stallUntil = Date.now() + 5000;
        nextStall = Date.now() + 30_000;
      }
      if (Date.now() >= nextTouch) {
        // A label change makes every pod worker sync (and read its sandbox and containers) now, not at the next resync.
        cluster.kubectl(['label', 'pods', '-l', 'app=steady', `touch=${++touch}`, '--overwrite']);
        nextTouch = Date.now() + 15_000;
      }
      // Every pod stays Running with its first container throughout.
      for (const l of allPods()) if (!apiBefore.includes(l)) seen.add(l);
      await new Promise((r) => setTimeout(r, 2000));
    }
    proxy.faults.fail = {};
    proxy.faults.stallUntil = 0;
    assert.deepEqual([...seen], [], 'no pod changed phase, container or restart count during the faults');
    for (const m of ['PodSandboxStatus', 'ContainerStatus', 'ListContainers'])
      assert.ok((proxy.injected[m] ?? 0) > 0, `faults were injected into ${m}: ${JSON.stringify(proxy.injected)}`);

    // Status catches up; nothing was recreated or restarted in the runtime.
    await waitFor(allReady, 60_000, 1000, 'all 30 pods Ready again');
    assert.deepEqual(await runtime(), before, 'same sandboxes and containers in containerd');
    assert.deepEqual(allPods().sort(), apiBefore);
    assert.equal(cluster.node.kubelet?.child.exitCode, null, 'the kubelet runs');
  });
});
