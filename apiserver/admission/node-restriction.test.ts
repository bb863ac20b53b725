import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { User } from '../api/admission.js';
import { Api } from '../api/api.js';
import { ApiError } from '../api/errors.js';
import { Store } from '../storage/store.js';
import { nodeRestriction } from './node-restriction.js';

const n1: User = { name: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const admin: User = { name: 'kubernetes-admin', groups: ['system:masters'] };

function setup() {
  const api = new Api(new Store(), '10.96.0.0/12', [nodeRestriction]);
  const nodes = api.res('', 'nodes');
  const pods = api.res('', 'pods');
  const leases = api.res('coordination.k8s.io', 'leases');
  const as = <T>(u: User, fn: () => T): T => api.runAs(u, fn);
  const node = as(n1, () =>
    api.create(nodes, '', {
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1', 'node.kubernetes.io/instance-type': 'vm' } },
    }),
  );
  as(admin, () => api.create(nodes, '', { metadata: { name: 'n2' } }));
  const mirror = (extra: Record<string, any> = {}) => ({
    metadata: {
      name: 'web-n1',
      annotations: { 'kubernetes.io/config.mirror': 'h' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata.uid, controller: true }],
      ...(extra.metadata ?? {}),
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i:1' }], ...(extra.spec ?? {}) },
  });
  return { api, nodes, pods, leases, as, node, mirror };
}

const forbidden = (msg: string) => (e: unknown) => {
  assert.ok(e instanceof ApiError, String(e));
  assert.equal(e.code, 403);
  assert.equal(e.reason, 'Forbidden');
  assert.equal(e.message, msg);
  return true;
};

test('a node may create its own mirror pods, and nothing else', () => {
  const { api, pods, as, mirror } = setup();
  const ok = as(n1, () => api.create(pods, 'default', mirror()));
  assert.equal(ok.metadata.name, 'web-n1');
  assert.throws(
    () =>
      as(n1, () =>
        api.create(pods, 'default', {
          metadata: { name: 'x' },
          spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
        }),
      ),
    forbidden(
      'pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    ),
  );
  assert.throws(
    () => as(n1, () => api.create(pods, 'default', mirror({ metadata: { name: 'a' }, spec: { nodeName: 'n2' } }))),
    forbidden('pods "a" is forbidden: node "n1" can only create pods with spec.nodeName set to itself'),
  );
  assert.throws(
    () => as(n1, () => api.create(pods, 'default', mirror({ metadata: { name: 'b', ownerReferences: [] } }))),
    forbidden('pods "b" is forbidden: node "n1" can only create pods with an owner reference set to itself'),
  );
  assert.throws(
    () =>
      as(n1, () =>
        api.create(
          pods,
          'default',
          mirror({
            metadata: {
              name: 'c',
              ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'wrong', controller: true }],
            },
          }),
        ),
      ),
    /node n1 UID mismatch: expected wrong got /,
  );
  assert.throws(
    () =>
      as(n1, () =>
        api.create(pods, 'default', mirror({ metadata: { name: 'd' }, spec: { serviceAccountName: 'default' } })),
      ),
    forbidden('pods "d" is forbidden: node "n1" can not create pods that reference a service account'),
  );
  assert.throws(
    () =>
      as(n1, () =>
        api.create(
          pods,
          'default',
          mirror({ metadata: { name: 'e' }, spec: { volumes: [{ name: 's', secret: { secretName: 's' } }] } }),
        ),
      ),
    /can not create pods that reference secrets/,
  );
  assert.throws(
    () =>
      as(n1, () =>
        api.create(
          pods,
          'default',
          mirror({
            metadata: { name: 'f' },
            spec: { containers: [{ name: 'c', image: 'i', envFrom: [{ configMapRef: { name: 'x' } }] }] },
          }),
        ),
      ),
    /can not create pods that reference configmaps/,
  );
  // Everyone else is not restricted.
  assert.equal(
    as(admin, () =>
      api.create(pods, 'default', { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'i' }] } }),
    ).metadata.name,
    'plain',
  );
});

test('a node may update status of and delete only pods bound to it, and never update pods', () => {
  const { api, pods, as } = setup();
  const mine = as(admin, () =>
    api.create(pods, 'default', {
      metadata: { name: 'mine' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
    }),
  );
  as(admin, () =>
    api.create(pods, 'default', {
      metadata: { name: 'theirs' },
      spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'i' }] },
    }),
  );
  assert.equal(
    as(n1, () => api.patch(pods, 'default', 'mine', 'strategic', { status: { phase: 'Running' } }, 'status')).status
      .phase,
    'Running',
  );
  assert.throws(
    () => as(n1, () => api.patch(pods, 'default', 'theirs', 'strategic', { status: { phase: 'Running' } }, 'status')),
    forbidden(
      'pods "theirs" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
    ),
  );
  assert.throws(
    () => as(n1, () => api.patch(pods, 'default', 'mine', 'merge', { metadata: { labels: { a: 'b' } } })),
    forbidden(
      'pods "mine" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods',
    ),
  );
  assert.throws(
    () => as(n1, () => api.delete(pods, 'default', 'theirs', { gracePeriodSeconds: 0 })),
    forbidden('pods "theirs" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'),
  );
  assert.equal(
    as(n1, () =>
      api.delete(pods, 'default', 'mine', { gracePeriodSeconds: 0, preconditions: { uid: mine.metadata.uid } }),
    ).deleted,
    true,
  );
  assert.throws(
    () => as(n1, () => api.bind('default', 'theirs', { target: { name: 'n1' } })),
    /unexpected pod subresource "binding"/,
  );
});

test('a node may change only its own Node, not its taints nor labels outside the kubelet set, and only its own Lease', () => {
  const { api, nodes, leases, as } = setup();
  assert.throws(
    () =>
      as(n1, () =>
        api.patch(
          nodes,
          '',
          'n2',
          'strategic',
          { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
          'status',
        ),
      ),
    forbidden('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
  );
  assert.ok(
    as(n1, () =>
      api.patch(
        nodes,
        '',
        'n1',
        'strategic',
        { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
        'status',
      ),
    ),
  );
  assert.throws(
    () => as(n1, () => api.patch(nodes, '', 'n1', 'merge', { spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } })),
    forbidden('nodes "n1" is forbidden: node "n1" is not allowed to modify taints'),
  );
  assert.throws(
    () =>
      as(n1, () =>
        api.patch(nodes, '', 'n1', 'merge', { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } }),
      ),
    forbidden('nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane'),
  );
  assert.ok(
    as(n1, () =>
      api.patch(nodes, '', 'n1', 'merge', {
        metadata: { labels: { 'kubelet.kubernetes.io/x': 'y', 'example.com/team': 'a' } },
      }),
    ),
  );
  assert.throws(
    () => as(n1, () => api.create(nodes, '', { metadata: { name: 'n1b' } })),
    /is not allowed to modify node "n1b"/,
  );
  assert.ok(as(n1, () => api.create(leases, 'kube-node-lease', { metadata: { name: 'n1' }, spec: {} })));
  assert.throws(
    () => as(n1, () => api.create(leases, 'kube-node-lease', { metadata: { name: 'n2' }, spec: {} })),
    forbidden(
      'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
    ),
  );
  assert.throws(
    () => as(n1, () => api.create(leases, 'default', { metadata: { name: 'n1' }, spec: {} })),
    forbidden(
      'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system namespace',
    ),
  );
});

test('a node may only request ServiceAccount tokens bound to a pod that runs on it', () => {
  const { api, pods, as } = setup();
  const sa = api.res('', 'serviceaccounts');
  const mine = as(admin, () =>
    api.create(pods, 'default', {
      metadata: { name: 'mine' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
    }),
  );
  const theirs = as(admin, () =>
    api.create(pods, 'default', {
      metadata: { name: 'theirs' },
      spec: { nodeName: 'n2', containers: [{ name: 'c', image: 'i' }] },
    }),
  );
  const req = (ref?: object) => ({ spec: { boundObjectRef: ref } });
  as(n1, () =>
    api.admitSubresource(sa, 'token', 'default', 'default', req({ kind: 'Pod', name: 'mine', uid: mine.metadata.uid })),
  );
  assert.throws(
    () => as(n1, () => api.admitSubresource(sa, 'token', 'default', 'default', req())),
    forbidden('serviceaccounts "default" is forbidden: node requested token not bound to a pod'),
  );
  assert.throws(
    () => as(n1, () => api.admitSubresource(sa, 'token', 'default', 'default', req({ kind: 'Pod', name: 'mine' }))),
    forbidden('serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid'),
  );
  assert.throws(
    () =>
      as(n1, () =>
        api.admitSubresource(
          sa,
          'token',
          'default',
          'default',
          req({ kind: 'Pod', name: 'theirs', uid: theirs.metadata.uid }),
        ),
      ),
    forbidden(
      'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node',
    ),
  );
});
