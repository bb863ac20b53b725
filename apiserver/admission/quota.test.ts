import assert from 'node:assert/strict';
import { test } from 'node:test';

import { memoryLogger } from '../../kube/log.js';
import { waitFor } from '../../testing/wait.js';
import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { LocalClient } from '../api/local-client.js';
import { ResourceQuotaController } from '../controllers/resourcequota-controller.js';
import type { Obj } from '../storage/store.js';
import { Store } from '../storage/store.js';
import { namespaceUsage, quotaCounts, usageOf } from './resource-quota.js';

const pod = (name: string, resources: Obj = {}, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i', resources }], ...extra },
});
const forbidden = (re: RegExp) => (e: unknown) => e instanceof ApiError && e.code === 403 && re.test(e.message);

test("quota accounting: a pod's requests and limits (init containers as their max, overhead), services, claims, counts", () => {
  const p = pod(
    'p',
    { requests: { cpu: '250m', memory: '64Mi' }, limits: { memory: '128Mi' } },
    { initContainers: [{ name: 'i', image: 'i', resources: { requests: { cpu: '1' } } }], overhead: { cpu: '10m' } },
  );
  const u = usageOf('pods', '', p);
  assert.deepEqual(
    [u.pods, u['count/pods'], u['requests.cpu'], u['requests.memory'], u['limits.memory'], u['limits.cpu']],
    [1, 1, 1010, 64 * 2 ** 20, 128 * 2 ** 20, undefined],
  );
  assert.deepEqual(
    usageOf('pods', '', { ...p, status: { phase: 'Succeeded' } }),
    {},
    'finished pods count for nothing',
  );
  assert.deepEqual(usageOf('services', '', { spec: { type: 'NodePort', ports: [{ port: 1 }, { port: 2 }] } }), {
    'count/services': 1,
    services: 1,
    'services.nodeports': 2,
  });
  assert.equal(
    usageOf('persistentvolumeclaims', '', {
      spec: { storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } },
    })['fast.storageclass.storage.k8s.io/requests.storage'],
    2 ** 30,
  );
  assert.deepEqual(usageOf('deployments', 'apps', {}), { 'count/deployments.apps': 1 });
  assert.deepEqual(
    namespaceUsage({ pods: '5', 'requests.cpu': '2', 'requests.memory': '1Gi' }, [
      { resource: 'pods', group: '', items: [p, pod('q', { requests: { cpu: '500m', memory: '1Gi' } })] },
    ]),
    { pods: '2', 'requests.cpu': '1510m', 'requests.memory': '1088Mi' },
  );
});

test("ResourceQuota and LimitRange admission: defaults with the limit-ranger annotation, bounds, quota refusals with upstream's messages; the controller keeps status.used", async () => {
  const api = new Api(new Store());
  const client = new LocalClient(api);
  const pods = api.res('', 'pods');
  api.create(api.res('', 'limitranges'), 'default', {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'lr' },
    spec: {
      limits: [
        {
          type: 'Container',
          default: { cpu: '500m', memory: '128Mi' },
          defaultRequest: { cpu: '100m' },
          max: { cpu: '1' },
        },
      ],
    },
  });
  const lr = api.get(api.res('', 'limitranges'), 'default', 'lr');
  assert.deepEqual(lr.spec.limits[0].defaultRequest, { cpu: '100m', memory: '128Mi' }, 'defaultRequest from default');
  const a = api.create(pods, 'default', pod('a'));
  assert.deepEqual(a.spec.containers[0].resources, {
    requests: { cpu: '100m', memory: '128Mi' },
    limits: { cpu: '500m', memory: '128Mi' },
  });
  assert.equal(
    a.metadata.annotations['kubernetes.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c',
  );
  assert.throws(
    () => api.create(pods, 'default', pod('big', { limits: { cpu: '2' } })),
    forbidden(/pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/),
  );
  // Validation runs after LimitRanger's defaults, as upstream: a request above the defaulted limit is invalid.
  assert.throws(
    () => api.create(pods, 'default', pod('over', { requests: { cpu: '600m' } })),
    (e: Error & { code?: number }) =>
      e.code === 422 &&
      /spec\.containers\[0\]\.resources\.requests: Invalid value: "600m": must be less than or equal to cpu limit of 500m/.test(
        e.message,
      ),
  );

  const quotas = api.res('', 'resourcequotas');
  api.create(quotas, 'default', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q' },
    spec: { hard: { pods: '2', 'requests.cpu': '250m', 'count/configmaps': '1' } },
  });
  api.create(pods, 'default', pod('b'));
  assert.throws(
    () => api.create(pods, 'default', pod('c')),
    forbidden(
      /pods "c" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=100m, used: pods=2,requests.cpu=200m, limited: pods=2,requests.cpu=250m/,
    ),
  );
  assert.equal(api.list(pods, 'default').items.length, 2, 'nothing stored');
  api.create(api.res('', 'configmaps'), 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'one' } });
  assert.throws(
    () =>
      api.create(api.res('', 'configmaps'), 'default', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'two' },
      }),
    forbidden(
      /exceeded quota: q, requested: count\/configmaps=1, used: count\/configmaps=1, limited: count\/configmaps=1/,
    ),
  );
  api.create(api.res('', 'namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
  api.create(quotas, 'other', {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'mem' },
    spec: { hard: { 'limits.memory': '1Gi' } },
  });
  assert.throws(
    () => api.create(pods, 'other', pod('bare')),
    forbidden(/failed quota: mem: must specify limits.memory/),
  );

  const ctl = new ResourceQuotaController(client, memoryLogger(), 60_000);
  await ctl.start();
  try {
    await waitFor(
      async () => (await client.get('/api/v1/namespaces/default/resourcequotas/q')).status?.used?.pods === '2',
      3000,
      20,
      'status.used',
    );
    const q = await client.get('/api/v1/namespaces/default/resourcequotas/q');
    assert.deepEqual(q.status, {
      hard: { pods: '2', 'requests.cpu': '250m', 'count/configmaps': '1' },
      used: { pods: '2', 'requests.cpu': '200m', 'count/configmaps': '1' },
    });
    await client.delete('/api/v1/namespaces/default/pods/a');
    await waitFor(
      async () => (await client.get('/api/v1/namespaces/default/resourcequotas/q')).status?.used?.pods === '1',
      3000,
      20,
      'a pod gone frees its share',
    );
    api.create(pods, 'default', pod('c'));
  } finally {
    await ctl.stop();
  }
});

test('quota scopes: Terminating, NotTerminating, BestEffort, NotBestEffort and a PriorityClass scopeSelector count only their pods', () => {
  const besteffort = { spec: { containers: [{ name: 'c' }] } };
  const terminating = {
    spec: { activeDeadlineSeconds: 60, containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
  };
  const high = { spec: { priorityClassName: 'high', containers: [{ name: 'c' }] } };
  const quota = (spec: Record<string, unknown>) => ({ spec: { hard: { pods: '9' }, ...spec } });
  const counts = (q: Record<string, unknown>) =>
    [besteffort, terminating, high].map((p) => quotaCounts(quota(q), 'pods', p));
  assert.deepEqual(counts({}), [true, true, true]);
  assert.deepEqual(counts({ scopes: ['Terminating'] }), [false, true, false]);
  assert.deepEqual(counts({ scopes: ['NotTerminating'] }), [true, false, true]);
  assert.deepEqual(counts({ scopes: ['BestEffort'] }), [true, false, true]);
  assert.deepEqual(counts({ scopes: ['NotBestEffort', 'Terminating'] }), [false, true, false]);
  const byClass = {
    scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
  };
  assert.deepEqual(counts(byClass), [false, false, true]);
  assert.equal(quotaCounts(quota({ scopes: ['BestEffort'] }), 'services', {}), false, 'scoped quotas count pods only');
  assert.deepEqual(
    namespaceUsage(
      { pods: '9' },
      [{ resource: 'pods', group: '', items: [besteffort, terminating, high] }],
      quota({ scopes: ['Terminating'] }),
    ),
    { pods: '1' },
  );
});

test('extended resources, huge pages and ephemeral-storage count by their requests', () => {
  const p = pod('ext', {
    requests: { cpu: '1', 'ephemeral-storage': '30Gi', 'example.com/dongle': '2' },
    limits: { 'example.com/dongle': '2' },
  });
  const u = usageOf('pods', '', p);
  assert.equal(u['requests.example.com/dongle'], 2);
  assert.equal(u['limits.example.com/dongle'], undefined);
  assert.deepEqual(
    namespaceUsage({ 'requests.example.com/dongle': '3', 'ephemeral-storage': '50Gi' }, [
      { resource: 'pods', group: '', items: [p] },
    ]),
    { 'requests.example.com/dongle': '2', 'ephemeral-storage': '30Gi' },
  );
});
