// e2e: the kubelet's node resources on real containerd and the
// real cgroup filesystem: Guaranteed, Burstable and BestEffort pods in the
// QoS hierarchy under the node's --cgroup-root with upstream's pod limits
// and oom_score_adj, seen from /sys/fs/cgroup and from inside the
// containers; capacity and allocatable with ephemeral-storage and the
// reservations; /var/log/containers links that come and go with containers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CgroupTree } from '../agent/cm/cgroupfs.js';
import { buildImage, pushImage } from '../images/build.js';
import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eCgroupRoot, e2eSkipReason, PAUSE_IMAGE, REGISTRY } from './harness.js';
import { sh, waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());
const MiB = 2 ** 20;
const memTotal = Number(/^MemTotal:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024;
// The pods' memory: capacity less the 256Mi reserved below. Pressure once the pods' working set passes 150Mi.
const podMemoryThreshold = memTotal - 256 * MiB - 150 * MiB;

describe('node resources', { skip, timeout: 8 * 60_000 }, () => {
  const cluster = new TestCluster({
    kubeletConfig: `kubeReserved: {cpu: 100m, memory: 100Mi}\nsystemReserved: {memory: 156Mi}\nevictionHard: {memory.available: 100Mi, allocatableMemory.available: "${podMemoryThreshold}", nodefs.available: 40%}\nevictionPressureTransitionPeriod: 15s\nnodeStatusUpdateFrequency: 3s\n`,
    kubeletEnv: { TSKUBE_EVICTION_PERIOD: '2000', TSKUBE_IMAGE_GC_PERIOD: '2000' },
  });
  // A small kubelet root filesystem, so that one pod's emptyDir can bring disk pressure.
  before(() =>
    cluster.start(
      async (node) => void sh('mount', ['-t', 'tmpfs', '-o', 'size=128m', 'tskube-e2e-root', node.kubeletRoot]),
    ),
  );
  after(() => cluster.cleanup());
  const kubectl = (args: string[]) => cluster.kubectl(args);
  const exec = (pod: string, cmd: string) =>
    spawnSync(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        'kubectl',
        `--kubeconfig=${cluster.as.kubeconfig}`,
        'exec',
        pod,
        '--',
        'sh',
        '-c',
        cmd,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    ).stdout.trim();
  const tree = new CgroupTree();
  const root = (): string => e2eCgroupRoot(cluster.node.dir);
  const read = async (cg: string, controller: string, file: string): Promise<string | undefined> =>
    tree.read(cg, controller, file);
  const pod = (name: string, resources: object) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'], resources }],
    },
  });

  test('the node reports capacity and allocatable with ephemeral-storage, less the reservations and hard eviction thresholds', async () => {
    await waitFor(() => /Ready/.test(kubectl(['get', 'node', cluster.node.name])), 60_000, 300, 'node Ready');
    const st = JSON.parse(kubectl(['get', 'node', cluster.node.name, '-o', 'jsonpath={.status}'])) as {
      capacity: Record<string, string>;
      allocatable: Record<string, string>;
      daemonEndpoints: { kubeletEndpoint: { Port: number } };
    };
    assert.match(st.capacity['ephemeral-storage'] ?? '', /^\d+(Ki|Mi|Gi)?$/);
    assert.ok(
      Number(st.allocatable['ephemeral-storage']) > 0 || /Ki|Mi|Gi/.test(st.allocatable['ephemeral-storage'] ?? ''),
    );
    const cpus = Number(st.capacity.cpu);
    assert.equal(st.allocatable.cpu, `${cpus * 1000 - 100}m`);
    const mi = (q: string): number =>
      q.endsWith('Ki')
        ? Number(q.slice(0, -2)) / 1024
        : q.endsWith('Mi')
          ? Number(q.slice(0, -2))
          : q.endsWith('Gi')
            ? Number(q.slice(0, -2)) * 1024
            : Number(q) / 2 ** 20;
    assert.equal(
      Math.round(mi(st.capacity.memory!) - mi(st.allocatable.memory!)),
      100 + 156 + 100,
      'kube- and system-reserved, and memory.available<100Mi',
    );
    assert.equal(st.daemonEndpoints.kubeletEndpoint.Port, 10250);
  });

  test('Guaranteed, Burstable and BestEffort pods land in their QoS cgroups with the pod limits, and oom_score_adj as upstream', async () => {
    cluster.apply(pod('g', { limits: { cpu: '200m', memory: '64Mi' } }));
    cluster.apply(pod('b', { requests: { cpu: '100m', memory: '32Mi' }, limits: { memory: '96Mi' } }));
    cluster.apply(pod('be', {}));
    await waitFor(
      () => (kubectl(['get', 'pods', '--no-headers']).match(/1\/1\s+Running/g) ?? []).length === 3,
      90_000,
      500,
      'three pods running',
    );
    const uid = (n: string) => kubectl(['get', 'pod', n, '-o', 'jsonpath={.metadata.uid}']);
    const kp = `${root()}/kubepods`;
    // kubepods: the node's allocatable (capacity less the reservations) as its memory limit.
    const capacity = Number(fs.readFileSync('/proc/meminfo', 'utf8').match(/^MemTotal:\s+(\d+) kB/m)![1]) * 1024;
    assert.equal(await read(kp, 'memory', 'memory.limit_in_bytes'), String(capacity - 256 * 2 ** 20));
    const g = `${kp}/pod${uid('g')}`;
    assert.equal(await read(g, 'memory', 'memory.limit_in_bytes'), String(64 * 2 ** 20));
    assert.equal(await read(g, 'cpu', 'cpu.cfs_quota_us'), '20000');
    assert.equal(await read(g, 'cpu', 'cpu.shares'), '204');
    const b = `${kp}/burstable/pod${uid('b')}`;
    assert.equal(await read(b, 'cpu', 'cpu.shares'), '102');
    assert.equal(
      await read(b, 'memory', 'memory.limit_in_bytes'),
      String(96 * 2 ** 20),
      'every container limits memory: the pod does too',
    );
    assert.equal(await read(b, 'cpu', 'cpu.cfs_quota_us'), '-1', 'no CPU limit anywhere: none on the pod');
    assert.equal(
      await read(`${kp}/burstable`, 'cpu', 'cpu.shares'),
      '102',
      'the Burstable class gets what its pods request',
    );
    const be = `${kp}/besteffort/pod${uid('be')}`;
    assert.equal(await read(be, 'cpu', 'cpu.shares'), '2');
    // Inside: each container's cgroup sits in its pod's, and its processes carry the QoS's oom_score_adj.
    assert.match(exec('g', 'cat /proc/self/cgroup'), new RegExp(`memory:${g.replace(/[/.]/g, '\\$&')}/[0-9a-f]{64}`));
    // A containerd with restrict_oom_score_adj (this project's, for hosts without CAP_SYS_RESOURCE) clamps to its own score.
    const runtimeAdj = Number(fs.readFileSync(`/proc/${cluster.node.containerd!.pid}/oom_score_adj`, 'utf8'));
    assert.equal(exec('g', 'cat /proc/1/oom_score_adj'), String(Math.max(-997, runtimeAdj)));
    assert.equal(exec('be', 'cat /proc/1/oom_score_adj'), '1000');
    const memTotal = capacity;
    assert.equal(exec('b', 'cat /proc/1/oom_score_adj'), String(1000 - Math.floor((1000 * 32 * 2 ** 20) / memTotal)));
    assert.equal(exec('g', 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes'), String(64 * 2 ** 20));
    // The kubelet API's stats read the same cgroups: pod memory from the pod cgroup, the cAdvisor series with its path.
    const api = (p: string) =>
      sh(
        'curl',
        [
          '-sk',
          '--max-time',
          '5',
          '-H',
          `Authorization: Bearer ${cluster.as.token('kubernetes-admin')}`,
          `https://127.0.0.1:10250${p}`,
        ],
        { netns: cluster.node.netns },
      );
    const summary = JSON.parse(api('/stats/summary')) as {
      pods: {
        podRef: { name: string };
        memory: { workingSetBytes: number };
        'ephemeral-storage': { usedBytes: number };
      }[];
    };
    const gStats = summary.pods.find((p) => p.podRef.name === 'g')!;
    assert.ok(gStats.memory.workingSetBytes > 0, "the pod cgroup's working set");
    assert.equal(typeof gStats['ephemeral-storage'].usedBytes, 'number');
    assert.match(
      api('/metrics/cadvisor'),
      new RegExp(
        `container_memory_working_set_bytes\\{container="c",id="${g.replace(/[/.]/g, '\\$&')}/[0-9a-f]{64}",image="${APP_IMAGE.replace(/[/.]/g, '\\$&')}",name="[0-9a-f]{64}",namespace="default",pod="g"\\} \\d+`,
      ),
    );
  });

  test('/var/log/containers links name each container and go with it; pod cgroups go with their pods', async () => {
    const linksDir = path.join(path.dirname(cluster.node.podLogsDir), 'containers');
    const id = kubectl(['get', 'pod', 'g', '-o', 'jsonpath={.status.containerStatuses[0].containerID}']).replace(
      'containerd://',
      '',
    );
    const link = path.join(linksDir, `g_default_c-${id}.log`);
    assert.ok(fs.lstatSync(link).isSymbolicLink());
    assert.match(fs.readlinkSync(link), new RegExp(`default_g_[0-9a-f-]+/c/0\\.log$`));
    const uidG = kubectl(['get', 'pod', 'g', '-o', 'jsonpath={.metadata.uid}']);
    kubectl(['delete', 'pod', 'g', 'b', 'be', '--wait=true']);
    await waitFor(() => !fs.existsSync(link), 30_000, 300, 'the link removed with its container');
    await waitFor(() => !tree.exists(`${root()}/kubepods/pod${uidG}`), 30_000, 300, 'the pod cgroup removed');
    assert.deepEqual(await tree.children(`${root()}/kubepods/besteffort`), []);
  });

  const nodeJson = () =>
    JSON.parse(kubectl(['get', 'node', cluster.node.name, '-o', 'json'])) as {
      spec: { taints?: { key: string; effect: string }[] };
      status: { conditions: { type: string; status: string }[] };
    };
  const condition = (type: string) => nodeJson().status.conditions.find((c) => c.type === type)?.status;
  const taints = () => (nodeJson().spec.taints ?? []).map((t) => `${t.key}:${t.effect}`);
  const phaseOf = (name: string) => kubectl(['get', 'pod', name, '-o', 'jsonpath={.status.phase} {.status.reason}']);

  test('an emptyDir filling the small root filesystem brings DiskPressure and its taint; the BestEffort offender is Evicted, not its neighbour; then both clear', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bystander' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            resources: { requests: { cpu: '10m', 'ephemeral-storage': '10Mi' } },
          },
        ],
      },
    });
    await waitFor(() => phaseOf('bystander') === 'Running ', 60_000, 300, 'bystander running');
    assert.equal(condition('DiskPressure'), 'False');
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'filler' },
      spec: {
        terminationGracePeriodSeconds: 30,
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sh', '-c', 'dd if=/dev/zero of=/data/f bs=1M count=90; sleep 3600'],
            volumeMounts: [{ name: 'scratch', mountPath: '/data' }],
          },
        ],
      },
    });
    await waitFor(() => phaseOf('filler') === 'Failed Evicted', 90_000, 500, 'filler evicted');
    const filler = JSON.parse(kubectl(['get', 'pod', 'filler', '-o', 'json'])) as {
      status: { message: string; conditions: { type: string; reason?: string }[] };
    };
    // The emptyDir is pod-level usage; a container's writable layer, when it wrote any, is named as upstream does.
    assert.match(
      filler.status.message,
      /^The node was low on resource: ephemeral-storage\. Threshold quantity: \d+(Ki|Mi)?, available: \d+(Ki|Mi)?\. (Container c was using \d+(Ki|Mi)?, request is 0, has larger consumption of ephemeral-storage\. )?$/,
    );
    assert.ok(
      filler.status.conditions.some((c) => c.type === 'DisruptionTarget' && c.reason === 'TerminationByKubelet'),
    );
    assert.match(
      kubectl([
        'get',
        'events',
        '--field-selector',
        'reason=Evicted,involvedObject.name=filler',
        '-o',
        'jsonpath={.items[*].message}',
      ]),
      /low on resource: ephemeral-storage/,
    );
    assert.match(
      kubectl([
        'get',
        'events',
        '--field-selector',
        'reason=EvictionThresholdMet',
        '-o',
        'jsonpath={.items[*].message}',
      ]),
      /Attempting to reclaim ephemeral-storage/,
    );
    await waitFor(
      () => condition('DiskPressure') === 'True' || taints().includes('node.kubernetes.io/disk-pressure:NoSchedule'),
      30_000,
      300,
      'DiskPressure reported',
    );
    await waitFor(
      () => taints().includes('node.kubernetes.io/disk-pressure:NoSchedule'),
      30_000,
      300,
      'the disk-pressure taint',
    );
    // The filler's emptyDir went with it: the pressure passes, the taint goes, the neighbour never moved.
    await waitFor(
      () =>
        condition('DiskPressure') === 'False' &&
        !taints().some((t) => t.startsWith('node.kubernetes.io/disk-pressure')),
      60_000,
      500,
      'DiskPressure cleared',
    );
    assert.equal(phaseOf('bystander'), 'Running ');
    kubectl(['delete', 'pod', 'filler', 'bystander', '--wait=true']);
  });

  test('a memory-hungry BestEffort pod is Evicted before a Guaranteed one under a low allocatableMemory.available threshold', async () => {
    cluster.apply(pod('guarded', { limits: { cpu: '50m', memory: '64Mi' } }));
    await waitFor(() => phaseOf('guarded') === 'Running ', 60_000, 300, 'guarded running');
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hog' },
      spec: {
        terminationGracePeriodSeconds: 30,
        volumes: [{ name: 'm', emptyDir: { medium: 'Memory' } }],
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sh', '-c', 'dd if=/dev/zero of=/mem/f bs=1M count=250; sleep 3600'],
            volumeMounts: [{ name: 'm', mountPath: '/mem' }],
          },
        ],
      },
    });
    await waitFor(() => phaseOf('hog') === 'Failed Evicted', 90_000, 500, 'hog evicted');
    assert.match(
      kubectl(['get', 'pod', 'hog', '-o', 'jsonpath={.status.message}']),
      /^The node was low on resource: memory\. Threshold quantity: \S+, available: \S+\. Container c was using \S+, request is 0, has larger consumption of memory\. $/,
    );
    assert.equal(phaseOf('guarded'), 'Running ');
    await waitFor(
      () =>
        condition('MemoryPressure') === 'False' &&
        !taints().some((t) => t.startsWith('node.kubernetes.io/memory-pressure')),
      60_000,
      500,
      'MemoryPressure cleared',
    );
    assert.equal(phaseOf('guarded'), 'Running ');
  });

  test('image garbage collection past a tiny threshold removes an unused image, keeps the one a pod runs and the sandbox image, and says it could not free enough', async () => {
    const node = cluster.node;
    const victim = `${REGISTRY}/tskube/gc-victim:1`;
    pushImage(
      buildImage({ name: 'tskube/gc-victim', tag: '1', config: { entrypoint: ['/bin/true'] } }, node.dir),
      REGISTRY,
      `/run/netns/${node.netns}`,
    );
    await node.cri.pullImage(victim, null);
    cluster.apply(pod('keeper', {}));
    await waitFor(() => phaseOf('keeper') === 'Running ', 60_000, 300, 'keeper running');
    // The same kubelet again, collecting images above 2 % of the image filesystem.
    await node.stopKubelet();
    fs.appendFileSync(
      path.join(node.dir, 'kubelet.yaml'),
      'imageGCHighThresholdPercent: 2\nimageGCLowThresholdPercent: 1\nimageMinimumGCAge: 1s\n',
    );
    cluster.startKubelet();
    await waitFor(async () => (await node.cri.imageStatus(victim)) === null, 60_000, 500, 'the unused image removed');
    assert.ok(await node.cri.imageStatus(APP_IMAGE), 'the image a running pod uses stays');
    assert.ok(await node.cri.imageStatus(PAUSE_IMAGE), 'the sandbox image stays');
    assert.match(
      kubectl([
        'get',
        'events',
        '--field-selector',
        'reason=FreeDiskSpaceFailed',
        '-o',
        'jsonpath={.items[0].message}',
      ]),
      /^Failed to garbage collect required amount of images\. Attempted to free \d+ bytes, but only found \d+ bytes eligible to free\.$/,
    );
    assert.equal(phaseOf('keeper'), 'Running ');
  });
});
