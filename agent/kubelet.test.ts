import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { KubeClient } from '../kube/client.js';
import { type KubeEvent, LogEventRecorder } from '../kube/events.js';
import { memoryLogger } from '../kube/log.js';
import { waitFor as waitUntil } from '../testing/wait.js';
import { CriClient } from './cri/client.js';
import { FakeRuntime } from './cri/fake-runtime.js';
import { Kubelet } from './kubelet.js';
import { toStaticPod } from './sources/manifest.js';

let rt: FakeRuntime;
let cri: CriClient;
let dir: string;
let events: KubeEvent[];
let kubelets: Kubelet[];

const waitFor = <T>(fn: () => T | Promise<T>, ms = 5000) => waitUntil(fn, ms, 20);

function newKubelet(relistPeriodMs = 50): Kubelet {
  const log = memoryLogger();
  const rec = new LogEventRecorder(log);
  rec.onEvent((e) => events.push(e));
  const k = new Kubelet({
    cri,
    log,
    events: rec,
    node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') },
    relistPeriodMs,
    gcPeriodMs: 60_000,
  });
  kubelets.push(k);
  return k;
}

const pod = (name: string, spec: Partial<NonNullable<Pod['spec']>>): Pod =>
  toStaticPod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { containers: [{ name: 'main', image: 'reg/app:1' }], ...spec },
    },
    `/m/${name}.yaml`,
    'file',
    'n1',
  );

beforeEach(async () => {
  rt = new FakeRuntime();
  cri = new CriClient({ endpoint: await rt.start(), timeoutMs: 5000 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-kl-'));
  events = [];
  kubelets = [];
});

afterEach(async () => {
  for (const k of kubelets) await k.stop();
  cri.close();
  await rt.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const reasons = () => events.map((e) => e.reason);

test('ImageStatus comes before PullImage; a present IfNotPresent image is not pulled', async () => {
  rt.images.set('reg/app:1', { id: 'sha256:aaa', size: 10 });
  const k = newKubelet();
  await k.start();
  const p = pod('web', {});
  k.setSource('file', [p]);
  // The runtime may report running before the kubelet has seen StartContainer return; wait for the event.
  await waitFor(() => reasons().includes('Started'));
  assert.equal(rt.count('PullImage'), 0);
  assert.ok(rt.count('ImageStatus') >= 1);
  assert.deepEqual(reasons(), ['Pulled', 'Created', 'Started']);
  assert.equal(events[0]!.message, 'Container image "reg/app:1" already present on machine');
  const [c] = [...rt.containers.values()];
  assert.equal(c!.config.image.image, 'sha256:aaa', 'created from the image ID');
  assert.equal(c!.config.log_path, 'main/0.log');
  const [s] = [...rt.sandboxes.values()];
  assert.equal(s!.config.log_directory, path.join(dir, 'logs', `default_web-n1_${p.metadata!.uid!}`));
  assert.equal(s!.config.labels['io.kubernetes.pod.uid'], p.metadata!.uid);
});

/** A started kubelet with one pod whose image pull failed (no image in the fake runtime), and the pod's worker. */
async function withFailedPull(): Promise<{ k: Kubelet; w: NonNullable<ReturnType<Kubelet['workers']['get']>> }> {
  const k = newKubelet();
  await k.start();
  const p = pod('bad', {});
  k.setSource('file', [p]);
  const w = k.workers.get(p.metadata!.uid!)!;
  await waitFor(() => w.waiting.get('main')?.reason === 'ErrImagePull');
  return { k, w };
}

test('a failed pull is ErrImagePull, then ImagePullBackOff without another pull', async () => {
  const { w } = await withFailedPull();
  assert.equal(rt.count('PullImage'), 1);
  assert.ok(
    events.some(
      (e) =>
        e.reason === 'Failed' &&
        e.message.startsWith('Failed to pull image "reg/app:1": CRI PullImage for pod default/bad-n1 failed'),
    ),
  );
  w.requestSync();
  await waitFor(() => w.waiting.get('main')?.reason === 'ImagePullBackOff');
  assert.equal(rt.count('PullImage'), 1, 'no pull while backing off');
  assert.match(w.waiting.get('main')!.message, /^Back-off pulling image "reg\/app:1"/);
  assert.ok(events.some((e) => e.reason === 'BackOff' && e.type === 'Normal'));
});

test('imagePullPolicy Never with a missing image: ErrImageNeverPull and no pull', async () => {
  const k = newKubelet();
  await k.start();
  const p = pod('never', { containers: [{ name: 'main', image: 'reg/app:1', imagePullPolicy: 'Never' }] });
  k.setSource('file', [p]);
  const w = k.workers.get(p.metadata!.uid!)!;
  await waitFor(() => w.waiting.get('main')?.reason === 'ErrImageNeverPull');
  assert.equal(rt.count('PullImage'), 0);
  assert.ok(events.some((e) => e.message === 'Container image "reg/app:1" is not present with pull policy of Never'));
});

test('init containers run to completion, one at a time, before the app container', async () => {
  rt.pullable.add('reg/app:1');
  rt.exitOnStart.set('init1', 0);
  rt.exitOnStart.set('init2', 0);
  const k = newKubelet();
  await k.start();
  k.setSource('file', [
    pod('init', {
      initContainers: [
        { name: 'init1', image: 'reg/app:1' },
        { name: 'init2', image: 'reg/app:1' },
      ],
    }),
  ]);
  await waitFor(() =>
    [...rt.containers.values()].some((c) => c.config.metadata.name === 'main' && c.state === 'CONTAINER_RUNNING'),
  );
  const order = rt.calls.filter((c) => c.method === 'CreateContainer').map((c) => c.req.config.metadata.name);
  assert.deepEqual(order, ['init1', 'init2', 'main']);
  const types = rt.calls
    .filter((c) => c.method === 'CreateContainer')
    .map((c) => c.req.config.annotations['io.kubernetes.container.type']);
  assert.deepEqual(types, ['init', 'init', 'container']);
});

test('a crashing container restarts at once, then waits in CrashLoopBackOff', async () => {
  rt.pullable.add('reg/app:1');
  rt.exitOnStart.set('main', 1);
  const k = newKubelet();
  await k.start();
  const p = pod('crash', {});
  k.setSource('file', [p]);
  const w = k.workers.get(p.metadata!.uid!)!;
  await waitFor(() => w.waiting.get('main')?.reason === 'CrashLoopBackOff');
  const creates = rt.calls
    .filter((c) => c.method === 'CreateContainer')
    .map((c) => c.req.config.annotations['io.kubernetes.container.restartCount']);
  assert.deepEqual(creates, ['0', '1']);
  assert.match(w.waiting.get('main')!.message, /^back-off 10s restarting failed container=main pod=crash-n1_default\(/);
});

test('a container that exits between its start and the read after it finishes its Never pod: lost before another sync, it is not made again', async () => {
  rt.pullable.add('reg/app:1');
  rt.exitOnStart.set('main', 0);
  // No relist in the test's time: the read right after the start is the only one that sees the container.
  const k = newKubelet(60_000);
  await k.start();
  const p = pod('quick', { restartPolicy: 'Never' });
  k.setSource('file', [p]);
  const w = k.workers.get(p.metadata!.uid!)!;
  await waitFor(() => w.syncCount >= 1 && w.lastState?.containers.some((c) => c.state === 'exited'));
  const synced = w.syncCount;
  for (const [id, c] of rt.containers) if (c.config.metadata.name === 'main') rt.containers.delete(id);
  w.requestSync();
  await waitFor(() => w.syncCount > synced);
  assert.equal(rt.count('CreateContainer'), 1, 'the finished container is not created again');
});

test('restarting the kubelet adopts running containers without creating new ones', async () => {
  rt.pullable.add('reg/app:1');
  const p = pod('steady', {});
  const k1 = newKubelet();
  await k1.start();
  k1.setSource('file', [p]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  await k1.stop();
  const creates = rt.count('CreateContainer');
  const sandboxes = rt.count('RunPodSandbox');
  const k2 = newKubelet();
  await k2.start();
  k2.setSource('file', [p]);
  const w = k2.workers.get(p.metadata!.uid!)!;
  await waitFor(() => w.syncCount >= 1);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(rt.count('CreateContainer'), creates);
  assert.equal(rt.count('RunPodSandbox'), sandboxes);
  assert.equal(rt.count('StopContainer'), 0);
});

test('a removed pod is stopped with its grace period and removed; running orphans are cleaned up', async () => {
  rt.pullable.add('reg/app:1');
  const k = newKubelet();
  await k.start();
  const p = pod('gone', { terminationGracePeriodSeconds: 7 });
  k.setSource('file', [p]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  k.setSource('file', []);
  await waitFor(() => rt.sandboxes.size === 0 && rt.containers.size === 0);
  const stop = rt.calls.find((c) => c.method === 'StopContainer')!;
  assert.ok(
    Number(stop.req.timeout) >= 6 && Number(stop.req.timeout) <= 7,
    `grace passed to StopContainer: ${stop.req.timeout}`,
  );
  assert.ok(events.some((e) => e.reason === 'Killing' && e.message === 'Stopping container main'));

  await k.stop(); // otherwise it would (rightly) treat the next kubelet's pod as an orphan
  // A pod left running by an earlier kubelet, that no source wants any more.
  const orphan = pod('orphan', {});
  const k2 = newKubelet();
  await k2.start();
  k2.setSource('file', [orphan]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  await k2.stop();
  const k3 = newKubelet();
  k3.setSource('file', []);
  await k3.start();
  await waitFor(() => rt.sandboxes.size === 0 && rt.containers.size === 0);
});

test('an apiserver that does not answer at start never gets its running pods killed; once it answers, orphans go', async () => {
  rt.pullable.add('reg/app:1');
  const apiPod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'api-pod',
      namespace: 'default',
      uid: 'api-uid-1',
      annotations: { 'kubernetes.io/config.source': 'api' },
    },
    spec: { nodeName: 'n1', containers: [{ name: 'main', image: 'reg/app:1', imagePullPolicy: 'IfNotPresent' }] },
  };
  const k1 = newKubelet();
  await k1.start();
  k1.setSource('api', [apiPod]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  await k1.stop();
  // Restarted while the apiserver is down: its first list never answers.
  const dead = new KubeClient({ server: 'https://127.0.0.1:1' });
  const log = memoryLogger();
  const k2 = new Kubelet({
    cri,
    log,
    events: new LogEventRecorder(log),
    client: dead,
    node: { nodeName: 'n1', hostIP: '10.1.1.1', podLogsDir: path.join(dir, 'logs'), rootDir: path.join(dir, 'root') },
    relistPeriodMs: 50,
  });
  kubelets.push(k2);
  await k2.start();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(rt.count('StopContainer'), 0, 'the pod of the silent source was not treated as an orphan');
  assert.ok([...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  // The apiserver answers at last, without that pod: now it is an orphan.
  k2.setSource('api', []);
  await waitFor(() => rt.sandboxes.size === 0 && rt.containers.size === 0);
  dead.close();
});

test('a static pod whose file changed starts only after the old instance is gone', async () => {
  rt.pullable.add('reg/app:1');
  const k = newKubelet();
  await k.start();
  const v1 = pod('web', { containers: [{ name: 'main', image: 'reg/app:1', command: ['v1'] }] });
  const v2 = pod('web', { containers: [{ name: 'main', image: 'reg/app:1', command: ['v2'] }] });
  assert.notEqual(v1.metadata!.uid, v2.metadata!.uid);
  k.setSource('file', [v1]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  k.setSource('file', [v2]);
  await waitFor(() =>
    [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING' && c.config.command[0] === 'v2'),
  );
  const methods = rt.calls.map((c) => c.method);
  assert.ok(
    methods.lastIndexOf('RemovePodSandbox') < methods.lastIndexOf('RunPodSandbox'),
    'old sandbox removed before the new one is made',
  );
  assert.equal(rt.sandboxes.size, 1);
});

test('transient PodSandboxStatus and ContainerStatus errors never recreate a sandbox, restart a container or finish a pod', async () => {
  rt.pullable.add('reg/app:1');
  const grpcMod = await import('@grpc/grpc-js');
  const host = pod('hostnet', { hostNetwork: true });
  const once = pod('once', { restartPolicy: 'OnFailure' });
  const k = newKubelet();
  await k.start();
  k.setSource('file', [host, once]);
  await waitFor(() => [...rt.containers.values()].filter((c) => c.state === 'CONTAINER_RUNNING').length === 2);
  const sandboxes = rt.count('RunPodSandbox');
  const creates = rt.count('CreateContainer');
  const fail = () => {
    throw Object.assign(new Error('timeout'), {
      code: grpcMod.status.DEADLINE_EXCEEDED,
      details: 'context deadline exceeded',
    });
  };
  rt.hooks.set('PodSandboxStatus', fail);
  rt.hooks.set('ContainerStatus', fail);
  for (const uid of [host.metadata!.uid!, once.metadata!.uid!]) k.workers.get(uid)!.requestSync();
  await new Promise((r) => setTimeout(r, 600));
  rt.hooks.delete('PodSandboxStatus');
  rt.hooks.delete('ContainerStatus');
  for (const uid of [host.metadata!.uid!, once.metadata!.uid!]) k.workers.get(uid)!.requestSync();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(rt.count('RunPodSandbox'), sandboxes, 'no sandbox recreated');
  assert.equal(rt.count('CreateContainer'), creates, 'no container recreated');
  assert.equal(rt.count('StopContainer') + rt.count('StopPodSandbox'), 0, 'nothing stopped');
  assert.equal(k.workers.get(once.metadata!.uid!)!.phase, 'syncing', 'the OnFailure pod is not finished');
});

test('at start, directories of pods that vanished while the kubelet was down are unmounted and removed; live pods keep theirs', async () => {
  const { selectOrphans } = await import('./pods/orphans.js');
  assert.deepEqual(
    selectOrphans(['a', 'b', '..', 'c'], ['ns_p_a', 'ns_q_c', 'weird'], (u) => u === 'a'),
    { podDirs: ['b', 'c'], logDirs: ['ns_q_c'] },
  );
  rt.pullable.add('reg/app:1');
  const { mountTmpfs, mountsUnder } = await import('./volumes/mounts.js');
  const root = path.join(dir, 'root');
  const gone = path.join(root, 'pods', 'vanished-uid', 'volumes', 'kubernetes.io~secret', 's');
  fs.mkdirSync(gone, { recursive: true });
  await mountTmpfs(gone);
  fs.mkdirSync(path.join(dir, 'logs', 'default_old_vanished-uid', 'c'), { recursive: true });
  const keep = pod('keep', {});
  const k = newKubelet();
  await k.start();
  k.setSource('file', [keep]);
  // The pod directory goes first, then the log directory.
  await waitFor(
    () =>
      !fs.existsSync(path.join(root, 'pods', 'vanished-uid')) &&
      !fs.existsSync(path.join(dir, 'logs', 'default_old_vanished-uid')),
    5000,
  );
  assert.deepEqual(await mountsUnder(path.join(root, 'pods', 'vanished-uid')), []);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  await k.gc();
  assert.ok(fs.existsSync(path.join(root, 'pods', keep.metadata!.uid!)), 'a live pod keeps its directory');
});

test('termination messages: the file at terminationMessagePath, or with FallbackToLogsOnError the log tail of a failed container', async () => {
  rt.pullable.add('reg/app:1');
  rt.exitOnStart.set('file', 3);
  rt.exitOnStart.set('logs', 1);
  rt.hooks.set(
    'CreateContainer',
    (req: {
      config: { metadata: { name: string }; mounts: { container_path: string; host_path: string }[]; log_path: string };
      sandbox_config: { log_directory: string };
    }) => {
      const name = req.config.metadata.name;
      const m = req.config.mounts.find(
        (x) => x.container_path === '/dev/termination-log' || x.container_path === '/tmp/msg',
      );
      assert.ok(m, `${name} gets a termination message mount`);
      assert.equal(fs.statSync(m.host_path).mode & 0o777, 0o666);
      if (name === 'file') fs.writeFileSync(m.host_path, 'disk full\n');
      if (name === 'logs') {
        const log = path.join(req.sandbox_config.log_directory, req.config.log_path);
        fs.mkdirSync(path.dirname(log), { recursive: true });
        fs.writeFileSync(
          log,
          Array.from({ length: 100 }, (_, i) => `2026-12-02T10:00:00Z stderr F line ${i}`).join('\n') + '\n',
        );
      }
      return undefined;
    },
  );
  const p = pod('msgs', {
    restartPolicy: 'Never',
    containers: [
      { name: 'file', image: 'reg/app:1', terminationMessagePath: '/tmp/msg' },
      { name: 'logs', image: 'reg/app:1', terminationMessagePolicy: 'FallbackToLogsOnError' },
    ],
  });
  const k = newKubelet();
  await k.start();
  k.setSource('file', [p]);
  const w = await waitFor(() => k.workers.get(p.metadata!.uid!));
  await waitFor(
    () =>
      w.lastState?.containers.length === 2 && w.lastState.containers.every((c) => c.state === 'exited' && c.message),
  );
  const byName = new Map(w.lastState!.containers.map((c) => [c.name, c.message]));
  assert.equal(byName.get('file'), 'disk full\n');
  const tail = byName.get('logs')!;
  assert.ok(tail.endsWith('line 99\n'), tail.slice(-40));
  assert.ok(!tail.includes('line 19\n'), 'at most the last 80 lines');
  assert.ok(Buffer.byteLength(tail) <= 2048);
});

test('lifecycle hooks: postStart runs after start (a failure kills the container with FailedPostStartHook); preStop runs before the stop, inside the grace period', async () => {
  rt.pullable.add('reg/app:1');
  rt.hooks.set('ExecSync', (req: { cmd: string[] }) => ({
    stdout: Buffer.from(''),
    stderr: Buffer.from(req.cmd.includes('fail') ? 'nope' : ''),
    exit_code: req.cmd.includes('fail') ? 1 : 0,
  }));
  const good = pod('hooks', {
    terminationGracePeriodSeconds: 20,
    containers: [
      {
        name: 'main',
        image: 'reg/app:1',
        lifecycle: {
          postStart: { exec: { command: ['sh', '-c', 'echo started'] } },
          preStop: { exec: { command: ['sh', '-c', 'drain'] } },
        },
      },
    ],
  });
  const bad = pod('badhook', {
    restartPolicy: 'Never',
    containers: [
      { name: 'main', image: 'reg/app:1', lifecycle: { postStart: { exec: { command: ['sh', '-c', 'fail'] } } } },
    ],
  });
  const k = newKubelet();
  await k.start();
  k.setSource('file', [good, bad]);
  await waitFor(() => events.some((e) => e.reason === 'FailedPostStartHook'));
  const failed = events.find((e) => e.reason === 'FailedPostStartHook')!;
  assert.match(
    failed.message,
    /^Exec lifecycle hook \(\[sh -c fail\]\) for Container "main" in Pod "badhook-n1_default\(.+\)" failed - error: command 'sh -c fail' exited with 1: nope, message: "nope"$/,
  );
  const calls = () =>
    rt.calls.map((c) => `${c.method}${c.method === 'ExecSync' ? ` ${(c.req.cmd as string[]).join(' ')}` : ''}`);
  // The two pods' workers run side by side: the good pod's hook may come after the bad pod's failure.
  await waitFor(() => calls().includes('ExecSync sh -c echo started'));
  const badId = [...rt.containers.values()].find(
    (c) => c.config.metadata.name === 'main' && c.config.labels['io.kubernetes.pod.name'] === 'badhook-n1',
  )!.id;
  await waitFor(() => rt.calls.some((c) => c.method === 'StopContainer' && c.req.container_id === badId));
  // Removing the good pod: preStop first, then StopContainer with what is left of 20 s.
  const goodId = [...rt.containers.values()].find((c) => c.config.labels['io.kubernetes.pod.name'] === 'hooks-n1')!.id;
  k.setSource('file', [bad]);
  await waitFor(() => rt.calls.some((c) => c.method === 'StopContainer' && c.req.container_id === goodId));
  assert.ok(calls().includes('ExecSync sh -c drain'), 'preStop ran');
  const stop = rt.calls.find((c) => c.method === 'StopContainer' && c.req.container_id === goodId)!;
  assert.ok(
    rt.calls.indexOf(stop) >
      rt.calls.findIndex((c) => c.method === 'ExecSync' && (c.req.cmd as string[]).includes('drain')),
    'preStop before StopContainer',
  );
  assert.ok(Number(stop.req.timeout) <= 20 && Number(stop.req.timeout) >= 19, `grace left: ${stop.req.timeout}`);
});

test('activeDeadlineSeconds: past it the pod is killed with a DeadlineExceeded event, is Failed with that reason, and nothing restarts', async () => {
  rt.pullable.add('reg/app:1');
  const { computePodStatus } = await import('./status/pod-status.js');
  const p = pod('deadline', { activeDeadlineSeconds: 1 });
  const k = newKubelet();
  await k.start();
  k.setSource('file', [p]);
  const w = await waitFor(() => k.workers.get(p.metadata!.uid!));
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  await waitFor(() => events.some((e) => e.reason === 'DeadlineExceeded'), 5000);
  await waitFor(() => [...rt.containers.values()].every((c) => c.state === 'CONTAINER_EXITED'), 5000);
  const creates = rt.count('CreateContainer');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(rt.count('CreateContainer'), creates, 'not started again');
  const st = computePodStatus({
    pod: p,
    state: w.lastState!,
    waiting: w.waiting,
    hostIP: '10.1.1.1',
    startTime: 'x',
    evicted: w.evicted,
  });
  assert.equal(st.phase, 'Failed');
  assert.equal(st.reason, 'DeadlineExceeded');
  assert.equal(st.message, 'Pod was active on the node longer than the specified deadline');
});

test("relists of what a pod's sync made or already read are no news: no second read; a relist after the container exits syncs it", async () => {
  rt.pullable.add('reg/app:1');
  const k = newKubelet(60_000);
  await k.start();
  const p = pod('settled', {});
  k.setSource('file', [p]);
  const uid = p.metadata!.uid!;
  const w = k.workers.get(uid)!;
  await waitFor(() => w.lastState?.containers.some((c) => c.state === 'running'));
  await w.idle();
  // The pod's own reads: ListPodSandbox filtered by its UID (the first sync's, and the one right after its starts).
  const reads = () =>
    rt.calls.filter(
      (c) => c.method === 'ListPodSandbox' && c.req.filter?.label_selector?.['io.kubernetes.pod.uid'] === uid,
    ).length;
  assert.equal(reads(), 2);
  const pleg = (k as unknown as { pleg: { relist(): Promise<{ at: number } | undefined> } }).pleg;
  const onRelist = (k as unknown as { onRelist(u: string[], s: unknown): void }).onRelist.bind(k);
  // The first relist sees the sandbox and the running container the read after the starts saw: nothing to do.
  const snap = (await pleg.relist())!;
  await w.idle();
  assert.equal(reads(), 2, 'the relist of what the sync made is not read again');
  // A relist answered before that read, showing less (only the sandbox): older than what the worker acted on.
  onRelist([uid], { ...snap, at: 0, fingerprints: new Map([[uid, 's:x:SANDBOX_READY']]) });
  await w.idle();
  assert.equal(reads(), 2, 'an older relist is no news');
  // The same fingerprint from a relist newer than the read: news, the pod syncs and reads.
  onRelist([uid], { ...snap, at: performance.now(), fingerprints: new Map([[uid, 's:x:SANDBOX_READY']]) });
  await waitFor(() => reads() === 3);
  await w.idle();
  // The container exits: the next relist syncs the pod, which starts it again.
  for (const id of [...rt.containers.keys()]) rt.exit(id, 1);
  await pleg.relist();
  await waitFor(() => rt.count('CreateContainer') === 2);
  // Four reads of the pod's state, one PodSandboxStatus: asked once, right after RunPodSandbox.
  await w.idle();
  assert.ok(reads() >= 4);
  assert.equal(rt.count('PodSandboxStatus'), 1);
  assert.ok(w.lastState?.sandboxes[0]?.ip, 'the reads still give the sandbox its IP');
});

test('a new sandbox has its status asked once; the old one is forgotten', async () => {
  rt.pullable.add('reg/app:1');
  const k = newKubelet(60_000);
  await k.start();
  const p = pod('resandboxed', {});
  k.setSource('file', [p]);
  const w = k.workers.get(p.metadata!.uid!)!;
  await waitFor(() => w.lastState?.containers.some((c) => c.state === 'running'));
  await w.idle();
  assert.equal(rt.count('PodSandboxStatus'), 1);
  const first = w.lastState!.sandboxes[0]!.id;
  // The sandbox dies: the pod gets a new one (and its IP from the runtime), the old one's network is dropped.
  rt.sandboxes.get(first)!.state = 'SANDBOX_NOTREADY';
  for (const c of rt.containers.values()) if (c.sandboxId === first) rt.exit(c.id, 137);
  await (k as unknown as { pleg: { relist(): Promise<unknown> } }).pleg.relist();
  await waitFor(() => w.lastState?.sandboxes.some((s) => s.ready && s.id !== first));
  await w.idle();
  assert.equal(rt.count('PodSandboxStatus'), 2);
  const networks = (w as unknown as { networks: Map<string, unknown> }).networks;
  assert.deepEqual([...networks.keys()], [w.lastState!.sandboxes.find((s) => s.ready)!.id]);
});

test("a host-network pod's status.podIP in its environment is the node's IP", async () => {
  rt.pullable.add('reg/app:1');
  const p = pod('hostenv', { hostNetwork: true });
  p.spec!.containers[0]!.env = [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }];
  const k = newKubelet();
  await k.start();
  k.setSource('file', [p]);
  const c = await waitFor(() => [...rt.containers.values()].find((x) => x.config.metadata?.name === 'main'));
  assert.deepEqual(
    (c.config.envs as { key: string; value: string }[]).find((e) => e.key === 'POD_IP'),
    { key: 'POD_IP', value: '10.1.1.1' },
  );
});

test('a pod whose host port another admitted pod holds is rejected with NodePorts; the holder runs on', async () => {
  rt.pullable.add('reg/app:1');
  const withPort = (name: string) =>
    pod(name, { containers: [{ name: 'main', image: 'reg/app:1', ports: [{ containerPort: 80, hostPort: 21017 }] }] });
  const first = withPort('holder');
  const k = newKubelet();
  await k.start();
  k.setSource('file', [first]);
  await waitFor(() => [...rt.containers.values()].some((c) => c.state === 'CONTAINER_RUNNING'));
  const second = withPort('taker');
  k.setSource('file', [first, second]);
  const w = await waitFor(() => k.workers.get(second.metadata!.uid!)?.evicted);
  assert.deepEqual(w, {
    reason: 'NodePorts',
    message: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
  });
  assert.equal(k.workers.get(first.metadata!.uid!)!.evicted, undefined);
});

test('a stopped kubelet starts no more syncs: requests and timers after stop() reach no runtime', async () => {
  const { k, w } = await withFailedPull();
  await k.stop();
  const calls = rt.count('ImageStatus');
  w.requestSync();
  await w.idle();
  assert.equal(rt.count('ImageStatus'), calls);
});
