import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { assetPath } from './assets.js';

test('a runtime asset is found in the nearest directory upward that has it (dist/ before the checkout)', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-assets-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const chunks = path.join(root, 'dist', 'chunks');
  fs.mkdirSync(chunks, { recursive: true });
  for (const dir of [root, path.join(root, 'dist')]) {
    fs.mkdirSync(path.join(dir, 'proto', 'cri'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'proto', 'cri', 'api.proto'), '');
  }
  assert.equal(assetPath('proto/cri/api.proto', chunks), path.join(root, 'dist', 'proto', 'cri', 'api.proto'));
  assert.equal(
    assetPath('proto/cri/api.proto', path.join(root, 'agent')),
    path.join(root, 'proto', 'cri', 'api.proto'),
  );
  assert.throws(
    () => assetPath('apiserver/openapi/schemas.json', chunks),
    /runtime asset apiserver\/openapi\/schemas\.json not found in .*dist\/chunks or any parent directory/,
  );
});

test('the CRI definitions and the schemas are found from the sources', () => {
  for (const rel of [
    'proto/cri/api.proto',
    'proto/grpc/health/v1/health.proto',
    'apiserver/openapi/schemas.json',
    'apiserver/protobuf/schema.json',
  ]) {
    assert.ok(fs.existsSync(assetPath(rel)), rel);
  }
});
