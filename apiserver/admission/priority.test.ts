import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { Store } from '../storage/store.js';

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
});
const forbidden = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 403 && re.test(e.message);
const invalid = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 422 && re.test(e.message);

test('PriorityClasses: the system classes exist; Priority admission sets spec.priority and preemptionPolicy from the class or the global default', () => {
  const api = new Api(new Store());
  const pcs = api.res('scheduling.k8s.io', 'priorityclasses');
  const pods = api.res('', 'pods');
  assert.equal(api.get(pcs, '', 'system-node-critical').value, 2000001000);
  assert.equal(
    api.create(pods, 'kube-system', pod('dns', { priorityClassName: 'system-cluster-critical' })).spec.priority,
    2000000000,
  );
  assert.throws(
    () => api.create(pods, 'default', pod('x', { priorityClassName: 'nope' })),
    forbidden(/pods "x" is forbidden: no PriorityClass with name nope was found/),
  );
  api.create(pcs, '', { metadata: { name: 'batch-low' }, value: 10, globalDefault: true, preemptionPolicy: 'Never' });
  const p = api.create(pods, 'default', pod('plain'));
  assert.deepEqual([p.spec.priorityClassName, p.spec.priority, p.spec.preemptionPolicy], ['batch-low', 10, 'Never']);
  assert.throws(
    () => api.create(pcs, '', { metadata: { name: 'second' }, value: 1, globalDefault: true }),
    forbidden(/PriorityClass batch-low is already marked as default\. Only one default can exist/),
  );
  assert.throws(
    () => api.create(pcs, '', { metadata: { name: 'huge' }, value: 2000000000 }),
    invalid(/value: Forbidden: maximum allowed value of a user defined priority is 1000000000/),
  );
  assert.throws(
    () => api.create(pcs, '', { metadata: { name: 'system-mine' }, value: 1 }),
    invalid(/priority class names with 'system-' prefix are reserved/),
  );
  const cur = api.get(pcs, '', 'batch-low');
  assert.throws(
    () => api.update(pcs, '', 'batch-low', { ...cur, value: 11 }),
    invalid(/value: Forbidden: may not be changed in an update/),
  );
  assert.throws(
    () => api.create(pods, 'default', pod('mismatch', { priorityClassName: 'batch-low', priority: 5 })),
    forbidden(/the integer value of priority \(5\) must not be provided in pod spec/),
  );
});

test('networking.k8s.io Ingress, IngressClass and NetworkPolicy are served and stored', () => {
  const api = new Api(new Store());
  const ing = api.create(api.res('networking.k8s.io', 'ingresses'), 'default', {
    metadata: { name: 'web' },
    spec: {
      ingressClassName: 'nginx',
      rules: [
        {
          host: 'a.example',
          http: {
            paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
          },
        },
      ],
    },
  });
  assert.equal(ing.apiVersion, 'networking.k8s.io/v1');
  api.create(api.res('networking.k8s.io', 'ingressclasses'), '', {
    metadata: { name: 'nginx' },
    spec: { controller: 'k8s.io/ingress-nginx' },
  });
  const np = api.create(api.res('networking.k8s.io', 'networkpolicies'), 'default', {
    metadata: { name: 'deny' },
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  });
  assert.deepEqual(np.spec.policyTypes, ['Ingress']);
});
