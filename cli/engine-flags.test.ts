import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { BASELINE_TOP_TIER, engineFlags, SMALL_YOUNG_GENERATION } from './engine-flags.js';

const small = { smallYoungGeneration: true } as const;
const both = { smallYoungGeneration: true, baselineTopTier: true } as const;

test('the young generation is kept small unless the user sized it', () => {
  assert.deepEqual(engineFlags(small, '', []), [SMALL_YOUNG_GENERATION]);
  assert.deepEqual(engineFlags(small, '--max-old-space-size=200', ['--enable-source-maps']), [SMALL_YOUNG_GENERATION]);
  assert.deepEqual(engineFlags(small, '--max-semi-space-size=8', []), []);
  assert.deepEqual(engineFlags(small, '', ['--min-semi-space-size=2']), []);
  assert.deepEqual(engineFlags(small, '--trace-gc --semi_space_growth_factor=4', []), []);
  assert.deepEqual(engineFlags({}, '', []), []);
});

test('the baseline compiler is the top tier unless the user chose the compilers', () => {
  assert.deepEqual(engineFlags(both, '', []), [SMALL_YOUNG_GENERATION, BASELINE_TOP_TIER]);
  assert.deepEqual(engineFlags(both, '--max-semi-space-size=8', []), [BASELINE_TOP_TIER]);
  for (const user of [
    '--max-opt=3',
    '--max_opt=0',
    '--turbofan',
    '--no-opt',
    '--maglev',
    '--no-sparkplug',
    '--lite-mode',
    '--jitless',
  ]) {
    assert.deepEqual(engineFlags(both, '', [user]), [SMALL_YOUNG_GENERATION], user);
    assert.deepEqual(engineFlags(both, user, []), [SMALL_YOUNG_GENERATION], user);
  }
  // Flags that only look alike decide nothing.
  assert.deepEqual(engineFlags(both, '--optimize-for-size --opt-foo', []), [SMALL_YOUNG_GENERATION, BASELINE_TOP_TIER]);
});

test('set at run time, the baseline top tier keeps a hot function out of TurboFan', () => {
  const hot = `const v8 = require('node:v8');
    if (process.argv[1] === 'baseline') v8.setFlagsFromString(${JSON.stringify(BASELINE_TOP_TIER)});
    function f(x) { let s = 0; for (let i = 0; i < 100; i++) s += x * i; return s; }
    let s = 0; for (let i = 0; i < 2e6; i++) s += f(i);
    // Bit 4 (16) of the status: optimized by TurboFan.
    process.stdout.write(String((%GetOptimizationStatus(f) & 16) !== 0));`;
  const optimized = (mode: string): string =>
    spawnSync(process.execPath, ['--allow-natives-syntax', '-e', hot, mode], { encoding: 'utf8' }).stdout;
  assert.equal(optimized('default'), 'true');
  assert.equal(optimized('baseline'), 'false');
});

test('the flag set at run time stops the young generation growing (what a command-line flag could not)', () => {
  // Short-lived objects with survivors: V8 would grow the semispaces towards their maximum.
  const churn = `const v8 = require('node:v8');
    if (process.argv[1] === 'small') v8.setFlagsFromString(${JSON.stringify(SMALL_YOUNG_GENERATION)});
    let keep = [];
    for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
    process.stdout.write(String(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
  const newSpace = (mode: string): number =>
    Number(spawnSync(process.execPath, ['-e', churn, mode], { encoding: 'utf8' }).stdout);
  const dflt = newSpace('default');
  const small = newSpace('small');
  assert.ok(small > 0 && small <= 4 << 20, `new space with the flag: ${small} bytes`);
  assert.ok(dflt > small, `new space by default (${dflt}) larger than with the flag (${small})`);
});
