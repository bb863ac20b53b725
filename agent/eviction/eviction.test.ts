import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { createLogger } from '../../kube/log.js';
import { CgroupTree } from '../cm/cgroupfs.js';
import { parseThreshold } from '../cm/node-allocatable.js';
import { nodeConditions } from '../node/node-object.js';
import { admitUnderPressure, isCriticalPod } from './admission.js';
import {
  evictionMessage,
  type EvictionThreshold,
  firstObserved,
  type PodUsage,
  pressureConditions,
  rankPods,
  resourceToReclaim,
  thresholdsMet,
  thresholdsToActOn,
} from './decide.js';
import { EvictionManager } from './eviction-manager.js';
import { diskUsage, workingSet } from './observe.js';

const Mi = 2 ** 20;
const hard = (signal: EvictionThreshold['signal'], v: string): EvictionThreshold => ({
  signal,
  value: parseThreshold(v),
  gracePeriodMs: 0,
});

test('thresholds: quantities and percentages, hard at once, soft after their grace period; conditions held for the transition period', () => {
  const mem = hard('memory.available', '100Mi');
  const disk = hard('nodefs.available', '10%');
  const soft: EvictionThreshold = { signal: 'memory.available', value: parseThreshold('500Mi'), gracePeriodMs: 60_000 };
  const obs = {
    'memory.available': { available: 300 * Mi, capacity: 4096 * Mi },
    'nodefs.available': { available: 5 * 1024 * Mi, capacity: 100 * 1024 * Mi },
  };
  assert.deepEqual(thresholdsMet([mem, disk, soft], obs), [disk, soft]);
  let first = firstObserved([disk, soft], new Map(), 1000);
  assert.deepEqual(thresholdsToActOn(first, 1000), [disk], 'the soft one waits for its grace period');
  first = firstObserved([disk, soft], first, 61_000);
  assert.deepEqual(thresholdsToActOn(first, 61_000), [disk, soft]);
  assert.deepEqual(
    thresholdsToActOn(firstObserved([soft], firstObserved([], first, 62_000), 63_000), 63_000),
    [],
    'met again: the grace period starts over',
  );
  let pc = pressureConditions([disk], new Map(), 0, 30_000);
  assert.deepEqual([...pc.conditions], ['DiskPressure']);
  pc = pressureConditions([], pc.lastSeen, 20_000, 30_000);
  assert.deepEqual([...pc.conditions], ['DiskPressure'], 'held within the transition period');
  pc = pressureConditions([], pc.lastSeen, 31_000, 30_000);
  assert.deepEqual([...pc.conditions], []);
  assert.deepEqual(resourceToReclaim([disk, mem]), { threshold: mem, resource: 'memory' }, 'memory before disk');
  assert.equal(resourceToReclaim([]), undefined);
});

test('ranking: over requests first, then lower priority, then usage over requests; critical pods never; the Evicted message', () => {
  const pod = (uid: string, priority: number, usage: number, request: number, critical = false): PodUsage => ({
    uid,
    priority,
    containers: [{ name: 'c', usage, request }],
    critical,
  });
  const ranked = rankPods(
    [
      pod('guaranteed', 0, 90 * Mi, 100 * Mi),
      pod('besteffort-small', 0, 10 * Mi, 0),
      pod('besteffort-big', 0, 300 * Mi, 0),
      pod('important', 1000, 500 * Mi, 0),
      pod('static', 0, 900 * Mi, 0, true),
    ],
    'memory',
  );
  assert.deepEqual(
    ranked.map((p) => p.uid),
    ['besteffort-big', 'besteffort-small', 'important', 'guaranteed'],
  );
  assert.deepEqual(
    rankPods([pod('a', 10, 5, 0), pod('b', 0, 1, 0), pod('c', 0, 9, 0)], 'pids').map((p) => p.uid),
    ['c', 'b', 'a'],
  );
  const msg = evictionMessage(
    'memory',
    hard('memory.available', '100Mi'),
    { available: 50 * Mi, capacity: 4096 * Mi },
    pod('x', 0, 300 * Mi, 0),
  );
  assert.equal(
    msg,
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container c was using 300Mi, request is 0, has larger consumption of memory. ',
  );
  assert.equal(
    evictionMessage(
      'ephemeral-storage',
      hard('nodefs.available', '10%'),
      { available: 1024 * Mi, capacity: 20 * 1024 * Mi },
      { uid: 'y', priority: 0, containers: [{ name: 'w', usage: 0, request: 0 }], podUsage: 40 * Mi },
    ),
    'The node was low on resource: ephemeral-storage. Threshold quantity: 2Gi, available: 1Gi. ',
  );
});

test('admission under pressure, critical pods and the pressure conditions', () => {
  const p = (spec: Record<string, unknown>): Pod => ({
    metadata: { name: 'p', uid: 'u' },
    spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
  });
  const be = p({});
  const burstable = p({ containers: [{ name: 'c', image: 'i', resources: { requests: { memory: '10Mi' } } }] });
  assert.equal(admitUnderPressure(be, new Set(), false), undefined);
  assert.deepEqual(admitUnderPressure(be, new Set(['MemoryPressure']), false), {
    reason: 'Evicted',
    message: 'The node had condition: [MemoryPressure]. ',
  });
  assert.equal(admitUnderPressure(burstable, new Set(['MemoryPressure']), false), undefined);
  assert.equal(
    admitUnderPressure(
      p({ tolerations: [{ key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' }] }),
      new Set(['MemoryPressure']),
      false,
    ),
    undefined,
  );
  assert.deepEqual(
    admitUnderPressure(burstable, new Set(['DiskPressure', 'MemoryPressure']), false)?.message,
    'The node had condition: [MemoryPressure, DiskPressure]. ',
  );
  assert.equal(admitUnderPressure(be, new Set(['DiskPressure']), true), undefined);
  assert.ok(isCriticalPod(be, true));
  assert.ok(isCriticalPod(p({ priorityClassName: 'system-node-critical' }), false));
  assert.ok(!isCriticalPod(p({ priority: 1000 }), false));
  const conds = nodeConditions({
    nodeName: 'n',
    nodeIP: '',
    runtimeName: 'x',
    runtimeVersion: '1',
    runtimeReady: true,
    pressure: new Set(['DiskPressure']),
  });
  assert.deepEqual(
    conds.map((c) => [c.type, c.status, c.reason]),
    [
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'],
      ['DiskPressure', 'True', 'KubeletHasDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'],
      ['Ready', 'True', 'KubeletReady'],
    ],
  );
});

test('the eviction manager: reclaims disk at node level first, then evicts the top-ranked pod with grace 1; a memory working set read from cgroups', async () => {
  const evicted: { uid: string; message: string; grace: number }[] = [];
  const pods = ['a', 'b'].map((uid, i) => ({
    pod: {
      metadata: { name: uid, namespace: 'default', uid },
      spec: { containers: [{ name: 'c', image: 'i' }], priority: i },
    } as Pod,
    critical: false,
    evict: (message: string, grace: number) => evicted.push({ uid, message, grace }),
    cleanedUp: () => evicted.some((e) => e.uid === uid),
  }));
  let available = 10 * Mi;
  let reclaims = 0;
  const events: string[] = [];
  const em = new EvictionManager(
    {
      thresholds: [hard('memory.available', '100Mi'), hard('nodefs.available', '20Mi')],
      transitionPeriodMs: 1000,
      maxPodGracePeriodSec: 0,
      rootDir: '/nonexistent',
      podLogsDir: '/nonexistent',
    },
    {
      observe: async () => ({
        'nodefs.available': { available, capacity: 1000 * Mi },
        'memory.available': { available: 500 * Mi, capacity: 1000 * Mi },
      }),
      cri: { listContainerStats: async () => [] } as never,
      activePods: () => pods,
      reclaimDisk: async () => {
        reclaims++;
        if (reclaims === 1) available = 30 * Mi; // the first reclaim frees enough
      },
      events: {
        event: (_r: unknown, _t: string, reason: string, msg: string) => void events.push(`${reason}: ${msg}`),
      } as never,
      nodeName: 'n',
      log: createLogger('test', { sink: () => undefined }),
    },
  );
  assert.equal(await em.synchronize(0), undefined, 'node-level reclaim was enough');
  assert.deepEqual([...em.conditions()], ['DiskPressure']);
  assert.deepEqual(events, ['EvictionThresholdMet: Attempting to reclaim ephemeral-storage']);
  available = 5 * Mi;
  assert.equal(await em.synchronize(1), 'a', 'the lower-priority pod goes');
  assert.equal(evicted[0]!.grace, 1);
  assert.match(
    evicted[0]!.message,
    /^The node was low on resource: ephemeral-storage\. Threshold quantity: 20Mi, available: 5Mi\. $/,
  );
  available = 500 * Mi;
  await em.synchronize(500);
  assert.deepEqual([...em.conditions()], ['DiskPressure'], 'held for the transition period');
  await em.synchronize(2000);
  assert.deepEqual([...em.conditions()], []);
  // A fake cgroup v1 memory hierarchy: usage less inactive file pages.
  const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-'));
  fs.mkdirSync(path.join(mount, 'memory', 'kubepods'), { recursive: true });
  fs.writeFileSync(path.join(mount, 'memory', 'kubepods', 'memory.usage_in_bytes'), String(300 * Mi));
  fs.writeFileSync(
    path.join(mount, 'memory', 'kubepods', 'memory.stat'),
    `cache 10\ntotal_inactive_file ${100 * Mi}\n`,
  );
  assert.equal(await workingSet(new CgroupTree(mount), '/kubepods'), 200 * Mi);
  fs.writeFileSync(path.join(mount, 'f'), Buffer.alloc(64 * 1024, 1));
  assert.ok((await diskUsage(mount)) >= 64 * 1024);
});

test('image GC: records, bytes to free between the thresholds, least recently used first, never in use, pinned, sandbox or too young; maximum age', async () => {
  const { bytesToFree, detectImages, selectImages, ImageGcManager } = await import('../images/image-gc.js');
  const policy = { highThresholdPercent: 85, lowThresholdPercent: 80, minAgeMs: 120_000, maxAgeMs: 0 };
  assert.equal(bytesToFree(policy, { capacity: 100, available: 20 }), 0, 'at 80 %: below the high threshold');
  assert.equal(bytesToFree(policy, { capacity: 1000, available: 100 }), 100, 'at 90 %: down to 80 %');
  let recs = detectImages(
    new Map(),
    [
      { id: 'old', size: 50 },
      { id: 'used', size: 70 },
      { id: 'new', size: 10 },
      { id: 'older', size: 30 },
    ],
    new Set(['used']),
    0,
  );
  recs = detectImages(
    recs,
    [
      { id: 'old', size: 50 },
      { id: 'used', size: 70 },
      { id: 'older', size: 30 },
      { id: 'fresh', size: 5 },
    ],
    new Set(['used']),
    200_000,
  );
  assert.equal(recs.has('new'), false, 'gone from the runtime: forgotten');
  assert.equal(recs.get('used')!.lastUsed, 200_000);
  const eligible = (id: string) => id !== 'used';
  assert.deepEqual(
    selectImages(recs, eligible, policy, 60, 200_000),
    { remove: ['old', 'older'], freed: 80 },
    'fresh is too young; in use never',
  );
  assert.deepEqual(selectImages(recs, eligible, policy, 40, 200_000).remove, ['old']);
  assert.deepEqual(
    selectImages(recs, eligible, { ...policy, maxAgeMs: 100_000 }, 0, 200_000).remove,
    ['old', 'older'],
    'unused longer than the maximum age: removed whatever the usage',
  );
  const removed: string[] = [];
  const events: string[] = [];
  const gc = new ImageGcManager(policy, {
    cri: {
      listImages: async () => [
        { id: 'sha256:pause', repo_tags: ['reg/pause:1'], repo_digests: [], size: '10', pinned: false },
        { id: 'sha256:app', repo_tags: ['reg/app:1'], repo_digests: [], size: '20', pinned: false },
        { id: 'sha256:victim', repo_tags: ['reg/victim:1'], repo_digests: [], size: '30', pinned: false },
        { id: 'sha256:pinned', repo_tags: ['reg/pinned:1'], repo_digests: [], size: '40', pinned: true },
      ],
      listContainers: async () => [{ image: { image: 'reg/app:1' }, image_ref: '' }],
      removeImage: async (id: string) => void removed.push(id),
    } as never,
    imageFs: () => ({ capacity: 1000, available: 10 }),
    sandboxImage: async () => 'reg/pause:1',
    events: {
      event: (_r: unknown, _t: string, reason: string, msg: string) => void events.push(`${reason}: ${msg}`),
    } as never,
    nodeName: 'n',
    log: createLogger('test', { sink: () => undefined }),
  });
  assert.deepEqual(await gc.garbageCollect(0), [], 'everything is younger than the minimum age');
  assert.deepEqual(await gc.garbageCollect(300_000), ['sha256:victim']);
  assert.deepEqual(removed, ['sha256:victim']);
  assert.match(
    events.at(-1)!,
    /^FreeDiskSpaceFailed: Failed to garbage collect required amount of images\. Attempted to free 190 bytes, but only found 30 bytes eligible to free\.$/,
  );
});

test('graceful node shutdown: regular pods first with what critical pods do not need, then critical ones; the node NotReady; unavailable without logind', async () => {
  const { shutdownPlan, NodeShutdownManager, SHUTDOWN_NOT_ADMITTED } = await import('../shutdown/node-shutdown.js');
  const pods = [
    { n: 'a', critical: false },
    { n: 'dns', critical: true },
    { n: 'b', critical: false },
  ];
  assert.deepEqual(
    shutdownPlan(pods, 30, 10).map((g) => [g.pods.map((p) => p.n), g.graceSec]),
    [
      [['a', 'b'], 20],
      [['dns'], 10],
    ],
  );
  assert.deepEqual(
    shutdownPlan([{ n: 'a', critical: false }], 30, 0).map((g) => g.graceSec),
    [30],
  );
  const order: string[] = [];
  const m = new NodeShutdownManager(2, 1, {
    pods: () =>
      pods.map((p) => ({
        pod: { metadata: { name: p.n } },
        critical: p.critical,
        terminate: async (g: number) => void order.push(`${p.n}:${g}`),
      })),
    log: createLogger('test', { sink: () => undefined }),
  });
  await m.shutdown();
  assert.deepEqual(order, ['a:1', 'b:1', 'dns:1']);
  assert.equal(m.shuttingDown, true);
  assert.equal(SHUTDOWN_NOT_ADMITTED.reason, 'NodeShutdown');
  assert.deepEqual(
    nodeConditions({
      nodeName: 'n',
      nodeIP: '',
      runtimeName: 'x',
      runtimeVersion: '1',
      runtimeReady: true,
      shuttingDown: true,
    }).find((c) => c.type === 'Ready'),
    { type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'node is shutting down' },
  );
  // This machine (and CI) has no systemd-logind: the kubelet says so and goes on.
  if (!fs.existsSync('/run/systemd/system'))
    assert.match(NodeShutdownManager.unavailable() ?? '', /systemd is not the init system/);
});
