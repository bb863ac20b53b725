// The prober inside the kubelet, against the fake CRI: liveness failures
// restart containers (with the probe's grace period), readiness drives the
// container's ready flag, startup holds both back.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { type KubeEvent, LogEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { CriClient } from '../cri/client.js';
import { FakeRuntime } from '../cri/fake-runtime.js';
import { Kubelet } from '../kubelet.js';
import { KubeletMetrics } from '../metrics.js';
import { toStaticPod } from '../sources/manifest.js';

let rt: FakeRuntime;
let cri: CriClient;
let dir: string;
let events: KubeEvent[];
let kubelet: Kubelet;
let metrics: KubeletMetrics;
/** Exit code of the exec probe command per container name (default 0). */
let execExit: Map<string, number>;

beforeEach(async () => {
  rt = new FakeRuntime();
  rt.pullable.add('reg/app:1');
  execExit = new Map();
  rt.hooks.set('ExecSync', (req: { container_id: string }) => {
    const c = rt.containers.get(req.container_id);
    const code = execExit.get(c?.config.metadata.name ?? '') ?? 0;
    return { stdout: Buffer.from(code ? 'not ok\n' : 'ok\n'), stderr: Buffer.alloc(0), exit_code: code };
  });
  cri = new CriClient({ endpoint: await rt.start(), timeoutMs: 5000 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-probe-'));
  events = [];
  const log = memoryLogger();
  const rec = new LogEventRecorder(log);
  rec.onEvent((e) => events.push(e));
  metrics = new KubeletMetrics();
  kubelet = new Kubelet({
    cri,
    log,
    events: rec,
    metrics,
    node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') },
    relistPeriodMs: 50,
  });
  await kubelet.start();
});

afterEach(async () => {
  await kubelet.stop();
  cri.close();
  await rt.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const pod = (name: string, container: Record<string, unknown>): Pod =>
  toStaticPod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'main', image: 'reg/app:1', ...container }] },
    },
    `/m/${name}.yaml`,
    'file',
    'n1',
  );
const running = () => [...rt.containers.values()].filter((c) => c.state === 'CONTAINER_RUNNING');
const exec = { exec: { command: ['cat', '/tmp/healthy'] } };

test('a failing liveness probe restarts the container after failureThreshold runs, with the probe grace period and upstream events', async () => {
  const p = pod('live', {
    livenessProbe: { ...exec, periodSeconds: 1, failureThreshold: 2, terminationGracePeriodSeconds: 3 },
  });
  kubelet.setSource('file', [p]);
  const first = await waitFor(() => running()[0], 5000, 20);
  execExit.set('main', 1);
  const second = await waitFor(() => running().find((c) => c.id !== first.id), 8000, 50, 'restarted container');
  assert.equal(second.config.annotations['io.kubernetes.container.restartCount'], '1');
  const stop = rt.calls.find((c) => c.method === 'StopContainer' && c.req.container_id === first.id)!;
  assert.equal(stop.req.timeout, '3', "the probe's terminationGracePeriodSeconds");
  const unhealthy = events.filter((e) => e.reason === 'Unhealthy');
  assert.ok(unhealthy.length >= 2);
  assert.equal(unhealthy[0]!.message, 'Liveness probe failed: not ok\n');
  assert.equal(unhealthy[0]!.ref.fieldPath, 'spec.containers{main}');
  const killing = events.find((e) => e.reason === 'Killing')!;
  assert.equal(killing.message, 'Container main failed liveness probe, will be restarted');
  assert.ok(events.indexOf(killing) > events.indexOf(unhealthy[1]!), 'Unhealthy, then Killing');
  const m = (await metrics.probes.getMetricsAsJSON()) as unknown as {
    name: string;
    values: { labels: Record<string, string>; value: number; metricName?: string }[];
  }[];
  const total = m.find((x) => x.name === 'prober_probe_total')!.values.find((v) => v.labels.result === 'failed')!;
  assert.deepEqual(
    { ...total.labels, pod_uid: 'x' },
    { probe_type: 'Liveness', result: 'failed', container: 'main', pod: 'live-n1', namespace: 'default', pod_uid: 'x' },
  );
  assert.ok(total.value >= 2);
  const count = m
    .find((x) => x.name === 'prober_probe_duration_seconds')!
    .values.find((v) => v.metricName === 'prober_probe_duration_seconds_count')!;
  assert.ok(count.value >= 2);
});

test('a container its liveness probe keeps killing goes into CrashLoopBackOff with a BackOff event, as upstream', async () => {
  const p = pod('loop', { livenessProbe: { ...exec, periodSeconds: 1, failureThreshold: 1 } });
  kubelet.setSource('file', [p]);
  const first = await waitFor(() => running()[0], 5000, 20);
  execExit.set('main', 1);
  // The first restart is immediate; the next one waits out the 10 s crash-loop backoff.
  const second = await waitFor(() => running().find((c) => c.id !== first.id), 8000, 50, 'first restart');
  await waitFor(() => rt.containers.get(second.id)?.state === 'CONTAINER_EXITED', 8000, 50, 'second kill');
  await waitFor(() => events.find((e) => e.reason === 'BackOff'), 5000, 50, 'BackOff event');
  const w = kubelet.workers.get(p.metadata!.uid!)!;
  assert.equal(w.waiting.get('main')?.reason, 'CrashLoopBackOff');
  assert.match(w.waiting.get('main')!.message, /^back-off 10s restarting failed container=main pod=loop-n1_default/);
  assert.equal(running().length, 0, 'not restarted during the backoff');
});

test('readiness: not ready before the first success, ready after it, not ready again on failure, never restarted', async () => {
  execExit.set('main', 1);
  const p = pod('ready', { readinessProbe: { ...exec, periodSeconds: 1 } });
  kubelet.setSource('file', [p]);
  const c = await waitFor(() => running()[0], 5000, 20);
  const ready = () => kubelet.prober.ready(p, 'main', c.id);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(ready(), false);
  execExit.set('main', 0);
  await waitFor(() => ready(), 3000, 50, 'ready after a success');
  execExit.set('main', 1);
  await waitFor(() => !ready(), 5000, 50, 'not ready after failureThreshold (3) failures');
  assert.equal(running().length, 1);
  assert.equal(running()[0]!.id, c.id, 'readiness never restarts');
  assert.ok(events.some((e) => e.reason === 'Unhealthy' && e.message === 'Readiness probe failed: not ok\n'));
});

test('a startup probe holds back liveness until it succeeds, and kills the container past its failureThreshold', async () => {
  execExit.set('main', 1);
  const p = pod('slow', {
    startupProbe: { ...exec, periodSeconds: 1, failureThreshold: 3 },
    livenessProbe: { exec: { command: ['true'] }, periodSeconds: 1, failureThreshold: 1 },
  });
  kubelet.setSource('file', [p]);
  const first = await waitFor(() => running()[0], 5000, 20);
  const restarted = await waitFor(
    () => running().find((c) => c.id !== first.id),
    8000,
    50,
    'killed by the startup probe',
  );
  assert.equal(
    events.find((e) => e.reason === 'Killing')!.message,
    'Container main failed startup probe, will be restarted',
  );
  assert.equal(
    events.filter((e) => e.message.startsWith('Liveness')).length,
    0,
    'no liveness probe ran before startup succeeded',
  );
  const livenessRuns = rt.calls.filter((c) => c.method === 'ExecSync' && c.req.cmd[0] === 'true').length;
  assert.equal(livenessRuns, 0);
  execExit.set('main', 0);
  await waitFor(() => kubelet.prober.started(p, 'main', restarted.id), 5000, 50, 'startup succeeded');
  await waitFor(
    () => rt.calls.some((c) => c.method === 'ExecSync' && c.req.cmd[0] === 'true'),
    5000,
    50,
    'liveness runs after startup',
  );
});
