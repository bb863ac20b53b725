import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { applyPodDefaults } from '../../kube/pod-defaults.js';
import { qosClass } from '../../kube/pod-qos.js';
import type { ContainerInfo, PodRuntimeState } from '../pods/runtime-state.js';
import type { Waiting } from '../pods/worker.js';
import { computePodStatus } from './pod-status.js';

const pod = (spec: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  applyPodDefaults({
    metadata: { name: 'p', namespace: 'default', uid: 'u' },
    spec: { containers: [{ name: 'a', image: 'img:1' }], ...spec },
  });
let t = 1_700_000_000_000;
const c = (name: string, over: Partial<ContainerInfo> = {}): ContainerInfo => ({
  id: `id-${name}-${t}`,
  sandboxId: 's',
  name,
  type: 'container',
  attempt: 0,
  state: 'running',
  hash: 'h',
  restartCount: 0,
  exitCode: 0,
  reason: '',
  message: '',
  createdAt: t++,
  startedAt: t,
  finishedAt: 0,
  image: 'img:1',
  imageRef: 'sha256:abc',
  ...over,
});
const st = (containers: ContainerInfo[], ip = '10.244.0.5', ready = true): PodRuntimeState => ({
  uid: 'u',
  sandboxes: [
    {
      id: 's',
      ready,
      attempt: 0,
      createdAt: 1,
      ip,
      hostNetwork: false,
      podName: 'p',
      podNamespace: 'default',
      podUid: 'u',
    },
  ],
  containers: [...containers].sort((x, y) => y.createdAt - x.createdAt),
});
const status = (p: Pod, s: PodRuntimeState, waiting: Record<string, Waiting> = {}) =>
  computePodStatus({
    pod: p,
    state: s,
    waiting: new Map(Object.entries(waiting)),
    hostIP: '192.168.1.10',
    startTime: '2026-12-02T10:00:00Z',
  });
const conds = (s: any) => Object.fromEntries(s.conditions.map((x: any) => [x.type, x.status]));

test('a running pod: Running, all conditions True, IPs, containerd:// IDs', () => {
  const s = status(pod(), st([c('a')]));
  assert.equal(s.phase, 'Running');
  assert.deepEqual(conds(s), {
    PodReadyToStartContainers: 'True',
    Initialized: 'True',
    Ready: 'True',
    ContainersReady: 'True',
    PodScheduled: 'True',
  });
  assert.equal(s.podIP, '10.244.0.5');
  assert.deepEqual(s.podIPs, [{ ip: '10.244.0.5' }]);
  assert.equal(s.hostIP, '192.168.1.10');
  assert.equal(s.qosClass, 'BestEffort');
  const cs = s.containerStatuses[0];
  assert.match(cs.containerID, /^containerd:\/\/id-a-/);
  assert.equal(cs.ready, true);
  assert.equal(cs.started, true);
  assert.equal(cs.imageID, 'sha256:abc');
  assert.ok(cs.state.running.startedAt);
});

test('image pull trouble: Pending, waiting with the reason, not ready', () => {
  const s = status(pod(), st([]), { a: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "img:1"' } });
  assert.equal(s.phase, 'Pending');
  assert.deepEqual(s.containerStatuses[0].state, {
    waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "img:1"' },
  });
  const ready = s.conditions.find((x: any) => x.type === 'Ready');
  assert.deepEqual(
    [ready.status, ready.reason, ready.message],
    ['False', 'ContainersNotReady', 'containers with unready status: [a]'],
  );
});

test('CrashLoopBackOff: waiting, lastState terminated, restartCount, phase Running under Always', () => {
  const s = status(pod(), st([c('a', { state: 'exited', exitCode: 1, restartCount: 2, finishedAt: t })]), {
    a: { reason: 'CrashLoopBackOff', message: 'back-off 20s restarting failed container=a' },
  });
  assert.equal(s.phase, 'Running');
  const cs = s.containerStatuses[0];
  assert.equal(cs.state.waiting.reason, 'CrashLoopBackOff');
  assert.equal(cs.lastState.terminated.exitCode, 1);
  assert.equal(cs.lastState.terminated.reason, 'Error');
  assert.equal(cs.restartCount, 2);
});

test('finished pods: Succeeded under OnFailure with exit 0, Failed under Never with exit 1', () => {
  const ok = status(pod({ restartPolicy: 'OnFailure' }), st([c('a', { state: 'exited', exitCode: 0, finishedAt: t })]));
  assert.equal(ok.phase, 'Succeeded');
  assert.equal(ok.conditions.find((x: any) => x.type === 'Ready').reason, 'PodCompleted');
  assert.equal(ok.containerStatuses[0].state.terminated.reason, 'Completed');
  const bad = status(pod({ restartPolicy: 'Never' }), st([c('a', { state: 'exited', exitCode: 1, finishedAt: t })]));
  assert.equal(bad.phase, 'Failed');
});

test('init containers: Pending and not Initialized until all have succeeded', () => {
  const p = pod({ initContainers: [{ name: 'i', image: 'img:1' }] });
  const s = status(p, st([c('i', { type: 'init' })]));
  assert.equal(s.phase, 'Pending');
  const init = s.conditions.find((x: any) => x.type === 'Initialized');
  assert.deepEqual([init.status, init.message], ['False', 'containers with incomplete status: [i]']);
  // As upstream: an app container waits behind init containers as PodInitializing (e2e InitContainer tests).
  assert.equal(s.containerStatuses[0].state.waiting.reason, 'PodInitializing');
  assert.equal(status(pod(), st([])).containerStatuses[0].state.waiting.reason, 'ContainerCreating');
  const s2 = status(p, st([c('i', { type: 'init', state: 'exited' }), c('a')]));
  assert.equal(s2.phase, 'Running');
  assert.equal(s2.initContainerStatuses[0].ready, true);
});

test('hostNetwork pods get the host IP; QoS classes', () => {
  const s = status(pod({ hostNetwork: true }), st([c('a')], ''));
  assert.equal(s.podIP, '192.168.1.10');
  assert.equal(
    qosClass(pod({ containers: [{ name: 'a', image: 'i', resources: { limits: { cpu: '1', memory: '1Gi' } } }] }).spec),
    'Guaranteed',
  );
  assert.equal(
    qosClass(pod({ containers: [{ name: 'a', image: 'i', resources: { requests: { cpu: '100m' } } }] }).spec),
    'Burstable',
  );
});

test('probes: a running container is ready only once its readiness probe passed, and started once its startup probe did', () => {
  const input = (ready: boolean, started: boolean) =>
    computePodStatus({
      pod: pod(),
      state: st([c('a')]),
      waiting: new Map(),
      hostIP: '192.168.1.10',
      startTime: 'x',
      probes: { ready: () => ready, started: () => started },
    });
  const notReady = input(false, true);
  assert.equal(notReady.phase, 'Running');
  assert.deepEqual([notReady.containerStatuses[0].ready, notReady.containerStatuses[0].started], [false, true]);
  const cr = notReady.conditions.find((x: any) => x.type === 'ContainersReady');
  assert.deepEqual([cr.status, cr.message], ['False', 'containers with unready status: [a]']);
  const notStarted = input(false, false);
  assert.deepEqual([notStarted.containerStatuses[0].ready, notStarted.containerStatuses[0].started], [false, false]);
  assert.equal(input(true, true).conditions.find((x: any) => x.type === 'Ready').status, 'True');
});

test('sidecars: reported among the init containers with started and ready, part of ContainersReady; a sidecar that is not started keeps the pod Pending and uninitialized', () => {
  const p = pod({
    initContainers: [
      { name: 'sc', image: 'img:1', restartPolicy: 'Always' },
      { name: 'i1', image: 'img:1' },
    ],
  });
  let s = status(p, st([c('sc', { type: 'init' }), c('i1', { type: 'init', state: 'exited' }), c('a')]));
  assert.equal(s.phase, 'Running');
  assert.deepEqual(
    s.initContainerStatuses.map((x: any) => [x.name, x.ready, x.started, Object.keys(x.state)[0]]),
    [
      ['sc', true, true, 'running'],
      ['i1', true, false, 'terminated'],
    ],
  );
  assert.deepEqual(conds(s), {
    PodReadyToStartContainers: 'True',
    Initialized: 'True',
    Ready: 'True',
    ContainersReady: 'True',
    PodScheduled: 'True',
  });
  // The sidecar crashed and waits to restart: not ready, the pod stays initialized and Running.
  s = status(
    p,
    st([c('sc', { type: 'init', state: 'exited', exitCode: 1 }), c('i1', { type: 'init', state: 'exited' }), c('a')]),
    { sc: { reason: 'CrashLoopBackOff', message: 'back-off' } },
  );
  assert.equal(s.phase, 'Running');
  assert.deepEqual([conds(s).Initialized, conds(s).ContainersReady], ['True', 'False']);
  assert.match(s.conditions.find((x: any) => x.type === 'Ready').message, /\[sc\]/);
  // Before the app: the sidecar is created but not started (its startup probe has not passed).
  const notStarted = computePodStatus({
    pod: p,
    state: st([c('sc', { type: 'init' })]),
    waiting: new Map(),
    hostIP: '192.168.1.10',
    startTime: '2026-12-02T10:00:00Z',
    probes: { ready: () => false, started: (n) => n !== 'sc' },
  });
  assert.equal(notStarted.phase, 'Pending');
  assert.equal(
    notStarted.conditions.find((x: any) => x.type === 'Initialized').message,
    'containers with incomplete status: [sc i1]',
  );
});

test("readiness gates: Ready waits for each gate's condition to be True, with upstream's messages", () => {
  const p = pod({ readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }] });
  const ready = (x: Pod) => status(x, st([c('a')])).conditions.find((y: any) => y.type === 'Ready');
  let r = ready(p);
  assert.deepEqual(
    [r.status, r.reason, r.message],
    [
      'False',
      'ReadinessGatesNotReady',
      'corresponding condition of pod readiness gate "example.com/lb" does not exist., corresponding condition of pod readiness gate "example.com/dns" does not exist.',
    ],
  );
  r = ready({
    ...p,
    status: {
      conditions: [
        { type: 'example.com/lb', status: 'True' },
        { type: 'example.com/dns', status: 'False' },
      ],
    },
  });
  assert.deepEqual(
    [r.status, r.message],
    ['False', 'the status of pod readiness gate "example.com/dns" is not "True", but False'],
  );
  r = ready({
    ...p,
    status: {
      conditions: [
        { type: 'example.com/lb', status: 'True' },
        { type: 'example.com/dns', status: 'True' },
      ],
    },
  });
  assert.equal(r.status, 'True');
  assert.equal(
    status({ ...p, status: {} }, st([c('a')])).conditions.find((y: any) => y.type === 'ContainersReady').status,
    'True',
    'ContainersReady ignores the gates',
  );
});

test("dual-stack: the runtime's additional IPs follow the first in podIPs", () => {
  const s0 = st([c('a')]);
  s0.sandboxes[0]!.additionalIps = ['fd00:10:244::5'];
  const s = status(pod(), s0);
  assert.equal(s.podIP, '10.244.0.5');
  assert.deepEqual(s.podIPs, [{ ip: '10.244.0.5' }, { ip: 'fd00:10:244::5' }]);
});

test("dual-stack node: hostIPs lists both of the node's addresses; a host-network pod's podIPs are the node's", () => {
  const hostIPs = ['192.0.2.1', 'fd00:192::1'];
  const s = computePodStatus({
    pod: pod(),
    state: st([c('a')]),
    waiting: new Map(),
    hostIP: '192.0.2.1',
    hostIPs,
    startTime: 't',
  }) as any;
  assert.equal(s.hostIP, '192.0.2.1');
  assert.deepEqual(s.hostIPs, [{ ip: '192.0.2.1' }, { ip: 'fd00:192::1' }]);
  const h = computePodStatus({
    pod: pod({ hostNetwork: true }),
    state: st([c('a')]),
    waiting: new Map(),
    hostIP: '192.0.2.1',
    hostIPs,
    startTime: 't',
  }) as any;
  assert.equal(h.podIP, '192.0.2.1');
  assert.deepEqual(h.podIPs, [{ ip: '192.0.2.1' }, { ip: 'fd00:192::1' }]);
});

test("every container the runtime has reports its resources (the runtime's when running) and allocated requests", () => {
  const p = pod({
    containers: [
      {
        name: 'a',
        image: 'img:1',
        resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
      },
      { name: 'b', image: 'img:1' },
      { name: 'c', image: 'img:1' },
    ],
  });
  const s = status(
    p,
    st([
      c('a', { resources: { cpuShares: 256, cpuQuota: 50_000, cpuPeriod: 100_000, memoryLimit: 64 * 1024 * 1024 } }),
      c('b', { state: 'exited', exitCode: 0 }),
    ]),
  );
  const byName = Object.fromEntries(
    (s.containerStatuses as { name: string }[]).map((x) => [x.name, x as Record<string, unknown>]),
  );
  assert.deepEqual(byName.a!.resources, {
    limits: { cpu: '500m', memory: '64Mi' },
    requests: { cpu: '250m', memory: '64Mi' },
  });
  assert.deepEqual(byName.a!.allocatedResources, { cpu: '250m', memory: '64Mi' });
  assert.deepEqual(byName.b!.resources, {}, 'a container without requirements: empty, as upstream');
  assert.equal(byName.b!.allocatedResources, undefined);
  assert.equal(byName.c!.resources, undefined, 'not created yet: nothing the runtime holds');
});

test("pod-level status.resources and allocatedResources: pod-level values where set, the containers' totals otherwise", () => {
  const plain = status(
    pod({
      containers: [{ name: 'a', image: 'img:1', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } }],
    }),
    st([c('a')]),
  );
  assert.deepEqual(plain.resources, { limits: { cpu: '200m' }, requests: { cpu: '100m' } });
  assert.deepEqual(plain.allocatedResources, { cpu: '100m' });
  const podLevel = pod({ containers: [{ name: 'a', image: 'img:1' }] });
  (podLevel.spec as { resources?: object }).resources = {
    requests: { cpu: '20m', memory: '35Mi' },
    limits: { cpu: '20m', memory: '35Mi' },
  };
  const s = status(podLevel, st([c('a')]));
  assert.deepEqual(s.resources, { limits: { cpu: '20m', memory: '35Mi' }, requests: { cpu: '20m', memory: '35Mi' } });
  assert.deepEqual(s.allocatedResources, { cpu: '20m', memory: '35Mi' });
  assert.deepEqual(status(pod(), st([c('a')])).resources, {});
});

test('phase with container restart rules: a container its rule restarts keeps a Never pod Running; done ones finish it', () => {
  const p = pod({
    restartPolicy: 'Never',
    containers: [
      {
        name: 'a',
        image: 'img:1',
        restartPolicy: 'Never',
        restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
      } as NonNullable<Pod['spec']>['containers'][number],
    ],
  });
  assert.equal(status(p, st([c('a', { state: 'exited', exitCode: 42 })])).phase, 'Running');
  assert.equal(status(p, st([c('a', { state: 'exited', exitCode: 0 })])).phase, 'Succeeded');
  assert.equal(status(p, st([c('a', { state: 'exited', exitCode: 1 })])).phase, 'Failed');
});

test('observedGeneration: the pod generation the status reflects, on the status and on each kubelet condition', () => {
  const p = { ...pod(), metadata: { ...pod().metadata, generation: 3 } };
  const s = status(p, st([c('a')]));
  assert.equal(s.observedGeneration, 3);
  assert.ok((s.conditions as { observedGeneration?: number }[]).every((x) => x.observedGeneration === 3));
  assert.equal(status(pod(), st([c('a')])).observedGeneration, undefined, 'no generation: none reported');
});

test('a pod stopped for good (being deleted): stopped containers make it Succeeded or Failed, whatever its restart policy', () => {
  const p = pod(); // restartPolicy Always
  const stopped = st([c('a', { state: 'exited', exitCode: 137 })]);
  assert.equal(status(p, stopped).phase, 'Running', 'restarting, while the pod is wanted');
  const final = computePodStatus({
    pod: p,
    state: stopped,
    waiting: new Map(),
    hostIP: '192.168.1.10',
    startTime: '2026-12-02T10:00:00Z',
    terminal: true,
  });
  assert.equal(final.phase, 'Failed');
  assert.deepEqual(final.containerStatuses[0].state.terminated.exitCode, 137);
  const clean = { ...stopped, containers: [c('a', { state: 'exited', exitCode: 0 })] };
  assert.equal(
    computePodStatus({ pod: p, state: clean, waiting: new Map(), hostIP: 'h', startTime: 's', terminal: true }).phase,
    'Succeeded',
  );
});

test('a pod failed in its init containers is not Initialized; a succeeded one is, with reason PodCompleted', () => {
  const p = pod({
    restartPolicy: 'Never',
    initContainers: [
      { name: 'init1', image: 'img:1' },
      { name: 'init2', image: 'img:1' },
    ],
  });
  const failed = status(
    p,
    st([
      c('init1', { type: 'init', state: 'exited', finishedAt: t }),
      c('init2', { type: 'init', state: 'exited', exitCode: 1, finishedAt: t }),
    ]),
  );
  assert.equal(failed.phase, 'Failed');
  const init = failed.conditions.find((x: { type: string }) => x.type === 'Initialized');
  assert.deepEqual(
    [init.status, init.reason, init.message],
    ['False', 'ContainersNotInitialized', 'containers with incomplete status: [init2]'],
  );
  const done = status(
    p,
    st([
      c('init1', { type: 'init', state: 'exited', finishedAt: t }),
      c('init2', { type: 'init', state: 'exited', finishedAt: t }),
      c('a', { state: 'exited', finishedAt: t }),
    ]),
  );
  assert.equal(done.phase, 'Succeeded');
  const ok = done.conditions.find((x: { type: string }) => x.type === 'Initialized');
  assert.deepEqual([ok.status, ok.reason], ['True', 'PodCompleted']);
});

test('RestartAllContainers: stopped containers wait to start over, counted as restarted, under a True condition', () => {
  const rule = { action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } };
  const p = pod({
    restartPolicy: 'Never',
    containers: [
      { name: 'src', image: 'img:1', restartPolicy: 'Never', restartPolicyRules: [rule] } as never,
      { name: 'b', image: 'img:1' },
    ],
  });
  const b = c('b');
  const src = c('src', { state: 'exited', exitCode: 42, finishedAt: (t += 100) });
  // The trigger has exited, b still runs: the reset is under way.
  const s = status(p, st([src, b]));
  const cond = s.conditions.find((x: { type: string }) => x.type === 'AllContainersRestarting');
  assert.deepEqual([cond.status, cond.reason], ['True', 'RestartAllContainersStarted']);
  assert.equal(s.containerStatuses[0].state.waiting.reason, 'RestartingAllContainers');
  assert.equal(s.containerStatuses[0].lastState.terminated.exitCode, 42);
  assert.equal(s.containerStatuses[0].restartCount, 1);
  assert.notEqual(s.phase, 'Failed');
  // b stopped too: nothing of the old run runs any more, and the new run has started src.
  const bDone = { ...b, state: 'exited' as const, exitCode: 137, finishedAt: (t += 100) };
  const src2 = c('src', { restartCount: 1, restartAllAfter: src.id });
  const s2 = status(p, st([src2, bDone, src]));
  assert.equal(s2.conditions.find((x: { type: string }) => x.type === 'AllContainersRestarting').status, 'False');
  assert.ok(s2.containerStatuses[0].state.running);
  assert.equal(s2.containerStatuses[0].lastState.terminated.exitCode, 42);
  assert.equal(s2.containerStatuses[1].state.waiting.reason, 'RestartingAllContainers');
  assert.equal(s2.phase, 'Running');
  // A sidecar's rule: the only regular container, killed for the reset, is not the end of a Never pod.
  const ps = pod({
    restartPolicy: 'Never',
    initContainers: [{ name: 'side', image: 'img:1', restartPolicy: 'Always', restartPolicyRules: [rule] } as never],
    containers: [{ name: 'b', image: 'img:1' }],
  });
  const sideSrc = c('side', { type: 'init', state: 'exited', exitCode: 42, finishedAt: (t += 100) });
  const killed = c('b', { state: 'exited', exitCode: 137, finishedAt: (t += 100) });
  assert.equal(status(ps, st([killed, sideSrc])).phase, 'Running');
  // A pod without such a rule has no such condition.
  assert.equal(
    status(pod(), st([c('a')])).conditions.find((x: { type: string }) => x.type === 'AllContainersRestarting'),
    undefined,
  );
});

test('pod-level status: resources as the pod cgroup was last given, allocatedResources as allocated', () => {
  const p = {
    ...pod(),
    spec: { ...pod().spec!, resources: { requests: { memory: '10Ki' }, limits: { memory: '10Ki' } } },
  } as Pod;
  const viable = { requests: { memory: '90Mi' }, limits: { memory: '90Mi' } };
  const s = computePodStatus({
    pod: p,
    state: st([c('a')]),
    waiting: new Map(),
    hostIP: '192.168.1.10',
    startTime: '2026-12-02T10:00:00Z',
    resize: { allocated: p, error: 'cannot decrease memory limits: …', actuatedPodResources: viable },
  });
  assert.deepEqual(s.resources, viable);
  assert.deepEqual(s.allocatedResources, { memory: '10Ki' });
});
