import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { KubeApiError, KubeClient } from '../kube/client.js';
import { LogEventRecorder } from '../kube/events.js';
import { memoryLogger } from '../kube/log.js';
// Test-only: the dev apiserver stands in for a real one. Agent code never imports apiserver/.
import { startTestApiServer, type TestApiServer } from '../testing/apiserver.js';
import { waitFor as waitUntil } from '../testing/wait.js';
import { CriClient } from './cri/client.js';
import { FakeRuntime } from './cri/fake-runtime.js';
import { Kubelet } from './kubelet.js';
import { RuntimeClasses } from './pods/runtime-class.js';
import { unmountAll } from './volumes/mounts.js';

let dir: string;
let api: TestApiServer;
let admin: KubeClient;
let nodeClient: KubeClient;
let rt: FakeRuntime;
let cri: CriClient;
let kubelet: Kubelet;
let log: ReturnType<typeof memoryLogger>;

const waitFor = <T>(fn: () => T | Promise<T>, ms = 8000) => waitUntil(fn, ms, 20);

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-klapi-'));
  // Under NodeRestriction, as a hardened upstream cluster runs: everything the kubelet writes must pass it.
  api = await startTestApiServer('n1', { admissionPlugins: ['NodeRestriction'] });
  admin = api.admin;
  nodeClient = api.node;
  rt = new FakeRuntime();
  rt.pullable.add('reg/app:1');
  cri = new CriClient({ endpoint: await rt.start() });
  log = memoryLogger();
  kubelet = new Kubelet({
    cri,
    log,
    events: new LogEventRecorder(log),
    client: nodeClient,
    relistPeriodMs: 50,
    node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') },
  });
  await kubelet.start();
});

after(async () => {
  await kubelet.stop();
  cri.close();
  await rt.stop();
  await api.stop();
  await unmountAll(dir); // the pods' token volumes are tmpfs
  fs.rmSync(dir, { recursive: true, force: true });
});

const running = (name: string) =>
  [...rt.containers.values()].find(
    (c) => c.state === 'CONTAINER_RUNNING' && c.config.labels['io.kubernetes.pod.name'] === name,
  );

test('pods bound to this node (and only those) come from the apiserver and run', async () => {
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'mine' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  await admin.create('/api/v1/namespaces/kube-system/pods', {
    metadata: { name: 'mine-too' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'other' },
    spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'unbound' },
    spec: { containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  await waitFor(() => running('mine') && running('mine-too'));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(running('other'), undefined);
  assert.equal(running('unbound'), undefined);
  const uid = (await admin.get('/api/v1/namespaces/default/pods/mine')).metadata.uid;
  assert.equal(running('mine')!.config.labels['io.kubernetes.pod.uid'], uid, 'runtime pods carry the API UID');
});

test('status is written back: Running, ready, the pod IP, containerd:// container IDs', async () => {
  const p = await waitFor(async () => {
    const o = await admin.get('/api/v1/namespaces/default/pods/mine');
    return o.status?.phase === 'Running' && o.status.containerStatuses?.[0]?.ready ? o : undefined;
  });
  assert.match(p.status.podIP, /^10\.88\.0\.\d+$/);
  assert.equal(p.status.hostIP, '10.1.1.1');
  assert.equal(p.status.qosClass, 'BestEffort');
  assert.match(p.status.containerStatuses[0].containerID, /^containerd:\/\/c\d+$/);
  assert.ok(p.status.containerStatuses[0].state.running.startedAt);
  assert.equal(p.status.containerStatuses[0].state.waiting, undefined, 'no stale state keys');
  const c = Object.fromEntries(p.status.conditions.map((x: any) => [x.type, x.status]));
  assert.deepEqual(c, {
    PodScheduled: 'True',
    PodReadyToStartContainers: 'True',
    Initialized: 'True',
    Ready: 'True',
    ContainersReady: 'True',
  });
  // The other pod's status settles too, so a patch of its own is not counted below.
  await waitFor(
    async () => (await admin.get('/api/v1/namespaces/kube-system/pods/mine-too')).status?.containerStatuses?.[0]?.ready,
  );
  await new Promise((r) => setTimeout(r, 200));
  const patches = kubelet.status!.patches;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(kubelet.status!.patches, patches, 'no PATCH while nothing changes');
});

test('kubectl-style graceful delete: containers stop within the grace period, then the pod is deleted with grace 0', async () => {
  const marked = await admin.delete('/api/v1/namespaces/default/pods/mine', { gracePeriodSeconds: 9 });
  assert.ok(marked.metadata.deletionTimestamp, 'marked, not gone');
  await waitFor(async () => {
    try {
      await admin.get('/api/v1/namespaces/default/pods/mine');
      return false;
    } catch (e) {
      return e instanceof KubeApiError && e.code === 404;
    }
  });
  const stop = rt.calls.find((c) => c.method === 'StopContainer');
  assert.ok(
    stop && Number(stop.req.timeout) <= 9 && Number(stop.req.timeout) >= 8,
    `StopContainer got the remaining grace (${stop?.req.timeout})`,
  );
  assert.equal(running('mine'), undefined);
  assert.ok(running('mine-too'), 'other pods untouched');
  const del = [...rt.sandboxes.values()].filter((s) => s.config.labels['io.kubernetes.pod.name'] === 'mine');
  assert.equal(del.length, 0, 'sandbox removed');
});

test('a kubelet restart restarts no container and keeps the posted status consistent', async () => {
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'stable' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  const before = await waitFor(async () => {
    const o = await admin.get('/api/v1/namespaces/default/pods/stable');
    return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
  });
  const container = running('stable')!;
  const creates = rt.calls.filter((c) => c.method === 'CreateContainer').length;
  await new Promise((r) => setTimeout(r, 1100)); // a new clock would now give other transition times
  await kubelet.stop();
  log = memoryLogger();
  kubelet = new Kubelet({
    cri,
    log,
    events: new LogEventRecorder(log),
    client: nodeClient,
    relistPeriodMs: 50,
    node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') },
  });
  await kubelet.start();
  await waitFor(() => kubelet.workers.size > 0 && [...kubelet.workers.values()].every((w) => w.syncCount > 0));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(running('stable')?.id, container.id, 'same container, still running');
  assert.equal(rt.calls.filter((c) => c.method === 'CreateContainer').length, creates, 'no container created');
  const after = await admin.get('/api/v1/namespaces/default/pods/stable');
  const times = (p: any) =>
    Object.fromEntries(p.status.conditions.map((c: any) => [c.type, `${c.status}@${c.lastTransitionTime}`]));
  assert.deepEqual(times(after), times(before), 'no condition moved');
  assert.equal(after.status.startTime, before.status.startTime);
  assert.equal(after.status.containerStatuses[0].containerID, before.status.containerStatuses[0].containerID);
  assert.equal(after.status.containerStatuses[0].restartCount, 0);
});

test('a finished pod keeps its Succeeded status, and its containers are never started again', async () => {
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'job' },
    spec: { nodeName: 'n1', restartPolicy: 'Never', containers: [{ name: 'once', image: 'reg/app:1' }] },
  });
  const c = await waitFor(() =>
    [...rt.containers.values()].find(
      (x) => x.config.labels['io.kubernetes.pod.name'] === 'job' && x.state === 'CONTAINER_RUNNING',
    ),
  );
  rt.exit(c.id, 0);
  await waitFor(async () => (await admin.get('/api/v1/namespaces/default/pods/job')).status.phase === 'Succeeded');
  // The runtime loses the container (GC, a wiped node): the phase stays, and nothing is started.
  rt.containers.delete(c.id);
  // This pod's container creations only: other pods of this file may restart theirs meanwhile.
  const made = () =>
    rt.calls.filter((x) => x.method === 'CreateContainer' && x.req.config?.labels?.['io.kubernetes.pod.name'] === 'job')
      .length;
  const before = made();
  assert.equal(before, 1, 'the one container it ran is seen by this count');
  await new Promise((r) => setTimeout(r, 400));
  const p = await admin.get('/api/v1/namespaces/default/pods/job');
  assert.equal(p.status.phase, 'Succeeded');
  assert.equal(p.status.containerStatuses[0].state.terminated.exitCode, 0);
  assert.equal(made(), before, 'no container of the finished pod is made again');
});

test('runtimeClassName: the sandbox runs under the RuntimeClass handler; an unconfigured handler is a FailedCreatePodSandBox', async () => {
  rt.runtimeHandlerNames.add('fast-vm');
  await admin.create('/apis/node.k8s.io/v1/runtimeclasses', { metadata: { name: 'fast' }, handler: 'fast-vm' });
  await admin.create('/apis/node.k8s.io/v1/runtimeclasses', {
    metadata: { name: 'absent' },
    handler: 'not-configured',
  });
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'rc-fast' },
    spec: { nodeName: 'n1', runtimeClassName: 'fast', containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'rc-absent' },
    spec: { nodeName: 'n1', runtimeClassName: 'absent', containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  const c = await waitFor(() => running('rc-fast'));
  assert.equal(rt.sandboxes.get(c.sandboxId)!.runtimeHandler, 'fast-vm');
  await waitFor(() =>
    log.lines.some(
      (l) =>
        l.includes('FailedCreatePodSandBox pod/default/rc-absent') &&
        l.includes('no runtime for "not-configured" is configured'),
    ),
  );
  assert.equal(running('rc-absent'), undefined);
  const plain = [...rt.sandboxes.values()].find((s) => s.config.labels['io.kubernetes.pod.name'] === 'mine-too');
  assert.equal(plain?.runtimeHandler, '', 'pods without a class get the default handler');
  await admin.delete('/api/v1/namespaces/default/pods/rc-absent', { gracePeriodSeconds: 0 });
  // A class gone after the pod was admitted: upstream's lister error.
  const lookup = new RuntimeClasses(nodeClient, log);
  await assert.rejects(lookup.handlerFor({ spec: { runtimeClassName: 'deleted', containers: [] } }), {
    message: 'runtimeclass.node.k8s.io "deleted" not found',
  });
  assert.equal(await lookup.handlerFor({ spec: { runtimeClassName: 'fast', containers: [] } }), 'fast-vm');
  await lookup.stop();
});

test('in-place resize through pods/resize: the running container gets the new limits without a restart; a resize larger than the node is PodResizePending/Infeasible until undone', async () => {
  const res = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'rs' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1', resources: res }] },
  });
  const pod = () => admin.get('/api/v1/namespaces/default/pods/rs');
  const first = await waitFor(async () => {
    const p = await pod();
    return p.status?.containerStatuses?.[0]?.resources?.limits ? p : undefined;
  });
  assert.deepEqual(
    first.status.containerStatuses[0].resources,
    res,
    'status reports the resources the container holds',
  );
  const id = first.status.containerStatuses[0].containerID;
  const resize = (body: object) =>
    admin.patch(
      '/api/v1/namespaces/default/pods/rs/resize',
      { spec: { containers: [{ name: 'c', resources: body }] } },
      'strategic',
    );
  await resize({ requests: { cpu: '150m' }, limits: { cpu: '300m', memory: '256Mi' } });
  const after = await waitFor(async () => {
    const p = await pod();
    return p.status.containerStatuses[0].resources.limits.cpu === '300m' &&
      !p.status.conditions.some((c: any) => c.type.startsWith('PodResize'))
      ? p
      : undefined;
  });
  assert.deepEqual(after.status.containerStatuses[0].resources, {
    requests: { cpu: '150m', memory: '64Mi' },
    limits: { cpu: '300m', memory: '256Mi' },
  });
  assert.equal(after.status.containerStatuses[0].containerID, id, 'same container');
  assert.equal(after.status.containerStatuses[0].restartCount, 0);
  const upd = rt.calls.filter((c) => c.method === 'UpdateContainerResources');
  assert.deepEqual(
    upd.map((c) => [c.req.linux.cpu_quota, c.req.linux.memory_limit_in_bytes]),
    [['30000', String(256 * 2 ** 20)]],
  );
  // Far beyond this node: pending, nothing applied; undoing it clears the condition.
  await resize({ requests: { cpu: '100000' }, limits: { cpu: '100000' } });
  const pending = await waitFor(async () =>
    (await pod()).status.conditions.find((c: any) => c.type === 'PodResizePending'),
  );
  assert.equal(pending.reason, 'Infeasible');
  assert.match(pending.message, /^Node didn't have enough capacity: cpu, requested: 100000000, capacity: \d+$/);
  assert.equal(rt.calls.filter((c) => c.method === 'UpdateContainerResources').length, 1);
  await resize({ requests: { cpu: '150m' }, limits: { cpu: '300m' } });
  await waitFor(async () => !(await pod()).status.conditions.some((c: any) => c.type === 'PodResizePending'));
  await admin.delete('/api/v1/namespaces/default/pods/rs', { gracePeriodSeconds: 0 });
});

test('a memory-request-only resize: RestartContainer restarts the container; NotRequired updates it once, with no restart', async () => {
  const res = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'mr' },
    spec: {
      nodeName: 'n1',
      containers: [
        {
          name: 'r',
          image: 'reg/app:1',
          resources: res,
          resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
        },
        { name: 'n', image: 'reg/app:1', resources: res },
      ],
    },
  });
  const pod = async (): Promise<Pod> => (await admin.get('/api/v1/namespaces/default/pods/mr')) as Pod;
  const status = (p: Pod, name: string) => p.status?.containerStatuses?.find((c) => c.name === name);
  await waitFor(async () => {
    const statuses = (await pod()).status?.containerStatuses ?? [];
    return statuses.length === 2 && statuses.every((c) => c.state?.running);
  });
  const updatesBefore = rt.calls.filter((c) => c.method === 'UpdateContainerResources').length;
  const requests = { cpu: '100m', memory: '48Mi' };
  await admin.patch(
    '/api/v1/namespaces/default/pods/mr/resize',
    {
      spec: {
        containers: [
          { name: 'r', resources: { requests } },
          { name: 'n', resources: { requests } },
        ],
      },
    },
    'strategic',
  );
  const after = await waitFor(async () => {
    const p = await pod();
    return status(p, 'r')?.restartCount === 1 &&
      status(p, 'r')?.state?.running &&
      status(p, 'n')?.resources?.requests?.memory === '48Mi'
      ? p
      : undefined;
  });
  assert.equal(status(after, 'n')?.restartCount, 0, 'NotRequired: no restart');
  // Further syncs find both settled: one update of n, none repeated.
  const w = kubelet.workers.get(after.metadata!.uid!)!;
  const synced = w.syncCount;
  w.requestSync();
  await waitFor(() => w.syncCount >= synced + 2 || (w.requestSync(), false));
  const updates = rt.calls.filter((c) => c.method === 'UpdateContainerResources').slice(updatesBefore);
  assert.equal(updates.length, 1, JSON.stringify(updates.map((c) => c.req.container_id)));
  await admin.delete('/api/v1/namespaces/default/pods/mr', { gracePeriodSeconds: 0 });
});
