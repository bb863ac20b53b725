// RBAC escalation prevention, roleRef immutability and aggregated ClusterRoles,
// as upstream: pure rule arithmetic, then the same cases through the apiserver.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type KObj, KubeApiError, KubeClient } from '../../kube/client.js';
import { useTestApiServer } from '../../testing/apiserver.js';
import { aggregatedRules } from '../controllers/clusterrole-aggregation.js';
import { compactRules, compactString, escalationError, missingRules } from './escalation.js';

test('missingRules breaks rules down and checks each piece; wildcards and */sub cover as upstream', () => {
  const owner = [
    { apiGroups: [''], resources: ['pods', '*/scale'], verbs: ['get', 'list'] },
    { nonResourceURLs: ['/api/*'], verbs: ['get'] },
  ];
  assert.deepEqual(missingRules(owner, [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]), []);
  assert.deepEqual(missingRules(owner, [{ apiGroups: [''], resources: ['deployments/scale'], verbs: ['list'] }]), []);
  assert.deepEqual(missingRules(owner, [{ nonResourceURLs: ['/api/v1'], verbs: ['get'] }]), []);
  assert.deepEqual(missingRules(owner, [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }]), [
    { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
  ]);
  // A named rule is covered by an unnamed one, not the other way round.
  assert.deepEqual(
    missingRules(
      [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a'] }],
      [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
    ).length,
    1,
  );
  assert.deepEqual(
    missingRules(
      [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
      [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['a'] }],
    ),
    [],
  );
  // '*' asked for is only covered by '*'.
  assert.equal(
    missingRules(
      [
        {
          apiGroups: [''],
          resources: ['pods'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
      ],
      [{ apiGroups: [''], resources: ['pods'], verbs: ['*'] }],
    ).length,
    1,
  );
});

test('the escalation message is upstream ConfirmNoEscalation: Go-quoted groups, compacted and sorted rules', () => {
  const wanted = [
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] },
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
  ];
  assert.deepEqual(
    compactRules([
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
    ]),
    [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'delete'] }],
  );
  assert.equal(compactString({ nonResourceURLs: ['/x'], verbs: ['get'] }), '{NonResourceURLs:["/x"], Verbs:["get"]}');
  assert.equal(
    escalationError({ name: 'alice', groups: ['team', 'system:authenticated'] }, [], wanted),
    'user "alice" (groups=["team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
  );
  assert.equal(
    escalationError({ name: 'root', groups: [] }, [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], wanted),
    undefined,
  );
});

test('aggregatedRules gathers the rules of matching ClusterRoles in name order, once each, never its own', () => {
  const agg = {
    metadata: { name: 'mon' },
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'x/agg': 'true' } }] },
    rules: [{ verbs: ['*'] }],
  };
  const b = {
    metadata: { name: 'b', labels: { 'x/agg': 'true' } },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  };
  const a = {
    metadata: { name: 'a', labels: { 'x/agg': 'true' } },
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
    ],
  };
  const c = { metadata: { name: 'c' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] };
  assert.deepEqual(aggregatedRules(agg, [agg, b, a, c]), [a.rules[0], a.rules[1]]);
});

const s = useTestApiServer('n1', {
  authorizationModes: ['Node', 'RBAC'],
  admissionPlugins: ['NodeRestriction'],
  controllers: ['serviceaccount-controller', 'clusterrole-aggregation-controller'],
});
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** A client acting as ServiceAccount ns/name (made with a token the admin requests). */
async function as(ns: string, name: string): Promise<KubeClient> {
  await s.api.admin.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } }).catch(() => undefined);
  const tr = await s.api.admin.create(`/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
    spec: { expirationSeconds: 3600 },
  });
  return new KubeClient({ server: s.api.srv.url, insecureSkipTLSVerify: true, token: tr.status.token });
}

const refused = (code: number, text: string) => (e: KubeApiError) => {
  assert.equal(e.code, code, e.message);
  assert.ok(e.message.includes(text), e.message);
  return true;
};

test('a namespace admin cannot bind cluster-admin, nor make a Role with * on *; it can bind what it holds', async () => {
  await s.api.admin.create('/api/v1/namespaces', { metadata: { name: 'team' } });
  await s.api.admin.create(`${RBAC}/namespaces/team/rolebindings`, {
    metadata: { name: 'boss-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
  });
  const boss = await as('team', 'boss');
  try {
    await assert.rejects(
      boss.create(`${RBAC}/namespaces/team/rolebindings`, {
        metadata: { name: 'grab' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
      }),
      refused(
        403,
        'rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user "system:serviceaccount:team:boss" (groups=["system:serviceaccounts" "system:serviceaccounts:team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
      ),
    );
    await assert.rejects(
      boss.create(`${RBAC}/namespaces/team/roles`, {
        metadata: { name: 'all' },
        rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
      }),
      refused(403, 'roles.rbac.authorization.k8s.io "all" is forbidden: user "system:serviceaccount:team:boss"'),
    );
    // What it holds in its namespace it may grant: a Role and a binding of `edit` (aggregated into admin).
    await boss.create(`${RBAC}/namespaces/team/roles`, {
      metadata: { name: 'pods' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    });
    await boss.create(`${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'dev-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ kind: 'User', name: 'dev' }],
    });
    await assert.rejects(
      boss.get(`${RBAC}/clusterrolebindings`),
      refused(403, 'cannot list resource "clusterrolebindings"'),
    );
  } finally {
    boss.close();
  }
});

test('a subject that may only create ClusterRoleBindings cannot bind itself cluster-admin; with bind on that role it can', async () => {
  await s.api.admin.create(`${RBAC}/clusterroles`, {
    metadata: { name: 'crb-writer' },
    rules: [
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterrolebindings'],
        verbs: ['create', 'patch', 'update'],
      },
    ],
  });
  await s.api.admin.create(`${RBAC}/clusterrolebindings`, {
    metadata: { name: 'crb-writer' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crb-writer' },
    subjects: [{ kind: 'ServiceAccount', name: 'binder', namespace: 'default' }],
  });
  const binder = await as('default', 'binder');
  const grab = {
    metadata: { name: 'binder-root' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'binder', namespace: 'default' }],
  };
  try {
    await assert.rejects(
      binder.create(`${RBAC}/clusterrolebindings`, grab),
      refused(
        403,
        'clusterrolebindings.rbac.authorization.k8s.io "binder-root" is forbidden: user "system:serviceaccount:default:binder"',
      ),
    );
    await assert.rejects(
      binder.create(`${RBAC}/clusterrolebindings`, { ...grab, roleRef: { ...grab.roleRef, name: 'no-such-role' } }),
      refused(404, 'clusterroles.rbac.authorization.k8s.io "no-such-role" not found'),
    );
    // roleRef may not change, whoever asks.
    await assert.rejects(
      s.api.admin.patch(`${RBAC}/clusterrolebindings/crb-writer`, { roleRef: { name: 'cluster-admin' } }, 'merge'),
      refused(
        422,
        'ClusterRoleBinding.rbac.authorization.k8s.io "crb-writer" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"cluster-admin"}: cannot change roleRef',
      ),
    );
    await s.api.admin.create(`${RBAC}/clusterroles`, {
      metadata: { name: 'bind-admin' },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles'],
          verbs: ['bind'],
          resourceNames: ['view'],
        },
      ],
    });
    await s.api.admin.create(`${RBAC}/clusterrolebindings`, {
      metadata: { name: 'bind-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bind-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'binder', namespace: 'default' }],
    });
    await binder.create(`${RBAC}/clusterrolebindings`, {
      ...grab,
      metadata: { name: 'binder-view' },
      roleRef: { ...grab.roleRef, name: 'view' },
    });
    await assert.rejects(
      binder.create(`${RBAC}/clusterrolebindings`, grab),
      refused(403, 'is attempting to grant RBAC permissions not currently held'),
    );
  } finally {
    binder.close();
  }
});

test('escalate lets a subject write roles beyond its own rights; aggregated ClusterRoles need full authority and follow their parts', async () => {
  await s.api.admin.create(`${RBAC}/clusterroles`, {
    metadata: { name: 'role-writer' },
    rules: [
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles'],
        verbs: ['create', 'update', 'escalate'],
      },
    ],
  });
  await s.api.admin.create(`${RBAC}/clusterrolebindings`, {
    metadata: { name: 'role-writer' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'role-writer' },
    subjects: [{ kind: 'ServiceAccount', name: 'writer', namespace: 'default' }],
  });
  const writer = await as('default', 'writer');
  try {
    await writer.create(`${RBAC}/clusterroles`, {
      metadata: { name: 'big' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    });
  } finally {
    writer.close();
  }
  const boss = await as('team', 'boss');
  try {
    await assert.rejects(
      boss.create(`${RBAC}/clusterroles`, {
        metadata: { name: 'agg' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
      }),
      refused(403, 'cannot create resource "clusterroles"'),
    );
  } finally {
    boss.close();
  }
  // Admin, edit and view are aggregated: a labelled ClusterRole joins them.
  const view = await s.api.admin.get(`${RBAC}/clusterroles/view`);
  assert.deepEqual(view.aggregationRule, {
    clusterRoleSelectors: [{ matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }],
  });
  assert.ok((view.rules as KObj[]).some((r) => r.resources.includes('pods') && r.verbs.includes('list')));
  await s.api.admin.create(`${RBAC}/clusterroles`, {
    metadata: { name: 'widgets-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
    rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get'] }],
  });
  const { waitFor } = await import('../../testing/wait.js');
  for (const name of ['view', 'edit', 'admin']) {
    await waitFor(
      async () =>
        ((await s.api.admin.get(`${RBAC}/clusterroles/${name}`)).rules as KObj[]).some((r) =>
          r.resources?.includes('widgets'),
        ),
      5000,
      20,
      `${name} aggregates widgets`,
    );
  }
});

test('impersonation needs the impersonate verb on each identity asked for; then the request runs as that identity', async () => {
  const https = await import('node:https');
  const boss = await as('team', 'boss');
  const tr = await s.api.admin.create('/api/v1/namespaces/team/serviceaccounts/boss/token', {
    spec: { expirationSeconds: 3600 },
  });
  boss.close();
  const get = (path: string, headers: Record<string, string | string[]>): Promise<{ code: number; body: KObj }> =>
    new Promise((resolve, reject) => {
      const req = https.request(
        `${s.api.srv.url}${path}`,
        { rejectUnauthorized: false, headers: { Authorization: `Bearer ${tr.status.token}`, ...headers } },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ code: res.statusCode ?? 0, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.end();
    });
  const before = await get('/api/v1/namespaces/team/pods', { 'Impersonate-User': 'kubernetes-admin' });
  assert.equal(before.code, 403);
  assert.equal(
    before.body.message,
    'users "kubernetes-admin" is forbidden: User "system:serviceaccount:team:boss" cannot impersonate resource "users" in API group "" at the cluster scope',
  );
  const g = await get('/api/v1/nodes', { 'Impersonate-User': 'dev', 'Impersonate-Group': 'system:masters' });
  assert.equal(g.code, 403);
  await s.api.admin.create(`${RBAC}/clusterroles`, {
    metadata: { name: 'be-dev' },
    rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['dev'] }],
  });
  await s.api.admin.create(`${RBAC}/clusterrolebindings`, {
    metadata: { name: 'boss-be-dev' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'be-dev' },
    subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
  });
  // As "dev" it has dev's rights (edit in team, bound above): pods yes, nodes no.
  const asDev = await get('/api/v1/namespaces/team/pods', { 'Impersonate-User': 'dev' });
  assert.equal(asDev.code, 200, JSON.stringify(asDev.body));
  const nodes = await get('/api/v1/nodes', { 'Impersonate-User': 'dev' });
  assert.equal(
    nodes.body.message,
    'nodes is forbidden: User "dev" cannot list resource "nodes" in API group "" at the cluster scope',
  );
  // Groups still need their own grant.
  assert.equal(
    (await get('/api/v1/nodes', { 'Impersonate-User': 'dev', 'Impersonate-Group': 'system:masters' })).body.message,
    'groups "system:masters" is forbidden: User "system:serviceaccount:team:boss" cannot impersonate resource "groups" in API group "" at the cluster scope',
  );
  assert.equal((await get('/api/v1/nodes', { 'Impersonate-Group': 'system:masters' })).code, 400);
});

test('a WebSocket exec (a GET upgrade) needs create on pods/exec as well as get', async () => {
  await s.api.admin.create(`${RBAC}/namespaces/team/roles`, {
    metadata: { name: 'exec-get' },
    rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['get'] }],
  });
  await s.api.admin.create(`${RBAC}/namespaces/team/rolebindings`, {
    metadata: { name: 'exec-get' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'exec-get' },
    subjects: [{ kind: 'ServiceAccount', name: 'execer', namespace: 'team' }],
  });
  await s.api.admin.create('/api/v1/namespaces/team/serviceaccounts', { metadata: { name: 'execer' } });
  const tr = await s.api.admin.create('/api/v1/namespaces/team/serviceaccounts/execer/token', {
    spec: { expirationSeconds: 3600 },
  });
  const https = await import('node:https');
  const answer = await new Promise<string>((resolve, reject) => {
    const req = https.request(`${s.api.srv.url}/api/v1/namespaces/team/pods/p/exec?command=sh&stdout=1`, {
      rejectUnauthorized: false,
      headers: {
        Authorization: `Bearer ${tr.status.token}`,
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Protocol': 'v4.channel.k8s.io',
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(`${res.statusCode} ${text}`));
    });
    req.on('upgrade', () => resolve('upgraded'));
    req.on('error', reject);
    req.end();
  });
  assert.equal(answer.split(' ')[0], '403');
  assert.equal(
    JSON.parse(answer.slice(4)).message,
    'pods "p" is forbidden: User "system:serviceaccount:team:execer" cannot create resource "pods/exec" in API group "" in the namespace "team"',
  );
});
