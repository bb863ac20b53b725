// e2e: an upgrade of the kubelet keeps what runs. The previous
// release of tskube (a git worktree at PREVIOUS, the last landed release
// before this kubelet's container-hash rule) starts a static pod and API pods
// on real containerd; it is stopped, this kubelet starts on the same root dir
// and adopts them: same container IDs, no restarts, no Killing events.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, E2E_ROOT, e2eSkipReason, REPO } from './harness.js';
import { sh, waitFor } from './proc.js';

/** The release to upgrade from; TSKUBE_UPGRADE_FROM picks another commit. */
const PREVIOUS = process.env.TSKUBE_UPGRADE_FROM ?? '131ec5ad61e7277594ddb8ba7e8d020789559cbd';
const haveCommit =
  sh('sh', ['-c', `git -C '${REPO}' cat-file -e '${PREVIOUS}^{commit}' && echo yes`], { allowFail: true }).trim() ===
  'yes';
const skip =
  clusterSkip(e2eSkipReason()) ??
  (haveCommit
    ? undefined
    : `commit ${PREVIOUS} is not in this clone (a shallow clone?): the upgrade test needs the previous release's sources`);

describe(
  'kubelet upgrade: containers started by the previous release are adopted',
  { skip, timeout: 8 * 60_000 },
  () => {
    const cluster = new TestCluster();
    const prev = path.join(E2E_ROOT, `prev-${PREVIOUS.slice(0, 8)}`);
    before(async () => {
      sh('git', ['-C', REPO, 'worktree', 'remove', '--force', prev], { allowFail: true });
      fs.rmSync(prev, { recursive: true, force: true });
      sh('git', ['-C', REPO, 'worktree', 'add', '--detach', prev, PREVIOUS]);
      fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(prev, 'node_modules'));
      await cluster.start();
      // This kubelet registered the node; now the old one takes over before any pod exists.
      await cluster.node.stopKubelet();
      cluster.node.startKubelet(cluster.kubeletFlags(), {}, prev);
    });
    after(async () => {
      await cluster.cleanup();
      sh('git', ['-C', REPO, 'worktree', 'remove', '--force', prev], { allowFail: true });
    });

    test('a static pod, a pod with an init container, probes, env and a volume, and a Deployment keep their containers across the upgrade', async () => {
      fs.writeFileSync(
        path.join(cluster.node.manifests, 'static-web.yaml'),
        `apiVersion: v1
kind: Pod
metadata: {name: static-web, namespace: default}
spec:
  containers:
  - name: web
    image: ${APP_IMAGE}
    command: [sh, -c, 'mkdir -p /tmp/w && echo hi > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w']
    readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
`,
      );
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'rich' },
        spec: {
          terminationGracePeriodSeconds: 1,
          volumes: [{ name: 'scratch', emptyDir: {} }],
          initContainers: [
            {
              name: 'setup',
              image: APP_IMAGE,
              command: ['sh', '-c', 'echo ready > /scratch/state'],
              volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
            },
          ],
          containers: [
            {
              name: 'main',
              image: APP_IMAGE,
              command: ['sh', '-c', 'sleep 3600'],
              env: [
                { name: 'MODE', value: 'upgrade' },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
              readinessProbe: { exec: { command: ['test', '-e', '/scratch/state'] }, periodSeconds: 1 },
              livenessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
            },
          ],
        },
      });
      cluster.apply({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'dep' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'dep' } },
          template: {
            metadata: { labels: { app: 'dep' } },
            spec: {
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
            },
          },
        },
      });
      const snapshot = (): string =>
        cluster
          .kubectl([
            'get',
            'pods',
            '-o',
            'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.containerStatuses[*].containerID} {.status.containerStatuses[*].restartCount} {.status.initContainerStatuses[*].containerID}{"\\n"}{end}',
          ])
          .trim()
          .split('\n')
          .sort()
          .join('\n');
      await waitFor(
        () => {
          const s = snapshot();
          return (
            s.split('\n').length === 4 &&
            s.split('\n').every((l) => / Running containerd:\/\//.test(l)) &&
            /static-web-node-a/.test(s)
          );
        },
        120_000,
        500,
        'four pods running under the previous release',
      );
      cluster.kubectl(['wait', '--for=condition=Ready', 'pod', '--all', '--timeout=60s']);
      const before = snapshot();
      const killsBefore = cluster.kubectl(['get', 'events', '--field-selector', 'reason=Killing', '-o', 'name']).trim();

      await cluster.node.stopKubelet();
      const from = cluster.node.kubeletLog().length;
      const kubelet = cluster.node.startKubelet(cluster.kubeletFlags());
      await waitFor(
        () => /static-web/.test(cluster.node.kubeletLog().slice(from)),
        60_000,
        500,
        'the new kubelet to read the static pod',
      );
      // Several syncs, relists and probe periods of the new kubelet; a restart would show in the snapshot.
      await new Promise((r) => setTimeout(r, 15_000));
      assert.equal(kubelet.child.exitCode, null, 'the new kubelet runs');
      cluster.kubectl(['wait', '--for=condition=Ready', 'pod', '--all', '--timeout=60s']);
      assert.equal(snapshot(), before, 'same containers, no restarts');
      assert.equal(
        cluster.kubectl(['get', 'events', '--field-selector', 'reason=Killing', '-o', 'name']).trim(),
        killsBefore,
        'nothing was killed',
      );
      assert.equal(
        cluster.kubectl(['exec', 'rich', '--', 'sh', '-c', 'echo $MODE $POD_NAME; cat /scratch/state']).trim(),
        'upgrade rich\nready',
      );
    });
  },
);
