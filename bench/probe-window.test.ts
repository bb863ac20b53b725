import assert from 'node:assert/strict';
import { test } from 'node:test';

import { probeWindow } from './probe-window.js';

test('period errors come from arrivals inside the window only; CPU is a share of one core', () => {
  const arrivals = new Map([
    ['http /0', [0, 1000, 2010, 3000, 4200]],
    ['tcp 0', [500, 1500, 2500]],
  ]);
  const w = probeWindow(arrivals, 1000, 900, 4000, { cpuSec: 0.31, rssKiB: [1024, 3072, 2048] });
  assert.deepEqual(w, { runs: 3, p50: 0, p99: 10, max: 10, cpuPct: 10, rssMiB: 2 });
});
