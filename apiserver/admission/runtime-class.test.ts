import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { Store } from '../storage/store.js';
import { admitRuntimeClass, validateRuntimeClass } from './runtime-class.js';

const classes: Record<string, any> = {
  plain: { metadata: { name: 'plain' }, handler: 'runc' },
  vm: {
    metadata: { name: 'vm' },
    handler: 'kata',
    overhead: { podFixed: { cpu: '250m', memory: '120Mi' } },
    scheduling: {
      nodeSelector: { sandbox: 'vm' },
      tolerations: [{ key: 'vm', operator: 'Exists', effect: 'NoSchedule' }],
    },
  },
};
const pod = (spec: Record<string, unknown>) =>
  ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } }) as any;
const forbidden = (msg: string) => (e: unknown) =>
  e instanceof ApiError && e.code === 403 && e.message === `pods "p" is forbidden: ${msg}`;

test('RuntimeClass admission: the class must exist; its overhead and scheduling are copied into the pod', () => {
  const get = (n: string) => classes[n];
  assert.throws(
    () => admitRuntimeClass(pod({ runtimeClassName: 'nope' }), get),
    forbidden('pod rejected: RuntimeClass "nope" not found'),
  );
  const p = pod({
    runtimeClassName: 'vm',
    nodeSelector: { disk: 'ssd' },
    tolerations: [{ key: 'vm', operator: 'Exists', effect: 'NoSchedule' }],
  });
  admitRuntimeClass(p, get);
  assert.deepEqual(p.spec.overhead, { cpu: '250m', memory: '120Mi' });
  assert.deepEqual(p.spec.nodeSelector, { disk: 'ssd', sandbox: 'vm' });
  assert.equal(p.spec.tolerations.length, 1, 'an identical toleration is not added twice');
  assert.throws(
    () => admitRuntimeClass(pod({ runtimeClassName: 'vm', nodeSelector: { sandbox: 'runc' } }), get),
    forbidden('conflict: runtimeClass.scheduling.nodeSelector[sandbox] = vm; pod.spec.nodeSelector[sandbox] = runc'),
  );
  assert.throws(
    () => admitRuntimeClass(pod({ runtimeClassName: 'vm', overhead: { cpu: '1' } }), get),
    forbidden("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"),
  );
  const same = pod({ runtimeClassName: 'vm', overhead: { cpu: '0.25', memory: '120Mi' } });
  admitRuntimeClass(same, get);
  assert.throws(
    () => admitRuntimeClass(pod({ runtimeClassName: 'plain', overhead: { cpu: '1' } }), get),
    forbidden('pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'),
  );
  const none = pod({});
  admitRuntimeClass(none, get);
  assert.deepEqual(none.spec, pod({}).spec, 'a pod without a class is left alone');
});

test('RuntimeClass validation: handler a DNS label, overhead quantities, immutable handler', () => {
  assert.deepEqual(validateRuntimeClass(classes.vm), []);
  assert.deepEqual(
    validateRuntimeClass({ metadata: { name: 'x' }, handler: 'Bad_Handler' }).map((c) => c.field),
    ['handler'],
  );
  assert.deepEqual(
    validateRuntimeClass({ metadata: { name: 'x' } }).map((c) => c.field),
    ['handler'],
    'required',
  );
  assert.deepEqual(
    validateRuntimeClass({ metadata: { name: 'x' }, handler: 'h', overhead: { podFixed: { cpu: '-1' } } }).map(
      (c) => c.field,
    ),
    ['overhead.podFixed[cpu]'],
  );
  const api = new Api(new Store());
  const rcs = api.res('node.k8s.io', 'runtimeclasses');
  api.create(rcs, '', {
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: 'vm' },
    handler: 'kata',
  });
  const cur = api.get(rcs, '', 'vm');
  assert.throws(
    () => api.update(rcs, '', 'vm', { ...cur, handler: 'runc' }),
    (e: unknown) =>
      e instanceof ApiError && e.code === 422 && /handler: Invalid value: "runc": field is immutable/.test(e.message),
  );
  const pods = api.res('', 'pods');
  assert.throws(
    () => api.create(pods, 'default', pod({ runtimeClassName: 'gone' })),
    forbidden('pod rejected: RuntimeClass "gone" not found'),
  );
  assert.equal(api.create(pods, 'default', pod({ runtimeClassName: 'vm' })).spec.runtimeClassName, 'vm');
});
