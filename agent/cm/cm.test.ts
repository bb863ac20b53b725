import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { createLogger } from '../../kube/log.js';
import { podTotals } from '../../kube/pod-resources.js';
import { runtimeCgroupDriver } from '../cri/client.js';
import { containerLogsDir, linkContainerLog, logLinkName, removeContainerLogLinks } from '../pods/log-links.js';
import { cgroupParent, cgroupPath, parseCgroupRoot, podCgroup, podUidOf } from './cgroup-names.js';
import { ContainerManager } from './container-manager.js';
import { type Capacity, checkReservations, nodeResources, parseReserved, parseThreshold } from './node-allocatable.js';
import { burstableShares, oomScoreAdj, podCgroupResources, sharesToWeight } from './pod-cgroup-config.js';

const UID = '1234-abcd';
const pod = (
  containers: { requests?: Record<string, string>; limits?: Record<string, string> }[],
  extra: Record<string, unknown> = {},
): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: UID },
  spec: { containers: containers.map((r, i) => ({ name: `c${i}`, image: 'i', resources: r })), ...extra },
});
const guaranteed = pod([{ limits: { cpu: '500m', memory: '128Mi' } }, { limits: { cpu: '250m', memory: '64Mi' } }]);
const burstable = pod([
  { requests: { cpu: '100m', memory: '100Mi' }, limits: { memory: '200Mi' } },
  { requests: { cpu: '200m' } },
]);
const bestEffort = pod([{}]);
const log = createLogger('test', { sink: () => undefined });

const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

function fakeTree(version: 1 | 2): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroups-'));
  made.push(dir);
  if (version === 2) fs.writeFileSync(path.join(dir, 'cgroup.controllers'), 'cpuset cpu io memory pids');
  else for (const c of ['cpu', 'cpuacct', 'memory', 'pids', 'devices']) fs.mkdirSync(path.join(dir, c));
  return dir;
}
const read = (f: string): string => fs.readFileSync(f, 'utf8').trim();

test('cgroup names and parents for each QoS class, driver and cgroup root', () => {
  const root = parseCgroupRoot('/', 'cgroupfs');
  assert.equal(cgroupPath(podCgroup(root, 'Guaranteed', UID), 'cgroupfs'), `/kubepods/pod${UID}`);
  assert.equal(cgroupPath(podCgroup(root, 'Burstable', UID), 'cgroupfs'), `/kubepods/burstable/pod${UID}`);
  assert.equal(cgroupPath(podCgroup(root, 'BestEffort', UID), 'cgroupfs'), `/kubepods/besteffort/pod${UID}`);
  assert.equal(
    cgroupParent(podCgroup(root, 'Burstable', UID), 'systemd'),
    '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd.slice',
  );
  assert.equal(
    cgroupParent(podCgroup(root, 'Guaranteed', UID), 'systemd'),
    '/kubepods.slice/kubepods-pod1234_abcd.slice',
  );
  assert.equal(
    cgroupPath(podCgroup(parseCgroupRoot('/tskube/node-a', 'cgroupfs'), 'BestEffort', UID), 'cgroupfs'),
    `/tskube/node-a/kubepods/besteffort/pod${UID}`,
  );
  assert.deepEqual(parseCgroupRoot('/system.slice/my-root.slice', 'systemd'), ['my', 'root']);
  assert.equal(podUidOf(`pod${UID}`), UID);
  assert.equal(podUidOf('kubepods-burstable-pod1234_abcd.slice'), UID);
  assert.equal(podUidOf('burstable'), undefined);
});

test('pod cgroup resources as upstream ResourceConfigForPod; Burstable shares; oom_score_adj; cgroup v2 weights', () => {
  assert.deepEqual(podCgroupResources(guaranteed), {
    cpuShares: 768,
    cpuQuota: 75_000,
    cpuPeriod: 100_000,
    memoryLimit: 192 * 2 ** 20,
  });
  // Not every container limits CPU or memory: shares only.
  assert.deepEqual(podCgroupResources(burstable), { cpuShares: 307 });
  assert.deepEqual(podCgroupResources(pod([{ requests: { cpu: '100m' }, limits: { cpu: '1', memory: '1Gi' } }])), {
    cpuShares: 102,
    cpuQuota: 100_000,
    cpuPeriod: 100_000,
    memoryLimit: 2 ** 30,
  });
  assert.deepEqual(podCgroupResources(bestEffort, { podPidsLimit: 100 }), { cpuShares: 2, pidsLimit: 100 });
  // Overhead counts (RuntimeClass), and init containers as upstream: the largest of them or the sum of the rest.
  assert.equal(
    podCgroupResources(pod([{ limits: { cpu: '1', memory: '1Gi' } }], { overhead: { cpu: '250m', memory: '120Mi' } }))
      .memoryLimit,
    2 ** 30 + 120 * 2 ** 20,
  );
  assert.equal(
    podTotals(
      {
        containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }],
        initContainers: [{ name: 'i', resources: { requests: { cpu: '500m' } } }],
      },
      'requests',
    ).cpu,
    500,
  );
  assert.equal(
    podTotals(
      {
        containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }],
        initContainers: [
          { name: 's', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
          { name: 'i', resources: { requests: { cpu: '250m' } } },
        ],
      },
      'requests',
    ).cpu,
    450,
  );
  assert.equal(burstableShares([guaranteed, burstable, bestEffort, burstable]), 614);
  assert.equal(burstableShares([bestEffort]), 2);
  const mem = 4 * 2 ** 30;
  assert.equal(oomScoreAdj(guaranteed, guaranteed.spec!.containers[0]!, mem), -997);
  assert.equal(oomScoreAdj(bestEffort, bestEffort.spec!.containers[0]!, mem), 1000);
  assert.equal(oomScoreAdj(burstable, burstable.spec!.containers[0]!, mem), 976);
  assert.equal(
    oomScoreAdj(burstable, burstable.spec!.containers[1]!, mem),
    999,
    "no memory request: 999, never BestEffort's 1000",
  );
  assert.equal(
    oomScoreAdj(
      pod([{ requests: { memory: '4Gi' } }]),
      { name: 'c0', resources: { requests: { memory: '4Gi' } } },
      mem,
    ),
    3,
  );
  assert.equal(
    oomScoreAdj(
      { ...bestEffort, spec: { ...bestEffort.spec!, priorityClassName: 'system-node-critical' } },
      bestEffort.spec!.containers[0]!,
      mem,
    ),
    -997,
  );
  assert.equal(sharesToWeight(2), 1);
  assert.equal(sharesToWeight(1024), 39);
  assert.equal(sharesToWeight(262_144), 10_000);
});

test('the container manager on a fake cgroup v1 tree: QoS hierarchy, node-allocatable limit, pod cgroups made, limited and removed, orphans swept', async () => {
  const mount = fakeTree(1);
  const cm = new ContainerManager(
    {
      cgroupDriver: 'cgroupfs',
      cgroupsPerQOS: true,
      cgroupRoot: '/node-a',
      enforceNodeAllocatable: ['pods'],
      podPidsLimit: -1,
      cgroupMount: mount,
    },
    { cpuMilli: 2000, memory: 8 * 2 ** 30, reservedCpuMilli: 500, reservedMemory: 2 ** 30 },
    log,
  );
  await cm.start();
  assert.equal(read(path.join(mount, 'cpu/node-a/kubepods/cpu.shares')), '1536');
  assert.equal(read(path.join(mount, 'memory/node-a/kubepods/memory.limit_in_bytes')), String(7 * 2 ** 30));
  assert.equal(read(path.join(mount, 'cpu/node-a/kubepods/besteffort/cpu.shares')), '2');
  assert.equal(await cm.podParent(guaranteed), `/node-a/kubepods/pod${UID}`);
  assert.equal(read(path.join(mount, `memory/node-a/kubepods/pod${UID}/memory.limit_in_bytes`)), String(192 * 2 ** 20));
  assert.equal(read(path.join(mount, `cpu/node-a/kubepods/pod${UID}/cpu.cfs_quota_us`)), '75000');
  assert.ok(fs.existsSync(path.join(mount, `pids/node-a/kubepods/pod${UID}`)));
  await cm.updateQos([burstable]);
  assert.equal(read(path.join(mount, 'cpu/node-a/kubepods/burstable/cpu.shares')), '307');
  // runc made the pod's cgroup in another hierarchy too: removal reaches it.
  fs.mkdirSync(path.join(mount, `devices/node-a/kubepods/pod${UID}/ctr`), { recursive: true });
  await cm.removePod(UID);
  for (const h of ['cpu', 'memory', 'pids', 'devices'])
    assert.ok(!fs.existsSync(path.join(mount, `${h}/node-a/kubepods/pod${UID}`)), h);
  await cm.podParent({ ...bestEffort, metadata: { ...bestEffort.metadata, uid: 'live' } });
  await cm.podParent({ ...bestEffort, metadata: { ...bestEffort.metadata, uid: 'dead' } });
  assert.deepEqual(await cm.removeOrphans((uid) => uid === 'live'), ['dead']);
  assert.deepEqual(fs.readdirSync(path.join(mount, 'memory/node-a/kubepods/besteffort')), ['podlive']);
  const off = new ContainerManager(
    {
      cgroupDriver: 'cgroupfs',
      cgroupsPerQOS: false,
      cgroupRoot: '/',
      enforceNodeAllocatable: [],
      podPidsLimit: -1,
      cgroupMount: mount,
    },
    { cpuMilli: 1000, memory: 2 ** 30, reservedCpuMilli: 0, reservedMemory: 0 },
    log,
  );
  assert.equal(await off.podParent(guaranteed), '', 'cgroupsPerQOS=false: the runtime decides');
});

test('the container manager on a fake cgroup v2 tree: controllers handed down, weights and cpu.max; systemd makes its own slices', async () => {
  const mount = fakeTree(2);
  const cm = new ContainerManager(
    {
      cgroupDriver: 'cgroupfs',
      cgroupsPerQOS: true,
      cgroupRoot: '/',
      enforceNodeAllocatable: [],
      podPidsLimit: 64,
      cgroupMount: mount,
    },
    { cpuMilli: 4000, memory: 2 ** 33, reservedCpuMilli: 0, reservedMemory: 0 },
    log,
  );
  assert.equal(cm.tree.version, 2);
  await cm.start();
  assert.equal(read(path.join(mount, 'cgroup.subtree_control')), '+cpu +memory +pids');
  assert.ok(!fs.existsSync(path.join(mount, 'kubepods/memory.max')), 'no enforceNodeAllocatable: kubepods unlimited');
  await cm.podParent(guaranteed);
  assert.equal(read(path.join(mount, `kubepods/pod${UID}/cpu.max`)), '75000 100000');
  assert.equal(read(path.join(mount, `kubepods/pod${UID}/memory.max`)), String(192 * 2 ** 20));
  assert.equal(read(path.join(mount, `kubepods/pod${UID}/cpu.weight`)), String(sharesToWeight(768)));
  assert.equal(read(path.join(mount, `kubepods/pod${UID}/pids.max`)), '64');
  const sd = new ContainerManager(
    {
      cgroupDriver: 'systemd',
      cgroupsPerQOS: true,
      cgroupRoot: '/',
      enforceNodeAllocatable: ['pods'],
      podPidsLimit: -1,
      cgroupMount: fakeTree(2),
    },
    { cpuMilli: 4000, memory: 2 ** 33, reservedCpuMilli: 0, reservedMemory: 0 },
    log,
  );
  await sd.start();
  assert.equal(
    await sd.podParent(burstable),
    '/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd.slice',
  );
  assert.ok(!fs.existsSync(path.join(sd.tree.mount, 'kubepods.slice')), 'systemd, not the kubelet, makes the slices');
  fs.mkdirSync(
    path.join(sd.tree.mount, 'kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd.slice'),
    { recursive: true },
  );
  await sd.afterSandbox(pod([{ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '100m', memory: '100Mi' } }]));
  assert.equal(
    read(
      path.join(
        sd.tree.mount,
        'kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_abcd.slice/memory.max',
      ),
    ),
    String(2 ** 30),
  );
});

test("allocatable = capacity − reserved − hard eviction thresholds; threshold and reservation parsing; the runtime's cgroup driver", () => {
  const cap: Capacity = {
    cpuMilli: 4000,
    memory: 8 * 2 ** 30,
    ephemeralStorage: 100 * 2 ** 30,
    pods: 110,
    hugepages: { 'hugepages-2Mi': 2 ** 30 },
  };
  const r = {
    kubeReserved: parseReserved('kubeReserved', { cpu: '250m', memory: '512Mi' }),
    systemReserved: parseReserved('systemReserved', { memory: '512Mi', 'ephemeral-storage': '1Gi' }),
    evictionHard: { 'memory.available': parseThreshold('100Mi'), 'nodefs.available': parseThreshold('10%') },
  };
  const { capacity, allocatable } = nodeResources(cap, r);
  assert.deepEqual(capacity, {
    cpu: '4',
    'ephemeral-storage': '100Gi',
    memory: '8Gi',
    pods: '110',
    'hugepages-2Mi': '1Gi',
  });
  assert.equal(allocatable.cpu, '3750m');
  assert.equal(
    allocatable.memory,
    `${8 * 1024 - 1024 - 100 - 1024}Mi`,
    'memory less reservations, the threshold and the hugepages',
  );
  assert.equal(allocatable['ephemeral-storage'], '89Gi');
  assert.equal(
    nodeResources({ ...cap, ephemeralStorage: 1000 }, r).allocatable['ephemeral-storage'],
    '0',
    'never below zero',
  );
  assert.equal(allocatable.pods, '110');
  assert.throws(
    () => checkReservations(cap, { ...r, systemReserved: { memory: 9 * 2 ** 30 } }),
    /kubeReserved \+ systemReserved memory \(9728Mi\) is more than the node's capacity \(8Gi\)/,
  );
  assert.throws(() => parseReserved('kubeReserved', { gpu: '1' }), /kubeReserved: unsupported resource "gpu"/);
  assert.throws(
    () => parseReserved('kubeReserved', { memory: 'lots' }),
    /kubeReserved\[memory\]: quantities must match/,
  );
  assert.throws(() => parseThreshold('150%'), /invalid percentage/);
  assert.equal(
    runtimeCgroupDriver({
      config: JSON.stringify({
        containerd: { defaultRuntimeName: 'runc', runtimes: { runc: { options: { SystemdCgroup: true } } } },
      }),
    }),
    'systemd',
  );
  assert.equal(
    runtimeCgroupDriver({
      config: JSON.stringify({ containerd: { defaultRuntimeName: 'runc', runtimes: { runc: { options: {} } } } }),
    }),
    'cgroupfs',
  );
  assert.equal(runtimeCgroupDriver({}), undefined);
});

test('/var/log/containers links: upstream names, made and removed with their containers; dangling ones swept', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loglinks-'));
  assert.equal(containerLogsDir('/var/log/pods'), '/var/log/containers');
  const id = 'a'.repeat(64);
  assert.equal(logLinkName('web', 'default', 'nginx', id), `web_default_nginx-${id}.log`);
  assert.equal(logLinkName('p'.repeat(300), 'ns', 'c', id).length, 255);
  const target = path.join(dir, 'target.log');
  fs.writeFileSync(target, 'hello\n');
  await linkContainerLog(path.join(dir, 'containers'), 'web', 'default', 'nginx', id, target);
  assert.equal(fs.readFileSync(path.join(dir, 'containers', `web_default_nginx-${id}.log`), 'utf8'), 'hello\n');
  await linkContainerLog(
    path.join(dir, 'containers'),
    'old',
    'default',
    'c',
    'b'.repeat(64),
    path.join(dir, 'gone.log'),
  );
  assert.equal(await removeContainerLogLinks(path.join(dir, 'containers'), new Set()), 1, 'the dangling link');
  assert.equal(await removeContainerLogLinks(path.join(dir, 'containers'), new Set([id])), 1);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'containers')), []);
});

test('pod-level resources decide the pod cgroup where set: requests for shares, limits for quota and memory', () => {
  const withPodLevel = (resources: object, containers: object[] = [{}]): Pod => {
    const p = pod(containers as Parameters<typeof pod>[0]);
    (p.spec as { resources?: object }).resources = resources;
    return p;
  };
  assert.deepEqual(
    podCgroupResources(
      withPodLevel({ requests: { cpu: '20m', memory: '35Mi' }, limits: { cpu: '20m', memory: '35Mi' } }),
    ),
    { cpuShares: 20, cpuQuota: 2000, cpuPeriod: 100_000, memoryLimit: 35 * 2 ** 20 },
  );
  // A pod-level cpu limit alone: quota, and no memory limit though no container limits memory either.
  assert.deepEqual(podCgroupResources(withPodLevel({ requests: { cpu: '100m' }, limits: { cpu: '200m' } })), {
    cpuShares: 102,
    cpuQuota: 20_000,
    cpuPeriod: 100_000,
  });
});
