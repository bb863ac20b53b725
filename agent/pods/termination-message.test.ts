import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { lastLogLines } from './termination-message.js';

const logFile = (lines: string[]): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-termmsg-'));
  const file = path.join(dir, '0.log');
  fs.writeFileSync(file, lines.map((l) => `2026-12-07T05:31:06.600000000Z ${l}\n`).join(''));
  return file;
};

test('lastLogLines: output left without a newline (echo -n) is the last line, as written', async () => {
  assert.equal(await lastLogLines(logFile(['stdout P DONE'])), 'DONE');
  assert.equal(await lastLogLines(logFile(['stdout F one', 'stderr P tw', 'stderr P o'])), 'one\ntwo');
});

test('lastLogLines: whole lines keep their newlines; only the last ones, and at most the byte limit', async () => {
  assert.equal(await lastLogLines(logFile(['stdout F a', 'stdout P b', 'stdout F c'])), 'a\nbc\n');
  assert.equal(await lastLogLines(logFile(['stdout F 1', 'stdout F 2', 'stdout F 3']), 2), '2\n3\n');
  assert.equal(await lastLogLines(logFile(['stdout F 12345', 'stdout F 67890']), 80, 8), '5\n67890\n');
});
