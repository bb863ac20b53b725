// e2e: a fixed sample of upstream's own conformance tests, run by
// `npm run conformance`'s runner against the real control plane and two tskube
// nodes, so a regression in what they check fails CI. The whole suite is
// `npm run conformance` (docs/conformance.md).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';

import { clusterSkip } from './cluster.js';
import { DEFAULT_FOCUS, runOptions } from './conformance/plan.js';
import { runConformance } from './conformance/run.js';
import { e2eSkipReason } from './harness.js';
import { upstreamSkip } from './upstream-control-plane.js';

/** Tests by their full names: pods, probes, lifecycle, volumes of API data, DNS, Services. */
export const SAMPLE = [
  '[sig-node] Pods should get a host IP [Conformance] [NodeConformance]',
  '[sig-node] Pods should be submitted and removed [Conformance] [NodeConformance]',
  '[sig-node] Pods should be updated [Conformance] [NodeConformance]',
  '[sig-node] Pods should support remote command execution over websockets [Conformance] [NodeConformance]',
  '[sig-node] Pods should support retrieving logs from the container over websockets [Conformance] [NodeConformance]',
  '[sig-node] Pods should contain environment variables for services [Conformance] [NodeConformance]',
  '[sig-node] Probing container should be restarted with a /healthz http liveness probe [Conformance] [NodeConformance]',
  '[sig-node] Probing container should be restarted with a exec "cat /tmp/health" liveness probe [Conformance] [NodeConformance]',
  '[sig-node] Probing container with readiness probe should not be ready before initial delay and never restart [Conformance] [NodeConformance]',
  '[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart exec hook properly [Conformance] [NodeConformance]',
  '[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute prestop exec hook properly [Conformance] [NodeConformance]',
  '[sig-node] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart http hook properly [Conformance] [NodeConformance]',
  '[sig-node] Container Runtime blackbox test when starting a container that exits should run with the expected status [Conformance] [NodeConformance]',
  '[sig-node] Container Runtime blackbox test on terminated container should report termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is set [Conformance] [NodeConformance]',
  '[sig-node] InitContainer should invoke init containers on a RestartNever pod [Conformance] [NodeConformance]',
  '[sig-node] InitContainer should invoke init containers on a RestartAlways pod [Conformance] [NodeConformance]',
  '[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs [Conformance] [NodeConformance]',
  '[sig-node] KubeletManagedEtcHosts should test kubelet managed /etc/hosts file [Conformance] [NodeConformance]',
  '[sig-node] Variable Expansion should allow composing env vars into new env vars [Conformance] [NodeConformance]',
  '[sig-node] Security Context When creating a container with runAsUser should run the container with uid 65534 [LinuxOnly] [Conformance] [NodeConformance]',
  '[sig-node] ConfigMap should be consumable via environment variable [Conformance] [NodeConformance]',
  '[sig-node] Secrets should be consumable from pods in env vars [Conformance] [NodeConformance]',
  '[sig-node] Downward API should provide pod name, namespace and IP address as env vars [Conformance] [NodeConformance]',
  '[sig-storage] ConfigMap should be consumable from pods in volume [Conformance] [NodeConformance]',
  '[sig-storage] ConfigMap updates should be reflected in volume [Conformance] [NodeConformance]',
  '[sig-storage] Secrets should be consumable from pods in volume [Conformance] [NodeConformance]',
  '[sig-storage] Downward API volume should provide podname only [Conformance] [NodeConformance]',
  '[sig-storage] Downward API volume should update labels on modification [Conformance] [NodeConformance]',
  '[sig-storage] Projected combined should project all components that make up the projection API [Projection] [Conformance] [NodeConformance]',
  '[sig-storage] Projected configMap should be consumable from pods in volume [Conformance] [NodeConformance]',
  '[sig-storage] EmptyDir volumes should support (root,0644,tmpfs) [LinuxOnly] [Conformance] [NodeConformance]',
  '[sig-network] Networking Granular Checks: Pods should function for intra-pod communication: http [Conformance] [NodeConformance]',
  '[sig-network] DNS should provide DNS for the cluster [Conformance]',
  '[sig-network] DNS should provide DNS for services [Conformance]',
  '[sig-network] Services should serve a basic endpoint from pods [Conformance]',
  '[sig-network] Services should be able to create a functioning NodePort service [Conformance]',
];

/** The suite's spec texts begin with its top container's; a name is matched as their end. */
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const skip =
  clusterSkip(e2eSkipReason()) ??
  upstreamSkip([
    'etcd',
    'kube-apiserver',
    'kube-controller-manager',
    'kube-scheduler',
    'kubeadm',
    'kubectl',
    'e2e.test',
    'ginkgo',
    'agnhost',
    'busybox',
    'nnp',
    'sample-apiserver',
  ]);

describe(
  'upstream conformance tests (a fixed sample) against the real control plane and tskube nodes',
  { skip, timeout: 30 * 60_000 },
  () => {
    test(`${SAMPLE.length} tests, every one passes`, async () => {
      const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-conformance-'));
      const o = runOptions(
        new Map([
          ['focus', `(?:^|\\s)(?:${SAMPLE.map(escape).join('|')})$`],
          ['report-dir', reportDir],
          ['parallel', '4'],
        ]),
      );
      const results = await runConformance(o);
      assert.equal(
        results.length,
        SAMPLE.length,
        `each sample test ran once: ${results.map((r) => r.name).join('\n')}`,
      );
      const notPassed = results
        .filter((r) => r.outcome !== 'passed')
        .map((r) => `${r.outcome}: ${r.name}\n  ${(r.message ?? '').split('\n')[0]}`);
      assert.deepEqual(notPassed, [], `reports in ${reportDir}`);
      assert.ok(
        SAMPLE.filter((n) => n.includes('[NodeConformance]')).length >= 30,
        'at least 30 [NodeConformance] tests',
      );
      assert.ok(new RegExp(DEFAULT_FOCUS).test(SAMPLE[0]!));
      fs.rmSync(reportDir, { recursive: true, force: true });
    });
  },
);
