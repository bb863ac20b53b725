import assert from 'node:assert/strict';
import { test } from 'node:test';

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import { assetPath } from '../../kube/assets.js';
import { loadGrpcPackage } from './grpc-services.js';

// The reference: what the CRI client loaded before (proto-loader with the options proto/gen was generated with).
const PROTO = assetPath('proto');
const reference = protoLoader.loadSync('cri/api.proto', {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO],
});
type Services = Record<string, grpc.ServiceClientConstructor>;
const ours = (loadGrpcPackage('cri/api.proto', PROTO) as unknown as { runtime: { v1: Services } }).runtime.v1;

test("the CRI services have proto-loader's methods, paths and stream kinds", () => {
  for (const name of ['RuntimeService', 'ImageService']) {
    const want = reference[`runtime.v1.${name}`] as grpc.ServiceDefinition;
    const got = ours[name]!.service;
    assert.deepEqual(Object.keys(got).sort(), Object.keys(want).sort(), name);
    for (const [m, def] of Object.entries(want)) {
      assert.deepEqual(
        [got[m]!.path, got[m]!.requestStream, got[m]!.responseStream, got[m]!.originalName],
        [def.path, def.requestStream, def.responseStream, def.originalName],
        `${name}.${m}`,
      );
    }
  }
});

test("messages encode and decode as proto-loader's: nested messages, maps, enums as strings, int64 as strings, defaults", () => {
  const want = (reference['runtime.v1.RuntimeService'] as grpc.ServiceDefinition).CreateContainer!;
  const got = ours.RuntimeService!.service.CreateContainer!;
  const req = {
    pod_sandbox_id: 'sb1',
    config: {
      metadata: { name: 'main', attempt: 2 },
      image: { image: 'busybox' },
      command: ['sh', '-c', 'sleep 1'],
      envs: [{ key: 'A', value: 'b' }],
      mounts: [{ container_path: '/data', host_path: '/tmp/x', propagation: 'PROPAGATION_HOST_TO_CONTAINER' }],
      labels: { app: 'web' },
      linux: {
        resources: { memory_limit_in_bytes: '134217728', cpu_shares: '512' },
        security_context: { run_as_user: { value: '1000' } },
      },
    },
  };
  const bytes = got.requestSerialize(req);
  assert.deepEqual(bytes, want.requestSerialize(req), 'the same bytes on the wire');
  assert.deepEqual(got.requestDeserialize(bytes), want.requestDeserialize(bytes), 'the same object back');
  const back = got.requestDeserialize(bytes) as typeof req & {
    config: { tty: boolean; linux: { resources: { cpu_period: string } } };
  };
  assert.equal(back.config.mounts[0]!.propagation, 'PROPAGATION_HOST_TO_CONTAINER');
  assert.equal(back.config.linux.resources.memory_limit_in_bytes, '134217728');
  assert.equal(back.config.tty, false, 'defaults filled in');
  assert.equal(back.config.linux.resources.cpu_period, '0');
  assert.deepEqual(back.config.labels, { app: 'web' });
});

test("a response with nested messages and int64 wrappers decodes as proto-loader's (the CRI API has no oneof)", () => {
  const want = (reference['runtime.v1.RuntimeService'] as grpc.ServiceDefinition).ContainerStats!;
  const got = ours.RuntimeService!.service.ContainerStats!;
  const res = { stats: { attributes: { id: 'c1' }, cpu: { timestamp: '5', usage_core_nano_seconds: { value: '7' } } } };
  const bytes = want.responseSerialize(res);
  assert.deepEqual(got.responseDeserialize(bytes), want.responseDeserialize(bytes));
});
