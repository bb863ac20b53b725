import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { applyPodDefaults } from '../../kube/pod-defaults.js';
import { computePodActions, initContainerActions, isIdle, podFinished } from './actions.js';
import { containerHash, legacyContainerHash } from './container-hash.js';
import type { ContainerInfo, PodRuntimeState, SandboxInfo } from './runtime-state.js';

const mkPod = (over: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  applyPodDefaults({
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: {
      containers: [
        { name: 'a', image: 'i:1' },
        { name: 'b', image: 'i:1' },
      ],
      ...over,
    },
  });

let t = 1000;
const sb = (over: Partial<SandboxInfo> = {}): SandboxInfo => ({
  id: 'sb',
  ready: true,
  attempt: 0,
  createdAt: t++,
  ip: '10.0.0.2',
  hostNetwork: false,
  podName: 'p',
  podNamespace: 'default',
  podUid: 'u',
  ...over,
});
const ct = (pod: Pod, name: string, over: Partial<ContainerInfo> = {}): ContainerInfo => {
  const spec = [...(pod.spec!.initContainers ?? []), ...pod.spec!.containers].find((c) => c.name === name)!;
  return {
    id: `c-${name}-${t}`,
    sandboxId: 'sb',
    name,
    type: 'container',
    attempt: 0,
    state: 'running',
    hash: containerHash(spec),
    restartCount: 0,
    exitCode: 0,
    reason: '',
    message: '',
    createdAt: t++,
    startedAt: t,
    finishedAt: 0,
    image: 'i:1',
    imageRef: 'sha',
    ...over,
  };
};
const state = (sandboxes: SandboxInfo[], containers: ContainerInfo[]): PodRuntimeState => ({
  uid: 'u',
  sandboxes,
  containers: [...containers].sort((x, y) => y.createdAt - x.createdAt),
});

test('a new pod gets a sandbox (attempt 0) and all containers', () => {
  const a = computePodActions(mkPod(), state([], []));
  assert.equal(a.createSandbox, true);
  assert.equal(a.attempt, 0);
  assert.deepEqual(
    a.containersToStart.map((c) => c.name),
    ['a', 'b'],
  );
});

test('a running pod with unchanged containers needs nothing (adoption after restart)', () => {
  const pod = mkPod();
  const a = computePodActions(pod, state([sb()], [ct(pod, 'a'), ct(pod, 'b')]));
  assert.deepEqual(a, {
    killPod: false,
    createSandbox: false,
    sandboxId: a.sandboxId,
    attempt: 0,
    initToStart: [],
    ephemeralToStart: [],
    containersToStart: [],
    containersToKill: [],
    containersToResize: [],
  });
});

test('a changed container definition is killed and restarted', () => {
  const pod = mkPod();
  const old = ct(pod, 'a', { hash: 'deadbeef' });
  const a = computePodActions(pod, state([sb()], [old, ct(pod, 'b')]));
  assert.deepEqual(
    a.containersToStart.map((c) => c.name),
    ['a'],
  );
  assert.equal(a.containersToKill[0]!.container.id, old.id);
  assert.equal(a.containersToKill[0]!.message, 'Container a definition changed, will be restarted');
});

test('restart policy decides which exited containers come back', () => {
  const cases: [string, number, boolean][] = [
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 1, true],
    ['Never', 0, false],
    ['Never', 1, false],
  ];
  for (const [policy, code, restart] of cases) {
    const pod = mkPod({ restartPolicy: policy as 'Always' });
    const a = computePodActions(pod, state([sb()], [ct(pod, 'a', { state: 'exited', exitCode: code }), ct(pod, 'b')]));
    assert.equal(
      a.containersToStart.some((c) => c.name === 'a'),
      restart,
      `${policy} exit ${code}`,
    );
  }
});

test('all containers done and none to restart: the pod is killed, not recreated', () => {
  const pod = mkPod({ restartPolicy: 'OnFailure' });
  const a = computePodActions(
    pod,
    state([sb()], [ct(pod, 'a', { state: 'exited' }), ct(pod, 'b', { state: 'exited' })]),
  );
  assert.equal(a.killPod, true);
  assert.equal(a.createSandbox, false);
});

test('a dead sandbox is recreated with the next attempt, except for a Never pod that already ran', () => {
  const pod = mkPod();
  const a = computePodActions(pod, state([sb({ ready: false, attempt: 2 })], [ct(pod, 'a', { state: 'exited' })]));
  assert.equal(a.createSandbox, true);
  assert.equal(a.killPod, true);
  assert.equal(a.attempt, 3);
  const never = mkPod({ restartPolicy: 'Never' });
  const b = computePodActions(never, state([sb({ ready: false })], [ct(never, 'a', { state: 'exited' })]));
  assert.equal(b.createSandbox, false);
  assert.equal(b.killPod, true);
});

test('a sandbox without an IP, or with the wrong network mode, is replaced', () => {
  const pod = mkPod();
  assert.equal(computePodActions(pod, state([sb({ ip: '' })], [ct(pod, 'a'), ct(pod, 'b')])).createSandbox, true);
  const host = mkPod({ hostNetwork: true });
  assert.equal(
    computePodActions(host, state([sb({ ip: '', hostNetwork: true })], [ct(host, 'a'), ct(host, 'b')])).createSandbox,
    false,
  );
  assert.equal(computePodActions(host, state([sb()], [ct(host, 'a'), ct(host, 'b')])).createSandbox, true);
});

test('init containers run one at a time, in order, before app containers', () => {
  const pod = mkPod({
    initContainers: [
      { name: 'i1', image: 'i:1' },
      { name: 'i2', image: 'i:1' },
    ],
  });
  const s = sb();
  let a = computePodActions(pod, state([], []));
  assert.equal(a.initToStart[0]?.name, 'i1');
  assert.deepEqual(a.containersToStart, []);
  a = computePodActions(pod, state([s], [ct(pod, 'i1', { type: 'init' })]));
  assert.deepEqual(a.initToStart, [], 'wait while i1 runs');
  assert.deepEqual(a.containersToStart, []);
  a = computePodActions(pod, state([s], [ct(pod, 'i1', { type: 'init', state: 'exited' })]));
  assert.equal(a.initToStart[0]?.name, 'i2');
  a = computePodActions(
    pod,
    state([s], [ct(pod, 'i1', { type: 'init', state: 'exited' }), ct(pod, 'i2', { type: 'init', state: 'exited' })]),
  );
  assert.deepEqual(a.initToStart, []);
  assert.deepEqual(
    a.containersToStart.map((c) => c.name),
    ['a', 'b'],
  );
});

test('a failed init container is retried, unless the pod is Never, which then fails', () => {
  const pod = mkPod({ initContainers: [{ name: 'i1', image: 'i:1' }] });
  const failed = (p: Pod) => state([sb()], [ct(p, 'i1', { type: 'init', state: 'exited', exitCode: 2 })]);
  assert.equal(computePodActions(pod, failed(pod)).initToStart[0]?.name, 'i1');
  const never = mkPod({ restartPolicy: 'Never', initContainers: [{ name: 'i1', image: 'i:1' }] });
  const a = computePodActions(never, failed(never));
  assert.equal(a.killPod, true);
  assert.deepEqual(a.initToStart, []);
  assert.equal(initContainerActions(never, failed(never), 'sb').failed?.exitCode, 2);
});

test('only the newest instance of a container counts', () => {
  const pod = mkPod();
  const oldExited = ct(pod, 'a', { state: 'exited', exitCode: 1 });
  const nowRunning = ct(pod, 'a');
  const a = computePodActions(pod, state([sb()], [oldExited, nowRunning, ct(pod, 'b')]));
  assert.deepEqual(a.containersToStart, []);
});

test('the container hash covers the name and the image only (upstream 1.31+); containers hashed by the older rule are kept', () => {
  const base = { name: 'a', image: 'i:1', command: ['x'] };
  assert.equal(
    containerHash(base),
    containerHash({ ...base, resources: { limits: { cpu: '1' } }, terminationMessagePolicy: 'File', command: ['y'] }),
  );
  assert.notEqual(containerHash(base), containerHash({ ...base, image: 'i:2' }));
  const pod = mkPod({ containers: [{ ...base, imagePullPolicy: 'IfNotPresent' }] });
  const c = pod.spec!.containers[0]!;
  // Started by a previous tskube (whole-spec hash): adopted, not restarted.
  let a = computePodActions(pod, state([sb()], [ct(pod, 'a', { hash: legacyContainerHash(c) })]));
  assert.deepEqual([a.containersToKill.length, a.containersToStart.length], [0, 0]);
  // A new default appearing in the spec (an apiserver upgrade) changes nothing either.
  const later = mkPod({ containers: [{ ...c, terminationMessagePath: '/dev/termination-log', stdin: false }] });
  a = computePodActions(later, state([sb()], [ct(pod, 'a')]));
  assert.equal(a.containersToKill.length, 0);
  // A new image is a new container.
  const newer = mkPod({ containers: [{ ...c, image: 'i:2' }] });
  a = computePodActions(newer, state([sb()], [ct(pod, 'a', { hash: legacyContainerHash(c) })]));
  assert.deepEqual(
    a.containersToKill.map((k) => k.message),
    ['Container a definition changed, will be restarted'],
  );
});

test('a pod the API records as Succeeded or Failed never runs again, even with its containers gone', () => {
  for (const phase of ['Succeeded', 'Failed']) {
    const pod = { ...mkPod({ restartPolicy: 'Always' }), status: { phase } };
    const none = computePodActions(pod, state([], []));
    assert.deepEqual([none.createSandbox, none.killPod, none.containersToStart.length], [false, false, 0]);
    const live = computePodActions(pod, state([sb()], [ct(pod, 'a')]));
    assert.deepEqual(
      [live.createSandbox, live.killPod, live.containersToStart.length],
      [false, true, 0],
      'whatever still runs is stopped',
    );
  }
});

test('a liveness failure kills the container without starting it in the same sync (the restart then backs off like a crash); the pod itself stays', () => {
  const pod = applyPodDefaults({
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: { containers: [{ name: 'a', image: 'i:1' }] },
  });
  const a1 = ct(pod, 'a');
  const probes = {
    result: (id: string, type: 'Liveness' | 'Startup') => (id === a1.id && type === 'Liveness' ? 'failure' : undefined),
  };
  const a = computePodActions(pod, state([sb()], [a1]), probes);
  assert.equal(a.killPod, false);
  assert.deepEqual(a.containersToStart, []);
  assert.equal(a.containersToKill[0]!.message, 'Container a failed liveness probe, will be restarted');
  // Once it shows as exited, it is started again (through the backoff in the worker).
  const next = computePodActions(
    pod,
    state([sb()], [{ ...a1, state: 'exited', exitCode: 137, finishedAt: t }]),
    probes,
  );
  assert.deepEqual(
    next.containersToStart.map((c) => c.name),
    ['a'],
  );
});

test('native sidecars: started in order before the next init container, past their startup probe; restarted whenever they stop; they do not keep a finished pod alive', () => {
  const pod = mkPod({
    restartPolicy: 'Never',
    initContainers: [
      { name: 'sc', image: 'i:1', restartPolicy: 'Always', startupProbe: { exec: { command: ['true'] } } },
      { name: 'i1', image: 'i:1' },
    ],
    containers: [{ name: 'a', image: 'i:1' }],
  });
  const s = sb();
  assert.deepEqual(
    computePodActions(pod, state([], [])).initToStart.map((c) => c.name),
    ['sc'],
    'a new sandbox starts with the first',
  );
  const sc = ct(pod, 'sc', { type: 'init' });
  let started = false;
  const probes = {
    result: (id: string, type: 'Liveness' | 'Startup') =>
      id === sc.id && type === 'Startup' ? (started ? 'success' : undefined) : undefined,
  };
  let a = computePodActions(pod, state([s], [sc]), probes);
  assert.deepEqual([a.initToStart, a.containersToStart], [[], []], "i1 waits for the sidecar's startup probe");
  started = true;
  a = computePodActions(pod, state([s], [sc]), probes);
  assert.deepEqual(
    a.initToStart.map((c) => c.name),
    ['i1'],
  );
  a = computePodActions(pod, state([s], [sc, ct(pod, 'i1', { type: 'init', state: 'exited' })]), probes);
  assert.deepEqual([a.initToStart.length, a.containersToStart.map((c) => c.name)], [0, ['a']]);
  // Running beside the app: a sidecar that exits is started again, even in a Never pod; the app is left alone.
  const scExited = { ...sc, state: 'exited' as const, exitCode: 1 };
  a = computePodActions(
    pod,
    state([s], [scExited, ct(pod, 'i1', { type: 'init', state: 'exited' }), ct(pod, 'a')]),
    probes,
  );
  assert.deepEqual([a.initToStart.map((c) => c.name), a.containersToStart.length, a.killPod], [['sc'], 0, false]);
  // The app is done: the pod ends, the running sidecar with it.
  a = computePodActions(
    pod,
    state([s], [sc, ct(pod, 'i1', { type: 'init', state: 'exited' }), ct(pod, 'a', { state: 'exited' })]),
    probes,
  );
  assert.equal(a.killPod, true);
  // A sidecar failing its liveness probe is killed (and started again once it shows as exited).
  const live = {
    result: (id: string, type: 'Liveness' | 'Startup') =>
      id === sc.id ? (type === 'Liveness' ? 'failure' : 'success') : undefined,
  };
  a = computePodActions(pod, state([s], [sc, ct(pod, 'i1', { type: 'init', state: 'exited' }), ct(pod, 'a')]), live);
  assert.deepEqual(
    [a.containersToKill.map((k) => k.message), a.killPod],
    [['Container sc failed liveness probe, will be restarted'], false],
  );
});

test('init containers of an older sandbox do not count: a new sandbox runs them all again', () => {
  const pod = mkPod({ initContainers: [{ name: 'i1', image: 'i:1' }] });
  const old = ct(pod, 'i1', { type: 'init', state: 'exited', sandboxId: 'old' });
  const a = computePodActions(pod, state([sb({ id: 'new' })], [old]));
  assert.deepEqual([a.initToStart.map((c) => c.name), a.containersToStart.length], [['i1'], 0]);
});

test('ephemeral containers start once per sandbox, before init containers, and are never restarted', () => {
  const pod = mkPod({
    initContainers: [{ name: 'i1', image: 'i:1' }],
    ephemeralContainers: [{ name: 'dbg', image: 'i:1', targetContainerName: 'a' }],
  });
  let a = computePodActions(pod, state([sb()], [ct(pod, 'i1', { type: 'init' })]));
  assert.deepEqual([a.ephemeralToStart.map((c) => c.name), a.initToStart.length], [['dbg'], 0], 'while i1 still runs');
  const done = {
    name: 'dbg',
    id: 'c-dbg',
    sandboxId: 'sb',
    type: 'container' as const,
    attempt: 0,
    state: 'exited' as const,
    hash: '',
    restartCount: 0,
    exitCode: 0,
    reason: '',
    message: '',
    createdAt: t++,
    startedAt: t,
    finishedAt: t,
    image: 'i:1',
    imageRef: 'sha',
  };
  a = computePodActions(
    pod,
    state([sb()], [ct(pod, 'i1', { type: 'init', state: 'exited' }), done, ct(pod, 'a'), ct(pod, 'b')]),
  );
  assert.deepEqual([a.ephemeralToStart, a.containersToStart, a.killPod], [[], [], false]);
});

test('in-place resize: a running container whose cgroup differs from its resources is updated (decreases first), or restarted when its resize policy says so', () => {
  const res = (cpu: string, mem: string) => ({ requests: { cpu, memory: mem }, limits: { cpu, memory: mem } });
  const pod = mkPod({
    containers: [
      { name: 'a', image: 'i:1', resources: res('200m', '128Mi') },
      { name: 'b', image: 'i:1', resources: res('100m', '64Mi') },
      {
        name: 'r',
        image: 'i:1',
        resources: res('100m', '64Mi'),
        resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
      },
      { name: 's', image: 'i:1', resources: res('100m', '64Mi') },
    ],
  });
  // What containerd reports: a held 100m/128Mi (cpu up), b held 100m/128Mi (memory down), r held 100m/128Mi (memory, restart), s unchanged.
  const held = (cpuMilli: number, mem: number) => ({
    cpuShares: Math.floor((cpuMilli * 1024) / 1000),
    cpuQuota: cpuMilli * 100,
    cpuPeriod: 100000,
    memoryLimit: mem,
  });
  const a = ct(pod, 'a', { resources: held(100, 128 * 2 ** 20) });
  const b = ct(pod, 'b', { resources: held(100, 128 * 2 ** 20) });
  const r = ct(pod, 'r', { resources: held(100, 128 * 2 ** 20) });
  const s2 = ct(pod, 's', { resources: held(100, 64 * 2 ** 20) });
  const acts = computePodActions(pod, state([sb()], [a, b, r, s2]));
  assert.deepEqual(
    acts.containersToResize.map((x) => [x.container.name, x.id]),
    [
      ['b', b.id],
      ['a', a.id],
    ],
    'the memory decrease goes first',
  );
  assert.deepEqual(
    acts.containersToKill.map((k) => [k.container.id, k.message]),
    [[r.id, 'Container r resize requires restart']],
  );
  assert.deepEqual(
    acts.containersToStart.map((c) => c.name),
    ['r'],
  );
  // A runtime that reports no resources is left alone; an exited container is started with its resources anyway.
  const quiet = computePodActions(pod, state([sb()], [ct(pod, 'a'), ct(pod, 'b'), ct(pod, 'r'), ct(pod, 's')]));
  assert.deepEqual(quiet.containersToResize, []);
});

test('in-place resize: a memory request change alone restarts under RestartContainer and is an update under NotRequired', () => {
  const resources = { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
  const pod = mkPod({
    containers: [
      {
        name: 'r',
        image: 'i:1',
        resources,
        resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
      },
      { name: 'n', image: 'i:1', resources },
    ],
  });
  // The cgroups match the limits; the containers were created with a 16Mi memory request.
  const held = { cpuShares: 102, cpuQuota: 10000, cpuPeriod: 100000, memoryLimit: 64 * 2 ** 20 };
  const r = ct(pod, 'r', { resources: { ...held, memoryRequest: 16 * 2 ** 20 } });
  const n = ct(pod, 'n', { resources: { ...held, memoryRequest: 16 * 2 ** 20 } });
  const acts = computePodActions(pod, state([sb()], [r, n]));
  assert.deepEqual(
    acts.containersToKill.map((k) => [k.container.id, k.message]),
    [[r.id, 'Container r resize requires restart']],
  );
  assert.deepEqual(
    acts.containersToResize.map((x) => x.id),
    [n.id],
  );
  assert.equal(acts.resizeRestart, true, 'the pod cgroup is updated before r starts again');
  // Once the request is the one recorded, nothing is left to do; a container without a record is judged by its cgroup.
  const settled = computePodActions(
    pod,
    state(
      [sb()],
      [ct(pod, 'r', { resources: { ...held, memoryRequest: 32 * 2 ** 20 } }), ct(pod, 'n', { resources: held })],
    ),
  );
  assert.deepEqual([settled.containersToKill, settled.containersToResize, settled.resizeRestart], [[], [], undefined]);
});

test('podFinished: every container exited under Never, exited 0 under OnFailure; never under Always', async () => {
  const { podFinished } = await import('./actions.js');
  const pod = (restartPolicy: string) =>
    ({
      metadata: { uid: 'u' },
      spec: {
        restartPolicy,
        containers: [
          { name: 'a', image: 'i' },
          { name: 'b', image: 'i' },
        ],
      },
    }) as never;
  const c = (name: string, state: string, exitCode = 0) =>
    ({
      id: name,
      name,
      state,
      exitCode,
      attempt: 0,
      createdAt: 1,
      startedAt: 1,
      finishedAt: 2,
      hash: '',
      restartCount: 0,
      sandboxId: 's',
    }) as never;
  const st = (...containers: never[]) => ({ sandboxes: [], containers }) as never;
  assert.equal(podFinished(pod('Never'), st(c('a', 'exited', 1), c('b', 'exited'))), true);
  assert.equal(podFinished(pod('Never'), st(c('a', 'exited'), c('b', 'running'))), false);
  assert.equal(podFinished(pod('Never'), st(c('a', 'exited'))), false, 'b never ran');
  assert.equal(podFinished(pod('OnFailure'), st(c('a', 'exited'), c('b', 'exited', 2))), false);
  assert.equal(podFinished(pod('OnFailure'), st(c('a', 'exited'), c('b', 'exited'))), true);
  assert.equal(podFinished(pod('Always'), st(c('a', 'exited'), c('b', 'exited'))), false);
});

test('isIdle: a running pod is; a new pod, an exited container to restart, a changed one to kill are not', () => {
  const pod = mkPod();
  assert.equal(isIdle(computePodActions(pod, state([sb()], [ct(pod, 'a'), ct(pod, 'b')]))), true);
  assert.equal(isIdle(computePodActions(pod, state([], []))), false);
  assert.equal(
    isIdle(computePodActions(pod, state([sb()], [ct(pod, 'a', { state: 'exited', exitCode: 1 }), ct(pod, 'b')]))),
    false,
  );
  assert.equal(
    isIdle(computePodActions(pod, state([sb()], [ct(pod, 'a', { hash: 'deadbeef' }), ct(pod, 'b')]))),
    false,
  );
  const done = mkPod({ restartPolicy: 'OnFailure' });
  assert.equal(
    isIdle(
      computePodActions(done, state([sb()], [ct(done, 'a', { state: 'exited' }), ct(done, 'b', { state: 'exited' })])),
    ),
    false,
    'its sandbox is still to stop',
  );
});

test('container restart rules: an exit code a Restart rule lists restarts the container in a Never pod; others end it', () => {
  const rule = { action: 'Restart', exitCodes: { operator: 'In', values: [42] } };
  const p = mkPod({
    restartPolicy: 'Never',
    containers: [{ name: 'a', image: 'i:1', restartPolicy: 'Never', restartPolicyRules: [rule] } as Container],
  });
  const started = (exitCode: number) =>
    computePodActions(p, state([sb()], [ct(p, 'a', { state: 'exited', exitCode })])).containersToStart.map(
      (c) => c.name,
    );
  assert.deepEqual(started(42), ['a']);
  assert.deepEqual(started(1), []);
  assert.equal(podFinished(p, state([sb()], [ct(p, 'a', { state: 'exited', exitCode: 42 })])), false);
  assert.equal(podFinished(p, state([sb()], [ct(p, 'a', { state: 'exited', exitCode: 1 })])), true);
});

test('RestartAllContainers: the old run is stopped without grace, then the pod starts over from its first init container', () => {
  const rule = { action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } };
  const pod = mkPod({
    restartPolicy: 'Never',
    initContainers: [
      { name: 'init', image: 'i:1' },
      { name: 'side', image: 'i:1', restartPolicy: 'Always' },
    ],
    containers: [
      { name: 'src', image: 'i:1', restartPolicy: 'Never', restartPolicyRules: [rule] } as Container,
      { name: 'b', image: 'i:1' },
    ],
  });
  const init = ct(pod, 'init', { type: 'init', state: 'exited', finishedAt: t++ });
  const side = ct(pod, 'side', { type: 'init' });
  const src = ct(pod, 'src', { state: 'exited', exitCode: 42, finishedAt: (t += 100) });
  // b started after src had exited, before the kubelet saw it: still the old run.
  const b = ct(pod, 'b');
  const during = computePodActions(pod, state([sb()], [init, side, b, src]));
  assert.deepEqual(
    during.containersToKill.map((k) => [k.container.name, k.graceSec]),
    [
      ['b', 0],
      ['side', 0],
    ],
  );
  assert.deepEqual([during.initToStart, during.containersToStart, during.killPod], [[], [], false]);
  assert.equal(podFinished(pod, state([sb()], [init, side, b, src])), false);
  // Everything of the old run stopped (b with 137, which matches no rule): the first init container starts again.
  const stopped = [
    init,
    { ...side, state: 'exited' as const, exitCode: 137 },
    { ...b, state: 'exited' as const, exitCode: 137 },
    src,
  ];
  const after = computePodActions(pod, state([sb()], stopped));
  assert.deepEqual(
    after.initToStart.map((c) => c.name),
    ['init'],
  );
  assert.equal(after.containersToKill.length, 0);
  assert.equal(podFinished(pod, state([sb()], stopped)), false);
  // The new run's containers carry the trigger's ID: once init has run again, the sidecar comes next.
  const init2 = ct(pod, 'init', { type: 'init', state: 'exited', finishedAt: t++, restartAllAfter: src.id });
  const next = computePodActions(pod, state([sb()], [init2, ...stopped]));
  assert.deepEqual(
    next.initToStart.map((c) => c.name),
    ['side'],
  );
  // A container exit matching no RestartAllContainers rule is an ordinary exit under the pod's Never policy.
  const plain = computePodActions(
    pod,
    state([sb()], [init, side, { ...b, state: 'exited', exitCode: 1 }, ct(pod, 'src')]),
  );
  assert.deepEqual(plain.containersToKill, []);
  assert.deepEqual(plain.containersToStart, []);
});

test('in-place resize of a running non-sidecar init container: updated in place while the pod initializes', () => {
  const res = (cpu: string) => ({ requests: { cpu }, limits: { cpu } });
  const pod = mkPod({
    initContainers: [
      {
        name: 'init',
        image: 'i:1',
        resources: res('200m'),
        resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }],
      },
    ],
    containers: [{ name: 'a', image: 'i:1', resources: res('100m') }],
  });
  const held = { cpuShares: 102, cpuQuota: 10000, cpuPeriod: 100000, memoryLimit: 0 };
  const init = ct(pod, 'init', { type: 'init', resources: held });
  const acts = computePodActions(pod, state([sb()], [init]));
  assert.deepEqual(
    acts.containersToResize.map((x) => [x.container.name, x.id]),
    [['init', init.id]],
  );
  assert.deepEqual([acts.containersToKill, acts.initToStart, acts.containersToStart], [[], [], []]);
});
