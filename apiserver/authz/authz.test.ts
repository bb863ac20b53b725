import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { KubeApiError, KubeClient } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import { startTestApiServer, type TestApiServer } from '../../testing/apiserver.js';

let api: TestApiServer;
let proxy: KubeClient;
let proxyToken = '';

before(async () => {
  api = await startTestApiServer('n1', { authorizationModes: ['Node', 'RBAC'] });
  const cfg = loadKubeconfig(api.srv.kubeconfigs['system:kube-proxy']!);
  proxy = new KubeClient(cfg);
  const dir = path.dirname(api.srv.kubeconfigs['system:kube-proxy']!);
  proxyToken = fs
    .readFileSync(path.join(dir, 'tokens.csv'), 'utf8')
    .split('\n')
    .find((l) => l.includes(',system:kube-proxy,'))!
    .split(',')[0]!;
});
after(async () => {
  proxy.close();
  await api.stop();
});

const forbidden = (msg: string) => (e: unknown) =>
  e instanceof KubeApiError && e.code === 403 && e.message.endsWith(msg);

test('RBAC: bootstrap roles give kube-proxy its reads and nothing else; admins (system:masters) everything', async () => {
  assert.equal((await proxy.get('/api/v1/services')).kind, 'ServiceList');
  assert.equal((await proxy.get('/apis/discovery.k8s.io/v1/endpointslices')).kind, 'EndpointSliceList');
  assert.ok((await proxy.get('/api')).versions, 'discovery for every authenticated user');
  await assert.rejects(
    proxy.get('/api/v1/pods'),
    forbidden(
      'pods is forbidden: User "system:kube-proxy" cannot list resource "pods" in API group "" at the cluster scope',
    ),
  );
  await assert.rejects(
    proxy.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'x' } }),
    forbidden(
      'configmaps is forbidden: User "system:kube-proxy" cannot create resource "configmaps" in API group "" in the namespace "default"',
    ),
  );
  assert.equal((await api.admin.get('/api/v1/pods')).kind, 'PodList');
  const roles = (await api.admin.get('/apis/rbac.authorization.k8s.io/v1/clusterroles')).items.map(
    (r: any) => r.metadata.name,
  );
  for (const r of ['cluster-admin', 'system:node-proxier', 'system:kubelet-api-admin', 'view', 'edit', 'admin'])
    assert.ok(roles.includes(r), r);
  // A new binding takes effect at once.
  await api.admin.create('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
    metadata: { name: 'proxy-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'system:kube-proxy' }],
  });
  assert.equal((await proxy.get('/api/v1/namespaces/default/pods')).kind, 'PodList');
  await assert.rejects(proxy.get('/api/v1/namespaces/kube-system/pods'), /403|forbidden/);
});

test('Node: a kubelet reads pods and writes its Node, but reads a Secret only if a pod bound to it uses it', async () => {
  await api.admin.create('/api/v1/namespaces/default/secrets', { metadata: { name: 'used' }, data: {} });
  await api.admin.create('/api/v1/namespaces/default/secrets', { metadata: { name: 'other' }, data: {} });
  await api.admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'p' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: 'used' } }] }] },
  });
  assert.equal((await api.node.get('/api/v1/pods', { fieldSelector: 'spec.nodeName=n1' })).items.length, 1);
  assert.equal((await api.node.get('/api/v1/namespaces/default/secrets/used')).metadata.name, 'used');
  await assert.rejects(
    api.node.get('/api/v1/namespaces/default/secrets/other'),
    forbidden(
      `secrets "other" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`,
    ),
  );
  await assert.rejects(api.node.get('/api/v1/namespaces/default/secrets'), /cannot list resource "secrets"/);
  // Its pods' ServiceAccount (defaulted to "default"), and no other.
  assert.equal((await api.node.get('/api/v1/namespaces/default/serviceaccounts/default')).metadata.name, 'default');
  await assert.rejects(
    api.node.get('/api/v1/namespaces/kube-system/serviceaccounts/default'),
    /no relationship found between node 'n1' and this object/,
  );
  await api.node.create('/api/v1/nodes', { metadata: { name: 'n1' }, status: {} });
});

test('TokenReview and SubjectAccessReview answer for the kubelet webhook; SelfSubjectAccessReview for kubectl auth can-i', async () => {
  const tr = await api.node.create('/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token: proxyToken },
  });
  assert.deepEqual(tr.status, {
    authenticated: true,
    user: { username: 'system:kube-proxy', groups: ['system:authenticated'] },
    audiences: [],
  });
  const bad = await api.node.create('/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'nope' } });
  assert.equal(bad.status.authenticated, false);
  const sar = (user: string, groups: string[]) =>
    api.node.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: { user, groups, resourceAttributes: { verb: 'get', resource: 'nodes', subresource: 'proxy', name: 'n1' } },
    });
  assert.equal((await sar('system:kube-proxy', ['system:authenticated'])).status.allowed, false);
  const ok = await sar('kube-apiserver-kubelet-client', ['system:authenticated']);
  assert.equal(ok.status.allowed, true);
  assert.match(ok.status.reason, /ClusterRoleBinding "kubeadm:apiserver-kubelet-client"/);
  const self = await proxy.create('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    spec: { resourceAttributes: { verb: 'list', resource: 'services' } },
  });
  assert.equal(self.status.allowed, true);
  await assert.rejects(
    proxy.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      spec: { user: 'x', resourceAttributes: { verb: 'get', resource: 'pods' } },
    }),
    /cannot create resource "subjectaccessreviews"/,
  );
  // A LocalSubjectAccessReview asks the same in one namespace.
  const local = await api.admin.create('/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews', {
    metadata: { namespace: 'default' },
    spec: {
      user: 'system:kube-proxy',
      resourceAttributes: { verb: 'list', resource: 'services', namespace: 'default' },
    },
  });
  assert.equal(local.kind, 'LocalSubjectAccessReview');
  assert.equal(local.status.allowed, true);
});
