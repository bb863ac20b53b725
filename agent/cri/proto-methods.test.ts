import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { assetPath } from '../../kube/assets.js';
import { loadServices, parseProto } from './proto-methods.js';

const PROTO = assetPath('proto');

test('proto/cri/api.json is the descriptor of proto/cri/api.proto (else: npm run gen:proto)', () => {
  const json = JSON.parse(fs.readFileSync(path.join(PROTO, 'cri/api.json'), 'utf8')) as object;
  assert.deepEqual(json, JSON.parse(JSON.stringify(parseProto('cri/api.proto', PROTO).toJSON())));
});

test('the descriptor and the .proto give the same methods, and messages encode alike', () => {
  const fromJson = loadServices('cri/api.json', PROTO);
  const fromProto = loadServices('cri/api.proto', PROTO);
  for (const [svc, methods] of fromProto) {
    assert.deepEqual([...fromJson.get(svc)!.keys()], [...methods.keys()], svc);
    for (const [name, m] of methods) assert.equal(fromJson.get(svc)!.get(name)!.path, m.path);
  }
  const req = {
    pod_sandbox_id: 'sb',
    config: {
      metadata: { name: 'c', attempt: 1 },
      image: { image: 'busybox' },
      envs: [{ key: 'A', value: 'b' }],
      labels: { x: 'y' },
      linux: { resources: { memory_limit_in_bytes: '1048576' } },
    },
  };
  const a = fromJson.get('runtime.v1.RuntimeService')!.get('CreateContainer')!;
  const b = fromProto.get('runtime.v1.RuntimeService')!.get('CreateContainer')!;
  assert.deepEqual(a.serialize(req), b.serialize(req));
  assert.deepEqual(a.deserializeRequest(a.serialize(req)), b.deserializeRequest(b.serialize(req)));
});
