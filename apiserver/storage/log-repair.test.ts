// The data log after a crash or a full disk: a torn end is cut (a copy kept beside it) so later writes and starts
// lose nothing acknowledged; a failed append leaves no partial record; kill -9 during a write burst loses nothing.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { seededRandom } from '../../kube/seeded-random.js';
import { readLog } from './log-file.js';
import { Store } from './store.js';

const obj = (name: string, extra = {}) => ({ metadata: { name, namespace: 'ns' }, ...extra });
const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-log-'));

test('a log cut at every byte offset of its last record: the record is cut away and copied, later writes and starts keep everything', () => {
  const dir = tmpDir();
  try {
    const s = new Store({ dataDir: dir });
    s.create('/p/ns/a', obj('a', { note: 'ünïcode' }));
    s.create('/p/ns/b', obj('b'));
    const before = fs.statSync(path.join(dir, 'objects.log')).size;
    s.create('/p/ns/last', obj('last', { data: 'x'.repeat(40) }));
    s.close();
    const whole = fs.readFileSync(path.join(dir, 'objects.log'));
    for (let cut = before; cut < whole.length; cut++) {
      const d = tmpDir();
      try {
        fs.writeFileSync(path.join(d, 'objects.log'), whole.subarray(0, cut));
        const lines: string[] = [];
        const s1 = new Store({ dataDir: d, log: (l) => lines.push(l) });
        assert.equal(s1.get('/p/ns/last'), undefined, `cut at ${cut}`);
        assert.equal(s1.get('/p/ns/a')!.note, 'ünïcode');
        assert.equal(
          fs.statSync(path.join(d, 'objects.log')).size,
          before,
          `the log ends at its last whole record (cut at ${cut})`,
        );
        const copies = fs.readdirSync(d).filter((f) => f.startsWith('objects.log.torn-'));
        if (cut > before) {
          assert.equal(copies.length, 1, `a copy of what was cut (cut at ${cut})`);
          assert.deepEqual(fs.readFileSync(path.join(d, copies[0]!)), whole.subarray(before, cut));
          assert.match(
            lines.join('\n'),
            new RegExp(`cut a torn last record \\(${cut - before} bytes at offset ${before}, never acknowledged\\)`),
          );
        } else assert.equal(copies.length, 0);
        // The next acknowledged write and a second restart: nothing lost, no corruption.
        s1.create('/p/ns/next', obj('next'));
        s1.close();
        const s2 = new Store({ dataDir: d });
        assert.equal(s2.get('/p/ns/next')!.metadata.name, 'next', `cut at ${cut}`);
        s2.create('/p/ns/after', obj('after'));
        s2.close();
        assert.equal(new Store({ dataDir: d }).get('/p/ns/after')!.metadata.name, 'after');
      } finally {
        fs.rmSync(d, { recursive: true, force: true });
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a bad record before the end is corruption: the start is refused, naming the file and line', () => {
  const buf = Buffer.from('{"t":"put","k":"/a","rv":1,"o":{}}\n{"t":"pu\n{"t":"put","k":"/b","rv":2,"o":{}}\n');
  assert.throws(() => readLog(buf, '/d/objects.log'), /^Error: \/d\/objects\.log: line 2 is corrupt$/);
  assert.deepEqual(
    readLog(Buffer.from('{"t":"put","k":"/a","rv":1,"o":{}}\n{"t":"x"}\n'), 'f').goodBytes,
    35,
    'a whole last line that is no record is torn',
  );
});

test('a failed append (a full disk) leaves no partial record; the write is refused and the next one lands whole', () => {
  const dir = tmpDir();
  const realWrite = fs.writeSync;
  try {
    const s = new Store({ dataDir: dir });
    s.create('/p/ns/a', obj('a'));
    const size = fs.statSync(path.join(dir, 'objects.log')).size;
    // Half the record reaches the disk, then ENOSPC.
    (fs as { writeSync: unknown }).writeSync = (fd: number, buf: Buffer, offset = 0) => {
      realWrite(fd, buf, offset, Math.max(1, Math.floor((buf.length - offset) / 2)));
      (fs as { writeSync: unknown }).writeSync = () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      };
      return Math.max(1, Math.floor((buf.length - offset) / 2));
    };
    assert.throws(() => s.create('/p/ns/b', obj('b')), /ENOSPC/);
    (fs as { writeSync: unknown }).writeSync = realWrite;
    assert.equal(fs.statSync(path.join(dir, 'objects.log')).size, size, 'nothing of the failed record is left');
    assert.equal(s.get('/p/ns/b'), undefined);
    const c = s.create('/p/ns/c', obj('c'));
    s.close();
    const again = new Store({ dataDir: dir });
    assert.equal(again.get('/p/ns/c')!.metadata.resourceVersion, c.metadata.resourceVersion);
    assert.equal(again.get('/p/ns/b'), undefined);
    assert.equal(fs.readdirSync(dir).filter((f) => f.includes('torn')).length, 0);
    again.close();
  } finally {
    (fs as { writeSync: unknown }).writeSync = realWrite;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const WRITER = `
import fs from 'node:fs';
import { Store } from ${JSON.stringify(path.resolve('apiserver/storage/store.ts'))};
const s = new Store({ dataDir: process.argv[2] });
for (let i = 0; ; i++) {
  s.create('/p/ns/o' + i, { metadata: { name: 'o' + i }, data: 'y'.repeat(i % 700) });
  fs.writeSync(1, 'ack ' + i + '\\n');
}`;

test('kill -9 at random points of a write burst: every acknowledged write is there after each restart', async () => {
  const dir = tmpDir();
  const random = seededRandom(46);
  const script = path.join(dir, 'writer.mts');
  fs.writeFileSync(script, WRITER);
  const data = path.join(dir, 'data');
  try {
    let acked = -1;
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', script, data], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      // Kill once it is writing, at a random moment of the burst.
      await new Promise<void>((resolve) => {
        const started = (): void => {
          if (!out.includes('ack')) return;
          child.stdout.off('data', started);
          setTimeout(
            () => {
              child.kill('SIGKILL');
              resolve();
            },
            20 + Math.floor(random() * 200),
          );
        };
        child.stdout.on('data', started);
      });
      await new Promise((r) => child.once('exit', r));
      const last = Math.max(...[...out.matchAll(/ack (\d+)/g)].map((m) => Number(m[1])));
      acked = Math.max(acked, last);
      const s = new Store({ dataDir: data });
      for (let i = 0; i <= last; i++) assert.ok(s.get(`/p/ns/o${i}`), `round ${round}: acknowledged o${i} is there`);
      // The next round's writer starts over at o0: clear the keys so its creates do not collide.
      for (let i = 0; s.get(`/p/ns/o${i}`); i++) s.delete(`/p/ns/o${i}`);
      s.close();
    }
    assert.ok(acked > 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
