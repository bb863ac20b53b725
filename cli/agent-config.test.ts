import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { loadAgentConfig } from './agent-config.js';
import { parseDuration } from './duration.js';

test('Go durations', () => {
  assert.equal(parseDuration('20s'), 20_000);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('1.5h'), 5_400_000);
  assert.throws(() => parseDuration('20'), /invalid duration "20"/);
  assert.throws(() => parseDuration('s'), /invalid duration/);
});

test('upstream defaults', () => {
  const c = loadAgentConfig(['--hostname-override=Node-1'], () => {});
  assert.equal(c.nodeName, 'node-1');
  assert.equal(c.staticPodPath, '/etc/kubernetes/manifests');
  assert.equal(c.fileCheckFrequencyMs, 20_000);
  assert.equal(c.containerRuntimeEndpoint, 'unix:///run/containerd/containerd.sock');
  assert.equal(c.rootDir, '/var/lib/kubelet');
  assert.equal(c.podLogsDir, '/var/log/pods');
});

test('flags in both --a=b and --a b forms; flags beat the config file; unknown config fields warn', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-cfg-'));
  const f = path.join(dir, 'k.yaml');
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: /from/config\nfileCheckFrequency: 5s\npodLogsDir: /logs\nmaxPods: 50\ncpuManagerPolicy: static\n',
  );
  const warnings: string[] = [];
  const c = loadAgentConfig(['--config', f, '--pod-manifest-path', '/from/flag'], (w) => warnings.push(w));
  assert.equal(c.staticPodPath, '/from/flag');
  assert.equal(c.fileCheckFrequencyMs, 5000);
  assert.equal(c.podLogsDir, '/logs');
  assert.equal(c.maxPods, 50);
  assert.deepEqual(warnings, [`${f}: field cpuManagerPolicy is not supported by this kubelet and is ignored`]);
  fs.rmSync(dir, { recursive: true });
});

test('bad flags and config name what is wrong', () => {
  assert.throws(() => loadAgentConfig(['--bogus=1'], () => {}), /unknown flag: --bogus/);
  assert.throws(
    () => loadAgentConfig(['--file-check-frequency=soon'], () => {}),
    /--file-check-frequency: invalid duration "soon"/,
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-cfg-'));
  const f = path.join(dir, 'k.yaml');
  fs.writeFileSync(f, 'apiVersion: v1\nkind: Pod\n');
  assert.throws(
    () => loadAgentConfig([`--config=${f}`], () => {}),
    /k\.yaml: kind: must be "KubeletConfiguration", got "Pod"/,
  );
  fs.rmSync(dir, { recursive: true });
});

test('node registration, status and manifest URL settings from flags and KubeletConfiguration', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-cfg-'));
  const f = path.join(dir, 'k.yaml');
  fs.writeFileSync(
    f,
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'staticPodURL: http://10.0.0.1/pods.yaml',
      'staticPodURLHeader: {Authorization: ["Bearer x"]}',
      'httpCheckFrequency: 30s',
      'registerWithTaints: [{key: dedicated, value: infra, effect: NoSchedule}]',
      'nodeStatusUpdateFrequency: 4s',
      'nodeStatusReportFrequency: 1m',
      'nodeLeaseDurationSeconds: 20',
      'registerNode: false',
    ].join('\n'),
  );
  const c = loadAgentConfig([`--config=${f}`, '--node-labels=zone=a,kubelet.kubernetes.io/role=edge'], () => {});
  assert.equal(c.staticPodURL, 'http://10.0.0.1/pods.yaml');
  assert.deepEqual(c.staticPodURLHeader, { Authorization: ['Bearer x'] });
  assert.equal(c.httpCheckFrequencyMs, 30_000);
  assert.deepEqual(c.registerWithTaints, [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }]);
  assert.deepEqual(c.nodeLabels, { zone: 'a', 'kubelet.kubernetes.io/role': 'edge' });
  assert.equal(c.nodeStatusUpdateFrequencyMs, 4000);
  assert.equal(c.nodeStatusReportFrequencyMs, 60_000);
  assert.equal(c.nodeLeaseDurationSeconds, 20);
  assert.equal(c.registerNode, false);
  const d = loadAgentConfig(
    ['--register-with-taints=a=b:NoExecute,c:NoSchedule', '--manifest-url-header=a:hello,b:again', '--max-pods=20'],
    () => {},
  );
  assert.deepEqual(d.registerWithTaints, [
    { key: 'a', value: 'b', effect: 'NoExecute' },
    { key: 'c', effect: 'NoSchedule' },
  ]);
  assert.deepEqual(d.staticPodURLHeader, { a: ['hello'], b: ['again'] });
  assert.equal(d.maxPods, 20);
  assert.equal(d.registerNode, true);
  assert.equal(d.nodeLeaseDurationSeconds, 40);
  assert.throws(
    () => loadAgentConfig(['--register-with-taints=a:Sometimes'], () => {}),
    /--register-with-taints: invalid taint "a:Sometimes"/,
  );
  assert.throws(
    () => loadAgentConfig(['--max-pods=0'], () => {}),
    /--max-pods: must be an integer of at least 1, got 0/,
  );
  fs.writeFileSync(f, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: lots\n');
  assert.throws(() => loadAgentConfig([`--config=${f}`], () => {}), /k\.yaml: maxPods: must be an integer, got "lots"/);
  fs.rmSync(dir, { recursive: true });
});

test("kubeadm's files: its drop-in flags and the config.yaml it writes (zero values mean default; unsupported fields warned once)", () => {
  const warnings: string[] = [];
  const cfgFile = path.join(import.meta.dirname, 'testdata', 'kubeadm-kubelet-config.yaml');
  const c = loadAgentConfig(
    [
      '--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf',
      '--kubeconfig=/etc/kubernetes/kubelet.conf',
      `--config=${cfgFile}`,
      '--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock',
      '--pod-infra-container-image=registry.k8s.io/pause:3.10',
      '--node-ip=10.0.0.2',
      '--hostname-override=w1',
    ],
    (m) => warnings.push(m),
  );
  assert.equal(c.bootstrapKubeconfig, '/etc/kubernetes/bootstrap-kubelet.conf');
  assert.equal(c.kubeconfig, '/etc/kubernetes/kubelet.conf');
  assert.equal(c.containerRuntimeEndpoint, 'unix:///var/run/containerd/containerd.sock');
  assert.equal(c.nodeName, 'w1');
  assert.equal(c.clientCAFile, '/etc/kubernetes/pki/ca.crt');
  assert.equal(c.staticPodPath, '/etc/kubernetes/manifests');
  // "0s" in kubeadm's file means upstream's default, never zero.
  assert.deepEqual(
    [
      c.fileCheckFrequencyMs,
      c.httpCheckFrequencyMs,
      c.nodeStatusUpdateFrequencyMs,
      c.nodeStatusReportFrequencyMs,
      c.syncFrequencyMs,
    ],
    [20_000, 20_000, 10_000, 300_000, 60_000],
  );
  assert.ok(
    warnings.includes(
      'Flag --pod-infra-container-image has been deprecated, will be removed in 1.35. Image garbage collector will get sandbox image information from CRI.',
    ),
  );
  assert.equal(c.rotateCertificates, true);
  assert.ok(
    warnings.includes(`${cfgFile}: field cpuManagerReconcilePeriod is not supported by this kubelet and is ignored`),
  );
  // kubeadm's systemd driver is read, not ignored; the rest of the node-resource settings take upstream's defaults.
  assert.equal(c.cgroupDriver, 'systemd');
  assert.ok(!warnings.some((w) => /cgroupDriver/.test(w)));
  assert.deepEqual(
    [c.cgroupsPerQOS, c.cgroupRoot, c.enforceNodeAllocatable, c.podPidsLimit],
    [true, '/', ['pods'], -1],
  );
  assert.deepEqual(Object.keys(c.evictionHard).sort(), [
    'imagefs.available',
    'imagefs.inodesFree',
    'memory.available',
    'nodefs.available',
    'nodefs.inodesFree',
  ]);
  assert.equal(new Set(warnings).size, warnings.length, 'each warning once');
  // Pod DNS, as kubeadm sets it: the kube-dns Service's address and the cluster domain; resolvConf defaults.
  assert.deepEqual(
    [c.clusterDNS, c.clusterDomain, c.resolvConf],
    [['10.96.0.10'], 'cluster.local', '/etc/resolv.conf'],
  );
  assert.ok(!warnings.some((w) => /clusterDNS|clusterDomain/.test(w)));
});

test('pod DNS settings: flags win over the file, resolvConf "" means none, a bad clusterDNS address names the field', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-dnscfg-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'k.yaml');
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS: [10.96.0.10]\nclusterDomain: cluster.local.\nresolvConf: ""\n',
  );
  const c = loadAgentConfig([`--config=${f}`], () => {});
  assert.deepEqual([c.clusterDNS, c.clusterDomain, c.resolvConf], [['10.96.0.10'], 'cluster.local', '']);
  const o = loadAgentConfig(
    [
      `--config=${f}`,
      '--cluster-dns=10.0.0.10,10.0.0.11',
      '--cluster-domain=k8s.test',
      '--resolv-conf=/run/systemd/resolve/resolv.conf',
    ],
    () => {},
  );
  assert.deepEqual(
    [o.clusterDNS, o.clusterDomain, o.resolvConf],
    [['10.0.0.10', '10.0.0.11'], 'k8s.test', '/run/systemd/resolve/resolv.conf'],
  );
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS: [kube-dns]\n',
  );
  assert.throws(
    () => loadAgentConfig([`--config=${f}`], () => {}),
    new RegExp(`${f}: clusterDNS: "kube-dns" is not an IP address`),
  );
});

test('node-resource settings: reservations, hard eviction thresholds and the cgroup driver, with errors naming the flag or field', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-rescfg-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const f = path.join(dir, 'k.yaml');
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nkubeReserved: {cpu: 100m, memory: 256Mi}\nevictionHard: {memory.available: 200Mi}\ncgroupRoot: /tskube\nenforceNodeAllocatable: [none]\n',
  );
  const c = loadAgentConfig([`--config=${f}`, '--system-reserved=memory=1Gi,ephemeral-storage=2Gi'], () => {});
  assert.deepEqual(c.kubeReserved, { cpu: 100, memory: 256 * 2 ** 20 });
  assert.deepEqual(c.systemReserved, { memory: 2 ** 30, 'ephemeral-storage': 2 * 2 ** 30 });
  assert.deepEqual(
    c.evictionHard,
    { 'memory.available': { quantity: 200 * 2 ** 20 } },
    'a user-given evictionHard replaces the defaults, as upstream',
  );
  assert.equal(c.cgroupRoot, '/tskube');
  assert.deepEqual(c.enforceNodeAllocatable, []);
  assert.deepEqual(
    loadAgentConfig(['--eviction-hard=memory.available<1Gi,nodefs.available<5%'], () => {}).evictionHard,
    { 'memory.available': { quantity: 2 ** 30 }, 'nodefs.available': { percentage: 0.05 } },
  );
  assert.throws(
    () => loadAgentConfig(['--cgroup-driver=docker'], () => {}),
    /--cgroup-driver: must be cgroupfs or systemd, got "docker"/,
  );
  assert.throws(
    () => loadAgentConfig(['--kube-reserved=cpu=lots'], () => {}),
    /--kube-reserved\[cpu\]: quantities must match/,
  );
  assert.throws(
    () => loadAgentConfig(['--eviction-hard=memory.free<1Gi'], () => {}),
    /--eviction-hard: unsupported eviction signal memory.free/,
  );
  assert.throws(
    () => loadAgentConfig(['--eviction-hard=nodefs.available<200%'], () => {}),
    /--eviction-hard\[nodefs.available\]: invalid percentage: 200%/,
  );
  assert.throws(
    () => loadAgentConfig(['--enforce-node-allocatable=pods,kube-reserved'], () => {}),
    /--enforce-node-allocatable: "kube-reserved" is not supported by this kubelet/,
  );
  assert.deepEqual(
    [c.imageGCHighThresholdPercent, c.imageGCLowThresholdPercent, c.imageMinimumGCAgeMs, c.imageMaximumGCAgeMs],
    [85, 80, 120_000, 0],
  );
  assert.throws(
    () => loadAgentConfig(['--image-gc-high-threshold=50', '--image-gc-low-threshold=60'], () => {}),
    /invalid configuration: imageGCLowThresholdPercent \(--image-gc-low-threshold\) 60 must be less than imageGCHighThresholdPercent \(--image-gc-high-threshold\) 50/,
  );
  assert.throws(
    () => loadAgentConfig(['--image-gc-high-threshold=101'], () => {}),
    /imageGCHighThresholdPercent \(--image-gc-high-threshold\) 101 must be between 0 and 100, inclusive/,
  );
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimageMinimumGCAge: 5m\nimageMaximumGCAge: 1m\n',
  );
  assert.throws(
    () => loadAgentConfig([`--config=${f}`], () => {}),
    /imageMaximumGCAge 60s must be greater than imageMinimumGCAge 300s/,
  );
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionSoft: {memory.available: 300Mi}\n',
  );
  assert.throws(
    () => loadAgentConfig([`--config=${f}`], () => {}),
    /evictionSoftGracePeriod: grace period must be specified for the soft eviction threshold memory.available/,
  );
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionSoft: {memory.available: 300Mi}\nevictionSoftGracePeriod: {memory.available: 1m30s}\n',
  );
  assert.deepEqual(loadAgentConfig([`--config=${f}`], () => {}).evictionSoft, {
    'memory.available': { threshold: { quantity: 300 * 2 ** 20 }, gracePeriodMs: 90_000 },
  });
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nshutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n',
  );
  assert.deepEqual(
    (({ shutdownGracePeriodMs, shutdownGracePeriodCriticalPodsMs }) => [
      shutdownGracePeriodMs,
      shutdownGracePeriodCriticalPodsMs,
    ])(loadAgentConfig([`--config=${f}`], () => {})),
    [30_000, 10_000],
  );
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nshutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 30s\n',
  );
  assert.throws(
    () => loadAgentConfig([`--config=${f}`], () => {}),
    /invalid configuration: shutdownGracePeriodCriticalPods \(30s\) must be <= shutdownGracePeriod \(10s\)/,
  );
  fs.writeFileSync(
    f,
    'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nsystemReserved: {memory: [1]}\n',
  );
  assert.throws(
    () => loadAgentConfig([`--config=${f}`], () => {}),
    /k\.yaml: systemReserved: must be a map of strings/,
  );
  fs.rmSync(dir, { recursive: true });
});
