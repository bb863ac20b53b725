// TokenRequest refusals: a node's credentials cannot mint a token
// for a ServiceAccount its pod does not run as, mirror pods carry no
// credentials at all, and tokens bound to a pod need that pod's own account.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KubeApiError } from '../../kube/client.js';
import { useTestApiServer } from '../../testing/apiserver.js';

const s = useTestApiServer('n1', { authorizationModes: ['Node', 'RBAC'], admissionPlugins: ['NodeRestriction'] });
const refused = (code: number, text: string) => (e: KubeApiError) => {
  assert.equal(e.code, code, e.message);
  assert.ok(e.message.includes(text), e.message);
  return true;
};
const tokenFor = (sa: string, pod: { name: string; uid: string }) => ({
  apiVersion: 'authentication.k8s.io/v1',
  kind: 'TokenRequest',
  spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: pod.name, uid: pod.uid } },
});

test('a node cannot bind a token for another ServiceAccount to its mirror pod, nor to a pod running as someone else', async () => {
  const node = await s.node.create('/api/v1/nodes', { metadata: { name: 'n1' } });
  const mirror = await s.node.create('/api/v1/namespaces/kube-system/pods', {
    metadata: {
      name: 'etcd-n1',
      annotations: { 'kubernetes.io/config.mirror': 'x' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata.uid, controller: true }],
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
  });
  // The bootstrap cluster-admin binding names a ServiceAccount-less group; any SA in kube-system will do as a target.
  await s.api.admin.create('/api/v1/namespaces/kube-system/serviceaccounts', { metadata: { name: 'powerful' } });
  await assert.rejects(
    s.node.create(
      '/api/v1/namespaces/kube-system/serviceaccounts/powerful/token',
      tokenFor('powerful', { name: 'etcd-n1', uid: mirror.metadata.uid }),
    ),
    refused(400, 'cannot bind token for serviceaccount "powerful" to pod running with different serviceaccount name.'),
  );
  const pod = await s.api.admin.create('/api/v1/namespaces/kube-system/pods', {
    metadata: { name: 'app' },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
  });
  await assert.rejects(
    s.node.create(
      '/api/v1/namespaces/kube-system/serviceaccounts/powerful/token',
      tokenFor('powerful', { name: 'app', uid: pod.metadata.uid }),
    ),
    refused(400, 'to pod running with different serviceaccount name.'),
  );
  await assert.rejects(
    s.api.admin.create(
      '/api/v1/namespaces/kube-system/serviceaccounts/powerful/token',
      tokenFor('powerful', { name: 'app', uid: pod.metadata.uid }),
    ),
    refused(400, 'to pod running with different serviceaccount name.'),
  );
  // Its own ServiceAccount works, for the node of a pod bound to it.
  const ok = await s.node.create(
    '/api/v1/namespaces/kube-system/serviceaccounts/default/token',
    tokenFor('default', { name: 'app', uid: pod.metadata.uid }),
  );
  assert.equal(ok.status.token.split('.').length, 3);
  // Unbound tokens are refused for nodes by NodeRestriction.
  await assert.rejects(
    s.node.create('/api/v1/namespaces/kube-system/serviceaccounts/default/token', { spec: {} }),
    refused(403, 'node requested token not bound to a pod'),
  );
});

test('mirror pods may not name a ServiceAccount, a Secret or a ServiceAccountToken projection, whoever creates them', async () => {
  const mirror = (name: string, spec: object) => ({
    metadata: { name, annotations: { 'kubernetes.io/config.mirror': 'x' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }], ...spec },
  });
  await assert.rejects(
    s.api.admin.create('/api/v1/namespaces/default/pods', mirror('m1', { serviceAccountName: 'default' })),
    refused(403, 'pods "m1" is forbidden: a mirror pod may not reference service accounts'),
  );
  await assert.rejects(
    s.api.admin.create(
      '/api/v1/namespaces/default/pods',
      mirror('m2', { volumes: [{ name: 's', secret: { secretName: 'x' } }] }),
    ),
    refused(403, 'pods "m2" is forbidden: a mirror pod may not reference secrets'),
  );
  await assert.rejects(
    s.api.admin.create(
      '/api/v1/namespaces/default/pods',
      mirror('m3', { volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] }),
    ),
    refused(403, 'pods "m3" is forbidden: a mirror pod may not use ServiceAccountToken volume projections'),
  );
});
