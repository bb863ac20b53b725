import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { memoryLogger } from '../../kube/log.js';
import { ensureManifestDir, FileSource } from './file.js';
import { ANN_CONFIG_SEEN } from './manifest.js';

const podYaml = (name: string, cmd = 'sleep 1'): string =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n  - {name: c, image: "i:1", command: ["sh", "-c", "${cmd}"]}\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withSource(
  fn: (dir: string, sets: Pod[][], src: FileSource, log: ReturnType<typeof memoryLogger>) => Promise<void>,
): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fs-'));
  const sets: Pod[][] = [];
  const log = memoryLogger();
  const src = new FileSource({
    path: dir,
    nodeName: 'n1',
    log,
    onSet: (p) => sets.push(p),
    checkFrequencyMs: 60_000,
    debounceMs: 50,
  });
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
    fs.writeFileSync(
      path.join(dir, 'a.json'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'a' },
        spec: { containers: [{ name: 'c', image: 'i:1' }] },
      }),
    );
    fs.writeFileSync(path.join(dir, '.hidden.yaml'), podYaml('hidden'));
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.writeFileSync(path.join(dir, 'sub', 'deep.yaml'), podYaml('deep'));
    await src.start();
    assert.equal(sets.length, 1);
    assert.deepEqual(
      sets[0]!.map((p) => p.metadata!.name),
      ['a-n1', 'b-n1'],
    );
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
    assert.deepEqual(
      sets[1]!.map((p) => p.spec!.containers[0]!.command![2]),
      ['v2'],
    );
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
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['b-n1'],
    );
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
    assert.match(
      errs[0]!,
      /ERROR .*static pod manifest rejected: .*bad\.yaml: Pod "bad": spec\.containers: Required value/,
    );
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['good-n1'],
    );
    fs.writeFileSync(path.join(dir, 'bad.yaml'), podYaml('bad'));
    await src.queueScan();
    assert.deepEqual(
      sets
        .at(-1)!
        .map((p) => p.metadata!.name)
        .sort(),
      ['bad-n1', 'good-n1'],
    );
  }));

test('the same pod name in two files: the first file wins, the second is reported', () =>
  withSource(async (dir, sets, src, log) => {
    fs.writeFileSync(path.join(dir, 'a.yaml'), podYaml('same', 'one'));
    fs.writeFileSync(path.join(dir, 'b.yaml'), podYaml('same', 'two'));
    await src.start();
    assert.deepEqual(
      sets[0]!.map((p) => p.spec!.containers[0]!.command![2]),
      ['one'],
    );
    assert.ok(log.lines.some((l) => /b\.yaml: Pod "default\/same-n1": metadata\.name: Duplicate value/.test(l)));
  }));

test('a missing directory is an empty set, and pods appear once it exists', async () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fs-'));
  const dir = path.join(base, 'later');
  const sets: Pod[][] = [];
  const src = new FileSource({
    path: dir,
    nodeName: 'n1',
    log: memoryLogger(),
    onSet: (p) => sets.push(p),
    checkFrequencyMs: 60_000,
  });
  try {
    await src.start();
    assert.deepEqual(sets, [[]] as Pod[][]);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'x.yaml'), podYaml('x'));
    await src.queueScan();
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['x-n1'],
    );
  } finally {
    src.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
});

test('one bad file only ever affects itself: alias bombs, self-references and wrong types are reported, the rest of the directory goes on', () =>
  withSource(async (dir, sets, src, log) => {
    fs.writeFileSync(path.join(dir, 'good.yaml'), podYaml('good'));
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
      ),
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'bomb.yaml'), `${bomb}\nkind: Pod\n`);
    fs.writeFileSync(
      path.join(dir, 'self.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: &m {name: self, labels: *m}\nspec: {containers: [{name: c, image: i}]}\n',
    );
    fs.writeFileSync(
      path.join(dir, 'tol.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: tol}\nspec: {tolerations: 5, containers: [{name: c, image: i}]}\n',
    );
    fs.writeFileSync(path.join(dir, 'long.yaml'), podYaml('x'.repeat(252)));
    await src.start();
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['good-n1'],
    );
    const text = log.lines.join('\n');
    for (const f of ['bomb.yaml', 'self.yaml', 'tol.yaml', 'long.yaml'])
      assert.ok(text.includes(path.join(dir, f)), `${f} reported:\n${text}`);
    assert.match(text, /tol\.yaml: Pod "tol": spec\.tolerations: Invalid type: expected array, got number/);
    assert.match(
      text,
      /long\.yaml: Pod "x+": metadata\.name: Invalid value: "x+-n1": must be no more than 253 characters/,
    );
    // New files still start and removed ones still go.
    fs.writeFileSync(path.join(dir, 'later.yaml'), podYaml('later'));
    fs.rmSync(path.join(dir, 'good.yaml'));
    await src.queueScan();
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['later-n1'],
    );
  }));

test('a file rewritten in place to the same content (truncate, then write) restarts nothing; a fifo is skipped with one log line', () =>
  withSource(async (dir, sets, src, log) => {
    const f = path.join(dir, 'web.yaml');
    fs.writeFileSync(f, podYaml('web'));
    execFileSync('mkfifo', [path.join(dir, 'pipe.yaml')]);
    await src.start();
    const before = sets.length;
    fs.writeFileSync(f, '');
    await src.queueScan();
    fs.writeFileSync(f, podYaml('web'));
    await src.queueScan();
    await sleep(1200);
    await src.queueScan();
    assert.equal(sets.length, before, 'no SET without the pod was ever sent');
    assert.equal(log.lines.filter((l) => l.includes('pipe.yaml: not a regular file, skipped')).length, 1);
    // A file that stays empty does lose its pod, once it has been quiet for the settle time.
    fs.writeFileSync(f, '');
    await src.queueScan();
    await sleep(1200);
    await src.queueScan();
    assert.deepEqual(sets.at(-1), []);
  }));

test('two files defining one pod: the one already running keeps it, whatever the sort order (upstream keeps the first seen)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fs-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.yaml'), podYaml('web', 'sleep 1'));
    fs.writeFileSync(path.join(dir, 'b.yaml'), podYaml('web', 'sleep 2'));
    const first: Pod[][] = [];
    const probe = new FileSource({
      path: dir,
      nodeName: 'n1',
      log: memoryLogger(),
      onSet: (p) => first.push(p),
      checkFrequencyMs: 60_000,
    });
    await probe.start();
    probe.stop();
    const fromA = first.at(-1)![0]!;
    assert.match(fromA.spec!.containers[0]!.command!.join(' '), /sleep 1/, 'sort order alone: a.yaml');
    const sets: Pod[][] = [];
    const log = memoryLogger();
    const bUid = new Set<string>();
    const src = new FileSource({
      path: dir,
      nodeName: 'n1',
      log,
      onSet: (p) => sets.push(p),
      checkFrequencyMs: 60_000,
      running: (uid) => bUid.has(uid),
    });
    // The pod from b.yaml is the one running (the kubelet restarted after b.yaml won).
    const { parseManifest } = await import('./manifest.js');
    bUid.add(
      parseManifest(fs.readFileSync(path.join(dir, 'b.yaml')), path.join(dir, 'b.yaml'), 'file', 'n1').pods[0]!
        .metadata!.uid!,
    );
    await src.start();
    src.stop();
    assert.match(sets.at(-1)![0]!.spec!.containers[0]!.command!.join(' '), /sleep 2/);
    assert.ok(
      log.lines.some(
        (l) =>
          l.includes('a.yaml: Pod "default/web-n1": metadata.name: Duplicate value: already defined in') &&
          l.includes('b.yaml'),
      ),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('ensureManifestDir makes a missing manifest directory, never a path naming a file, and leaves an existing one', () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fs-'));
  try {
    assert.equal(ensureManifestDir(path.join(base, 'etc/kubernetes/manifests')), true);
    assert.ok(fs.statSync(path.join(base, 'etc/kubernetes/manifests')).isDirectory());
    assert.equal(ensureManifestDir(path.join(base, 'etc/kubernetes/manifests')), false);
    assert.equal(ensureManifestDir(path.join(base, 'one/pod.yaml')), false);
    assert.equal(fs.existsSync(path.join(base, 'one')), false);
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
});
