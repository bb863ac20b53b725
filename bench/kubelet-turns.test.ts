import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type KubeletTurn, ratioLine, ratios, turnRow } from './kubelet-turns.js';

const turn = (kubelet: 'tskube' | 'upstream', lat: number[], cpuSec: number, rss: number): KubeletTurn => ({
  kubelet,
  n: lat.length,
  lat,
  cpuSec,
  steadyPct: 1.5,
  rssIdleKiB: rss / 2,
  rssKiB: rss,
});

test('ratios are tskube over upstream, CPU per pod from each N', () => {
  const r = ratios(turn('tskube', [100, 200], 0.2, 40_960), turn('upstream', [200, 800], 0.8, 81_920));
  assert.deepEqual(r, { n: 2, p50: 0.5, p99: 0.25, cpuPerPod: 0.25, rssIdle: 0.5, rss: 0.5 });
  assert.equal(
    ratioLine({ ...r, rss: 1.25 }),
    'N=2: p50 0.50×, p99 0.25× (met), CPU per pod 0.25× (met), RSS idle 0.50× (met), RSS at N 1.25× (goal ≤ 1×)',
  );
});

test('a turn prints its percentiles, CPU per pod and RSS in MiB', () => {
  assert.equal(
    turnRow(turn('upstream', [100, 300], 0.5, 40_960)),
    '   2 | upstream |   100 ms |   300 ms |   0.50 s |  250 ms |      1.5 % | 20.0 MiB | 40.0 MiB',
  );
});
