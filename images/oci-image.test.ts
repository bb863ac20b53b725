import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';

import { writeOciLayout } from './oci-image.js';

test('the OCI layout is self-consistent and reproducible', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-oci-'));
  const root = path.join(dir, 'rootfs');
  fs.mkdirSync(path.join(root, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bin', 'hello'), 'hi\n');
  const d1 = writeOciLayout(root, path.join(dir, 'l1'), 't', { cmd: ['/bin/hello'] });
  const d2 = writeOciLayout(root, path.join(dir, 'l2'), 't', { cmd: ['/bin/hello'] });
  assert.equal(d1, d2, 'same input, same digest');
  const blob = (l: string, d: string) => fs.readFileSync(path.join(dir, l, 'blobs/sha256', d.slice(7)));
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'l1/index.json'), 'utf8'));
  assert.equal(index.manifests[0].digest, d1);
  assert.equal(index.manifests[0].annotations['org.opencontainers.image.ref.name'], 't');
  const manifest = JSON.parse(blob('l1', d1).toString());
  const config = JSON.parse(blob('l1', manifest.config.digest).toString());
  const layer = blob('l1', manifest.layers[0].digest);
  assert.equal(manifest.layers[0].size, layer.length);
  const diffId = `sha256:${createHash('sha256').update(zlib.gunzipSync(layer)).digest('hex')}`;
  assert.deepEqual(config.rootfs.diff_ids, [diffId], 'diff_ids are digests of the uncompressed layer');
  assert.deepEqual(config.config.Cmd, ['/bin/hello']);
  assert.equal(config.config.User, undefined);
  const d3 = writeOciLayout(root, path.join(dir, 'l3'), 't', { cmd: ['/bin/hello'], user: '1234' });
  assert.equal(
    JSON.parse(blob('l3', JSON.parse(blob('l3', d3).toString()).config.digest).toString()).config.User,
    '1234',
  );
  fs.rmSync(dir, { recursive: true });
});
