import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// Test-only: the dev apiserver stands in for a real one. Agent code never imports apiserver/.
import { startTestApiServer, type TestApiServer } from '../apiserver/testing.js';
import { KubeApiError, KubeClient } from '../kube/client.js';
import { CriClient } from './cri/client.js';
import { FakeRuntime } from './cri/fake-runtime.js';
import { Kubelet } from './kubelet.js';
import { memoryLogger } from '../kube/log.js';
import { waitFor as waitUntil } from '../e2e/proc.js';
import { LogEventRecorder } from '../kube/events.js';
import { unmountAll } from './volumes/mounts.js';

let dir: string;
let api: TestApiServer;
let admin: KubeClient;
let nodeClient: KubeClient;
let rt: FakeRuntime;
let cri: CriClient;
let kubelet: Kubelet;

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
  const log = memoryLogger();
  kubelet = new Kubelet({ cri, log, events: new LogEventRecorder(log), client: nodeClient, relistPeriodMs: 50, node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') } });
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

const running = (name: string) => [...rt.containers.values()].find((c) => c.state === 'CONTAINER_RUNNING' && c.config.labels['io.kubernetes.pod.name'] === name);

test('pods bound to this node (and only those) come from the apiserver and run', async () => {
  await admin.create('/api/v1/namespaces/default/pods', { metadata: { name: 'mine' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1' }] } });
  await admin.create('/api/v1/namespaces/kube-system/pods', { metadata: { name: 'mine-too' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1' }] } });
  await admin.create('/api/v1/namespaces/default/pods', { metadata: { name: 'other' }, spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'reg/app:1' }] } });
  await admin.create('/api/v1/namespaces/default/pods', { metadata: { name: 'unbound' }, spec: { containers: [{ name: 'c', image: 'reg/app:1' }] } });
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
  assert.deepEqual(c, { PodScheduled: 'True', PodReadyToStartContainers: 'True', Initialized: 'True', Ready: 'True', ContainersReady: 'True' });
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
  assert.ok(stop && Number(stop.req.timeout) <= 9 && Number(stop.req.timeout) >= 8, `StopContainer got the remaining grace (${stop?.req.timeout})`);
  assert.equal(running('mine'), undefined);
  assert.ok(running('mine-too'), 'other pods untouched');
  const del = [...rt.sandboxes.values()].filter((s) => s.config.labels['io.kubernetes.pod.name'] === 'mine');
  assert.equal(del.length, 0, 'sandbox removed');
});

test('a kubelet restart restarts no container and keeps the posted status consistent', async () => {
  await admin.create('/api/v1/namespaces/default/pods', { metadata: { name: 'stable' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'reg/app:1' }] } });
  const before = await waitFor(async () => {
    const o = await admin.get('/api/v1/namespaces/default/pods/stable');
    return o.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True' ? o : undefined;
  });
  const container = running('stable')!;
  const creates = rt.calls.filter((c) => c.method === 'CreateContainer').length;
  await new Promise((r) => setTimeout(r, 1100)); // a new clock would now give other transition times
  await kubelet.stop();
  const log = memoryLogger();
  kubelet = new Kubelet({ cri, log, events: new LogEventRecorder(log), client: nodeClient, relistPeriodMs: 50, node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') } });
  await kubelet.start();
  await waitFor(() => kubelet.workers.size > 0 && [...kubelet.workers.values()].every((w) => w.syncCount > 0));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(running('stable')?.id, container.id, 'same container, still running');
  assert.equal(rt.calls.filter((c) => c.method === 'CreateContainer').length, creates, 'no container created');
  const after = await admin.get('/api/v1/namespaces/default/pods/stable');
  const times = (p: any) => Object.fromEntries(p.status.conditions.map((c: any) => [c.type, `${c.status}@${c.lastTransitionTime}`]));
  assert.deepEqual(times(after), times(before), 'no condition moved');
  assert.equal(after.status.startTime, before.status.startTime);
  assert.equal(after.status.containerStatuses[0].containerID, before.status.containerStatuses[0].containerID);
  assert.equal(after.status.containerStatuses[0].restartCount, 0);
});

test('a finished pod keeps its Succeeded status, and its containers are never started again', async () => {
  await admin.create('/api/v1/namespaces/default/pods', { metadata: { name: 'job' }, spec: { nodeName: 'n1', restartPolicy: 'Never', containers: [{ name: 'once', image: 'reg/app:1' }] } });
  const c = await waitFor(() => [...rt.containers.values()].find((x) => x.config.labels['io.kubernetes.pod.name'] === 'job' && x.state === 'CONTAINER_RUNNING'));
  rt.exit(c.id, 0);
  await waitFor(async () => (await admin.get('/api/v1/namespaces/default/pods/job')).status.phase === 'Succeeded');
  // The runtime loses the container (GC, a wiped node): the phase stays, and nothing is started.
  rt.containers.delete(c.id);
  const starts = rt.count('StartContainer');
  await new Promise((r) => setTimeout(r, 400));
  const p = await admin.get('/api/v1/namespaces/default/pods/job');
  assert.equal(p.status.phase, 'Succeeded');
  assert.equal(p.status.containerStatuses[0].state.terminated.exitCode, 0);
  assert.equal(rt.count('StartContainer'), starts);
});
