import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';

import { memoryLogger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import { parseLogQuery } from './container-logs.js';
import { LogRotator } from './log-rotation.js';
import { fixedNano, type LogOptions, parseLogLine, streamLog, tailOffset, tailRange } from './logs.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-logs-'));

/** Collects streamLog output. */
async function read(
  file: string,
  o: Partial<LogOptions> & { start?: number; end?: number } = {},
  alive = async () => false,
): Promise<string> {
  let out = '';
  await streamLog(
    file,
    o.start ?? 0,
    { follow: false, timestamps: false, ...o },
    { write: (s) => ((out += s), true), closed: false, drain: async () => undefined },
    alive,
    o.end,
  );
  return out;
}

const CRI =
  [
    '2026-12-02T10:00:00.1Z stdout F one',
    '2026-12-02T10:00:01.123456789Z stderr F two',
    '2026-12-02T10:00:02Z stdout P thr',
    '2026-12-02T10:00:02.5Z stdout F ee',
    '2026-12-02T10:00:03+01:00 stdout F four',
    'garbage line',
    '2026-12-02T10:00:04Z stdout F ',
  ].join('\n') + '\n';

test('CRI log lines parse into time, stream, tag and text; others are rejected', () => {
  assert.deepEqual(parseLogLine('2026-12-02T10:00:00Z stdout F hello world'), {
    time: '2026-12-02T10:00:00Z',
    stream: 'stdout',
    partial: false,
    text: 'hello world',
  });
  assert.equal(parseLogLine('2026-12-02T10:00:00Z stderr P par')?.partial, true);
  assert.equal(parseLogLine('2026-12-02T10:00:00Z stdout no-tag text')?.text, 'no-tag text');
  assert.equal(parseLogLine('2026-12-02T10:00:00Z stdin F x'), undefined);
  assert.equal(parseLogLine('nonsense'), undefined);
});

test('timestamps are written with nine fraction digits, keeping the zone', () => {
  assert.equal(fixedNano('2026-12-02T10:00:00.1Z'), '2026-12-02T10:00:00.100000000Z');
  assert.equal(fixedNano('2026-12-02T10:00:00Z'), '2026-12-02T10:00:00.000000000Z');
  assert.equal(fixedNano('2026-12-02T10:00:00.123456789+01:00'), '2026-12-02T10:00:00.123456789+01:00');
});

test('logs: partial lines join, bad lines are skipped, timestamps, limitBytes, since and tail', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  fs.writeFileSync(f, CRI);
  assert.equal(await read(f), 'one\ntwo\nthree\nfour\n\n');
  assert.equal((await read(f, { timestamps: true })).split('\n')[0], '2026-12-02T10:00:00.100000000Z one');
  assert.equal(await read(f, { limitBytes: 6 }), 'one\ntw');
  // 10:00:03+01:00 is 09:00:03Z: before the cut, like 'one'.
  assert.equal(await read(f, { sinceMs: Date.parse('2026-12-02T10:00:01Z') }), 'two\nthree\n\n');
  assert.equal(await read(f, { start: await tailOffset(f, 2) }), 'four\n\n');
  // The partial line belongs to the full line that ends it.
  assert.equal(await read(f, { start: await tailOffset(f, 3) }), 'three\nfour\n\n');
  assert.equal(await read(f, { start: await tailOffset(f, 100) }), 'one\ntwo\nthree\nfour\n\n');
  assert.equal(await read(f, { start: await tailOffset(f, 0) }), '');
  // A line the runtime is still writing (no newline yet) does not count toward the tail.
  fs.appendFileSync(f, '2026-12-02T10:00:05Z stdout F half-writ');
  assert.equal(
    await tailOffset(f, 2),
    fs.statSync(f).size -
      Buffer.byteLength('2026-12-02T10:00:04Z stdout F \n2026-12-02T10:00:05Z stdout F half-writ') -
      Buffer.byteLength('2026-12-02T10:00:03+01:00 stdout F four\ngarbage line\n'),
  );
  fs.rmSync(d, { recursive: true });
});

test('a tail read without follow ends where the tail was counted: lines written meanwhile do not lengthen it', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  fs.writeFileSync(
    f,
    '2026-12-02T10:00:00Z stdout F a\n2026-12-02T10:00:01Z stdout F b\n2026-12-02T10:00:02Z stdout F c\n',
  );
  const range = await tailRange(f, 2);
  fs.appendFileSync(f, '2026-12-02T10:00:03Z stdout F d\n');
  assert.equal(await read(f, { start: range.start, end: range.end }), 'b\nc\n');
  assert.equal(await read(f, { start: range.start }), 'b\nc\nd\n', 'without an end it reads on');
  fs.rmSync(d, { recursive: true });
});

test('tail finds line starts across read chunks', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  const lines = Array.from({ length: 5000 }, (_, i) => `2026-12-02T10:00:00Z stdout F line ${i} ${'x'.repeat(40)}`);
  fs.writeFileSync(f, `${lines.join('\n')}\n`);
  const out = await read(f, { start: await tailOffset(f, 1234) });
  const got = out.trimEnd().split('\n');
  assert.equal(got.length, 1234);
  assert.match(got[0]!, /^line 3766 /);
  fs.rmSync(d, { recursive: true });
});

test('follow streams appended lines, moves to the new file after rotation, and ends when the container stops', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  fs.writeFileSync(f, '2026-12-02T10:00:00Z stdout F a\n');
  let running = true;
  let out = '';
  const done = streamLog(
    f,
    0,
    { follow: true, timestamps: false },
    { write: (s) => ((out += s), true), closed: false, drain: async () => undefined },
    async () => running,
  );
  const until = async (want: string) => {
    for (let i = 0; i < 200 && !out.includes(want); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(out.includes(want), `waiting for ${JSON.stringify(want)}, have ${JSON.stringify(out)}`);
  };
  await until('a\n');
  fs.appendFileSync(f, '2026-12-02T10:00:01Z stdout F b\n');
  await until('b\n');
  fs.renameSync(f, `${f}.20261202-100002`);
  fs.writeFileSync(f, '2026-12-02T10:00:03Z stdout F c\n');
  await until('c\n');
  running = false;
  fs.appendFileSync(f, '2026-12-02T10:00:04Z stdout F d\n');
  await done;
  assert.equal(out, 'a\nb\nc\nd\n');
  fs.rmSync(d, { recursive: true });
});

test('follow asks whether the container runs only once its log has been quiet, not on every write', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  fs.writeFileSync(f, '');
  let asked = 0;
  let running = true;
  let out = '';
  const done = streamLog(
    f,
    0,
    { follow: true, timestamps: false },
    { write: (s) => ((out += s), true), closed: false, drain: async () => undefined },
    async () => (asked++, running),
  );
  // 40 writes 10 ms apart: each wakes the stream, none leaves it quiet for the 1 s wait.
  for (let i = 0; i < 40; i++) {
    fs.appendFileSync(f, `2026-12-02T10:00:00Z stdout F l${i}\n`);
    await new Promise((r) => setTimeout(r, 10));
  }
  for (let i = 0; i < 200 && !out.includes('l39\n'); i++) await new Promise((r) => setTimeout(r, 10));
  const whileWriting = asked;
  running = false;
  await done;
  assert.equal(out.split('\n').length - 1, 40);
  // Before, every wake-up asked (about one per write); a stalled machine may leave a gap or two.
  assert.ok(whileWriting <= 2, `asked ${whileWriting} times during 40 writes`);
  assert.ok(asked > whileWriting, 'asked once the log went quiet, and ended');
  fs.rmSync(d, { recursive: true });
});

test('follow does not skip a file rotated in between when it falls behind by two rotations; nor re-reads older ones', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  fs.writeFileSync(`${f}.20261202-095959`, '2026-12-02T09:59:59Z stdout F old\n');
  fs.writeFileSync(f, '2026-12-02T10:00:00Z stdout F a\n');
  let running = true;
  let out = '';
  let hold: (() => void) | undefined;
  let held = false;
  // The sink stalls after "a" until both rotations have happened, as a slow reader would.
  const done = streamLog(
    f,
    0,
    { follow: true, timestamps: false },
    {
      write: (s) => ((out += s), !out.includes('a') || held),
      closed: false,
      drain: () => new Promise<void>((r) => (hold = r)),
    },
    async () => running,
  );
  for (let i = 0; i < 200 && !hold; i++) await new Promise((r) => setTimeout(r, 10));
  fs.renameSync(f, `${f}.20261202-100001`);
  fs.writeFileSync(f, '2026-12-02T10:00:01Z stdout F b\n');
  fs.renameSync(f, `${f}.20261202-100002`);
  fs.writeFileSync(f, '2026-12-02T10:00:02Z stdout F c\n');
  held = true;
  hold!();
  for (let i = 0; i < 200 && !out.includes('c\n'); i++) await new Promise((r) => setTimeout(r, 25));
  running = false;
  await done;
  assert.equal(out, 'a\nb\nc\n');
  fs.rmSync(d, { recursive: true });
});

test('PodLogOptions from the query: validation errors say which field', () => {
  const now = Date.parse('2026-12-02T10:00:00Z');
  assert.deepEqual(
    parseLogQuery(new URLSearchParams('follow=true&tailLines=5&timestamps=1&limitBytes=10&sinceSeconds=60'), now),
    { follow: true, previous: false, timestamps: true, tailLines: 5, limitBytes: 10, sinceMs: now - 60_000 },
  );
  assert.equal(parseLogQuery(new URLSearchParams('tail=all')).tailLines, undefined);
  assert.equal(parseLogQuery(new URLSearchParams('previous=true')).previous, true);
  assert.throws(
    () => parseLogQuery(new URLSearchParams('tailLines=-1')),
    /tailLines: Invalid value: -1: must be greater than or equal to 0/,
  );
  assert.throws(() => parseLogQuery(new URLSearchParams('limitBytes=0')), /limitBytes: Invalid value: 0/);
  assert.throws(() => parseLogQuery(new URLSearchParams('follow=maybe')), /follow: Invalid value: "maybe"/);
  assert.throws(
    () => parseLogQuery(new URLSearchParams('sinceSeconds=5&sinceTime=2026-12-02T10:00:00Z')),
    /at most one of `sinceTime` or `sinceSeconds`/,
  );
  assert.throws(() => parseLogQuery(new URLSearchParams('sinceTime=yesterday')), /sinceTime: Invalid value/);
  assert.throws(() => parseLogQuery(new URLSearchParams('sinceTime=-1')), /sinceTime: Invalid value: "-1"/);
});

test('rotation renames an oversized log, reopens it, gzips older files and keeps maxFiles', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  const reopened: string[] = [];
  const cri = { reopenContainerLog: async (id: string) => void reopened.push(id) } as unknown as CriClient;
  const r = new LogRotator(cri, memoryLogger(), { maxBytes: 100, maxFiles: 4, intervalMs: 1000 });
  fs.writeFileSync(f, 'x'.repeat(50));
  assert.equal(await r.rotate('c1', f), false, 'under the limit');
  const at = (s: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, s));
  for (let i = 0; i < 4; i++) {
    fs.writeFileSync(f, String(i).repeat(200));
    assert.equal(await r.rotate('c1', f, at(i)), true);
  }
  assert.deepEqual(reopened, ['c1', 'c1', 'c1', 'c1']);
  assert.equal(fs.existsSync(f), false, 'the runtime makes the new file on reopen');
  // maxFiles 4: the current log plus three rotated ones. Each pass gzips the rotated files it finds but the
  // newest, before it rotates, so the two newest stay plain.
  assert.deepEqual(fs.readdirSync(d).sort(), [
    '0.log.20261202-100001.gz',
    '0.log.20261202-100002',
    '0.log.20261202-100003',
  ]);
  assert.equal(zlib.gunzipSync(fs.readFileSync(path.join(d, '0.log.20261202-100001.gz'))).toString(), '1'.repeat(200));
  assert.equal(fs.readFileSync(path.join(d, '0.log.20261202-100003'), 'utf8'), '3'.repeat(200));
  fs.rmSync(d, { recursive: true });
});

test("a pass asks the runtime for each running container's log path once, and forgets containers no longer running", async () => {
  const d = tmp();
  const logs = { c1: path.join(d, 'c1.log'), c2: path.join(d, 'c2.log') };
  fs.writeFileSync(logs.c1, 'a'.repeat(300));
  fs.writeFileSync(logs.c2, 'b');
  let running = ['c1', 'c2'];
  const statusCalls: string[] = [];
  const cri = {
    listContainers: async () => running.map((id) => ({ id })),
    containerStatus: async (id: 'c1' | 'c2') => (statusCalls.push(id), { log_path: logs[id] }),
    reopenContainerLog: async () => undefined,
  } as unknown as CriClient;
  const r = new LogRotator(cri, memoryLogger(), { maxBytes: 100, maxFiles: 4, intervalMs: 1000 });
  assert.deepEqual(await r.rotateAll(), [logs.c1]);
  fs.writeFileSync(logs.c2, 'b'.repeat(300));
  assert.deepEqual(await r.rotateAll(), [logs.c2], 'the second pass still rotates, from the remembered path');
  assert.deepEqual(statusCalls.sort(), ['c1', 'c2']);
  running = ['c2'];
  await r.rotateAll();
  running = ['c1', 'c2'];
  await r.rotateAll();
  assert.deepEqual(
    statusCalls.sort(),
    ['c1', 'c1', 'c2'],
    'a container seen again after it stopped running is asked again',
  );
  fs.rmSync(d, { recursive: true });
});

test('a failed reopen puts the log back', async () => {
  const d = tmp();
  const f = path.join(d, '0.log');
  const cri = { reopenContainerLog: async () => Promise.reject(new Error('gone')) } as unknown as CriClient;
  fs.writeFileSync(f, 'y'.repeat(300));
  await assert.rejects(
    new LogRotator(cri, memoryLogger(), { maxBytes: 100, maxFiles: 5, intervalMs: 1000 }).rotate('c1', f),
    /gone/,
  );
  assert.deepEqual(fs.readdirSync(d), ['0.log']);
  fs.rmSync(d, { recursive: true });
});
