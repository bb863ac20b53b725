import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Store } from '../storage/store.js';
import { Api } from './api.js';
import { ApiError } from './errors.js';

const setup = () => {
  const api = new Api(new Store());
  const pods = api.res('', 'pods');
  api.create(pods, 'default', {
    metadata: { name: 'p' },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'i',
          resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
        },
        {
          name: 'r',
          image: 'i',
          resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
          resources: {
            requests: { cpu: '100m', memory: '64Mi' },
            limits: { memory: '128Mi', 'ephemeral-storage': '1Gi' },
          },
        },
      ],
    },
  });
  return { api, pods };
};
const invalid = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 422 && re.test(e.message);
const resize = (api: Api, patch: object) =>
  api.patch(api.res('', 'pods'), 'default', 'p', 'strategic', { spec: patch }, 'resize');

test('pods/resize changes cpu and memory of running containers and nothing else', () => {
  const { api, pods } = setup();
  const out = resize(api, {
    containers: [
      { name: 'c', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m', memory: '256Mi' } }, image: 'other' },
    ],
    activeDeadlineSeconds: 5,
  });
  assert.deepEqual(out.spec.containers[0].resources, {
    requests: { cpu: '150m', memory: '64Mi' },
    limits: { cpu: '300m', memory: '256Mi' },
  });
  assert.equal(
    out.spec.containers[0].image,
    'i',
    'other fields of the body are dropped, as upstream dropNonResizeUpdates',
  );
  assert.equal(out.spec.activeDeadlineSeconds, undefined);
  // A plain update may not change resources.
  const cur = api.get(pods, 'default', 'p');
  cur.spec.containers[0].resources.limits.cpu = '1';
  assert.throws(() => api.update(pods, 'default', 'p', cur), invalid(/pod updates may not change fields/));
});

test('pods/resize refuses what upstream ValidatePodResize refuses, with its messages', () => {
  const { api } = setup();
  assert.throws(
    () => resize(api, { containers: [{ name: 'c', resources: { limits: { memory: '100Mi' } } }] }),
    invalid(
      /spec\.containers\[0\]\.resources\.limits\[memory\]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer/,
    ),
  );
  resize(api, { containers: [{ name: 'r', resources: { limits: { memory: '100Mi' } } }] }); // RestartContainer: allowed
  assert.throws(
    () => resize(api, { containers: [{ name: 'c', resources: { requests: { memory: null } } }] }),
    invalid(/spec\.containers\[0\]\.resources\.requests: Forbidden: resource requests cannot be removed/),
  );
  assert.throws(
    () => resize(api, { containers: [{ name: 'c', resources: { limits: { cpu: null } } }] }),
    invalid(/resource limits cannot be removed/),
  );
  assert.throws(
    () => resize(api, { containers: [{ name: 'r', resources: { limits: { 'ephemeral-storage': '2Gi' } } }] }),
    invalid(/spec: Forbidden: only cpu and memory resources are mutable/),
  );
  assert.throws(
    () => resize(api, { containers: [{ name: 'c', resources: { requests: { cpu: '300m' } } }] }),
    invalid(/must be less than or equal to cpu limit/),
  );
  const api2 = new Api(new Store());
  api2.create(api2.res('', 'pods'), 'default', {
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  });
  assert.throws(
    () => resize(api2, { containers: [{ name: 'c', resources: { requests: { memory: '40Mi' } } }] }),
    invalid(/spec: Invalid value: "BestEffort": Pod QOS Class may not change as a result of resizing/),
  );
});

test('a pod update whose spec differs only in field order (a protobuf body) is not a spec change', () => {
  const { api, pods } = setup();
  const cur = api.get(pods, 'default', 'p');
  const reversed = (o: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(o)
        .reverse()
        .map(([k, v]) => [
          k,
          v && typeof v === 'object' && !Array.isArray(v) ? reversed(v as Record<string, unknown>) : v,
        ]),
    );
  const next = { ...cur, metadata: { ...cur.metadata, labels: { time: 'later' } }, spec: reversed(cur.spec) };
  const out = api.update(pods, 'default', 'p', next);
  assert.equal(out.metadata.labels.time, 'later');
});
