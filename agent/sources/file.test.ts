import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { FileSource } from './file.js';
import { memoryLogger } from '../../kube/log.js';
import { ANN_CONFIG_SEEN } from './manifest.js';

const podYaml = (name: string, cmd = 'sleep 1'): string => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n  - {name: c, image: "i:1", command: ["sh", "-c", "${cmd}"]}\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withSource(fn: (dir: string, sets: Pod[][], src: FileSource, log: ReturnType<typeof memoryLogger>) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fs-'));
  const sets: Pod[][] = [];
  const log = memoryLogger();
  const src = new FileSource({ path: dir, nodeName: 'n1', log, onSet: (p) => sets.push(p), checkFrequencyMs: 60_000, debounceMs: 50 });
  try {
    await fn(dir, sets, src, log);
  } finally {
    src.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('dotfiles and subdirectories are ignored; files are read in sorted order', () =>
  withSource(async (dir, sets, src) => {
    fs.writeFileSync(path.join(dir, 'b.yaml'), podYaml('b'));
    fs.writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'i:1' }] } }));
    fs.writeFileSync(path.join(dir, '.hidden.yaml'), podYaml('hidden'));
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'deep.yaml'), podYaml('deep'));
    await src.start();
    assert.equal(sets.length, 1);
    assert.deepEqual(sets[0]!.map((p) => p.metadata!.name), ['a-n1', 'b-n1']);
  }));

test('an atomic replace (temp file + rename) is exactly one update', () =>
  withSource(async (dir, sets, src) => {
    fs.writeFileSync(path.join(dir, 'w.yaml'), podYaml('w', 'v1'));
    await src.start();
    assert.equal(sets.length, 1);
    const tmp = path.join(dir, '.w.yaml.swp');
    fs.writeFileSync(tmp, podYaml('w', 'v2'));
    fs.renameSync(tmp, path.join(dir, 'w.yaml'));
    await sleep(400);
    assert.equal(sets.length, 2, 'one SET for the replace');
    assert.deepEqual(sets[1]!.map((p) => p.spec!.containers[0]!.command![2]), ['v2']);
    assert.notEqual(sets[1]![0]!.metadata!.uid, sets[0]![0]!.metadata!.uid);
    // A rescan with nothing changed emits nothing.
    await src.queueScan();
    assert.equal(sets.length, 2);
  }));

test('deleting a file removes its pod; config.seen is kept while the pod lives', () =>
  withSource(async (dir, sets, src) => {
    fs.writeFileSync(path.join(dir, 'a.yaml'), podYaml('a'));
    await src.start();
    const seen = sets[0]![0]!.metadata!.annotations![ANN_CONFIG_SEEN];
    assert.match(seen!, /^\d{4}-\d\d-\d\dT/);
    fs.writeFileSync(path.join(dir, 'b.yaml'), podYaml('b'));
    await src.queueScan();
    assert.equal(sets[1]!.find((p) => p.metadata!.name === 'a-n1')!.metadata!.annotations![ANN_CONFIG_SEEN], seen);
    fs.rmSync(path.join(dir, 'a.yaml'));
    await src.queueScan();
    assert.deepEqual(sets.at(-1)!.map((p) => p.metadata!.name), ['b-n1']);
  }));

test('a broken file is logged once, other pods stay, and fixing it adds the pod', () =>
  withSource(async (dir, sets, src, log) => {
    fs.writeFileSync(path.join(dir, 'good.yaml'), podYaml('good'));
    fs.writeFileSync(path.join(dir, 'bad.yaml'), 'kind: Pod\nmetadata: {name: bad}\nspec: {}\n');
    await src.start();
    await src.queueScan();
    await src.queueScan();
    const errs = log.lines.filter((l) => l.includes('bad.yaml'));
    assert.equal(errs.length, 1);
    assert.match(errs[0]!, /ERROR .*static pod manifest rejected: .*bad\.yaml: Pod "bad": spec\.containers: Required value/);
    assert.deepEqual(sets.at(-1)!.map((p) => p.metadata!.name), ['good-n1']);
    fs.writeFileSync(path.join(dir, 'bad.yaml'), podYaml('bad'));
    await src.queueScan();
    assert.deepEqual(sets.at(-1)!.map((p) => p.metadata!.name).sort(), ['bad-n1', 'good-n1']);
  }));

test('the same pod name in two files: the first file wins, the second is reported', () =>
  withSource(async (dir, sets, src, log) => {
    fs.writeFileSync(path.join(dir, 'a.yaml'), podYaml('same', 'one'));
    fs.writeFileSync(path.join(dir, 'b.yaml'), podYaml('same', 'two'));
    await src.start();
    assert.deepEqual(sets[0]!.map((p) => p.spec!.containers[0]!.command![2]), ['one']);
    assert.ok(log.lines.some((l) => /b\.yaml: Pod "default\/same-n1": metadata\.name: Duplicate value/.test(l)));
  }));

test('a missing directory is an empty set, and pods appear once it exists', async () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fs-'));
  const dir = path.join(base, 'later');
  const sets: Pod[][] = [];
  const src = new FileSource({ path: dir, nodeName: 'n1', log: memoryLogger(), onSet: (p) => sets.push(p), checkFrequencyMs: 60_000 });
  try {
    await src.start();
    assert.deepEqual(sets, [[]] as Pod[][]);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'x.yaml'), podYaml('x'));
    await src.queueScan();
    assert.deepEqual(sets.at(-1)!.map((p) => p.metadata!.name), ['x-n1']);
  } finally {
    src.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
});
