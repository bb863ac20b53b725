import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { SMALL_YOUNG_GENERATION, youngGenerationFlag } from './young-generation.js';

test('the young generation is kept small unless the user sized it', () => {
  assert.equal(youngGenerationFlag('', []), SMALL_YOUNG_GENERATION);
  assert.equal(youngGenerationFlag('--max-old-space-size=200', ['--enable-source-maps']), SMALL_YOUNG_GENERATION);
  assert.equal(youngGenerationFlag('--max-semi-space-size=8', []), null);
  assert.equal(youngGenerationFlag('', ['--min-semi-space-size=2']), null);
  assert.equal(youngGenerationFlag('--trace-gc --semi_space_growth_factor=4', []), null);
});

test('the flag set at run time stops the young generation growing (what a command-line flag could not)', () => {
  // Short-lived objects with survivors: V8 would grow the semispaces towards their maximum.
  const churn = `const v8 = require('node:v8');
    if (process.argv[1] === 'small') v8.setFlagsFromString(${JSON.stringify(SMALL_YOUNG_GENERATION)});
    let keep = [];
    for (let i = 0; i < 2e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 20000) keep = []; }
    process.stdout.write(String(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size));`;
  const newSpace = (mode: string): number => Number(spawnSync(process.execPath, ['-e', churn, mode], { encoding: 'utf8' }).stdout);
  const dflt = newSpace('default');
  const small = newSpace('small');
  assert.ok(small > 0 && small <= 4 << 20, `new space with the flag: ${small} bytes`);
  assert.ok(dflt > small, `new space by default (${dflt}) larger than with the flag (${small})`);
});
