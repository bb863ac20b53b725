import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Store } from '../storage/store.js';
import { Api } from './api.js';
import { ApiError } from './errors.js';

const newApi = () => new Api(new Store());
const pods = (api: Api) => api.res('', 'pods');
const podBody = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: name } },
  spec: { containers: [{ name: 'c', image: 'i:1' }], ...extra },
});
const apiErr = (code: number, reason: string) => (e: unknown) =>
  e instanceof ApiError && e.code === code && e.reason === reason;

test('bootstrap: default namespaces, a default ServiceAccount in each, the kubernetes Service', () => {
  const api = newApi();
  const ns = api.list(api.res('', 'namespaces'), undefined).items.map((n: any) => n.metadata.name);
  assert.deepEqual(ns.sort(), ['default', 'kube-node-lease', 'kube-public', 'kube-system']);
  for (const n of ns) assert.ok(api.get(api.res('', 'serviceaccounts'), n, 'default'));
  assert.equal(api.get(api.res('', 'services'), 'default', 'kubernetes').spec.clusterIP, '10.96.0.1');
});

test('create sets uid, creationTimestamp, generation, resourceVersion and pod defaults', () => {
  const api = newApi();
  const p = api.create(pods(api), 'default', podBody('a'));
  assert.match(p.metadata.uid, /^[0-9a-f-]{36}$/);
  assert.match(p.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.equal(p.metadata.generation, 1);
  assert.ok(Number(p.metadata.resourceVersion) > 0);
  assert.equal(p.spec.restartPolicy, 'Always');
  assert.equal(p.spec.serviceAccountName, 'default');
  const mirror = api.create(pods(api), 'default', {
    ...podBody('m'),
    metadata: { name: 'm', annotations: { 'kubernetes.io/config.mirror': 'abc' } },
  });
  assert.equal(mirror.spec.serviceAccountName, undefined, 'mirror pods get no ServiceAccount');
  assert.equal(p.status.phase, 'Pending');
  assert.equal(p.status.qosClass, 'BestEffort');
  const withStatus = api.create(pods(api), 'default', {
    ...podBody('s'),
    status: { phase: 'Running', podIP: '1.2.3.4' },
  });
  assert.deepEqual(withStatus.status, { phase: 'Pending', qosClass: 'BestEffort' }, 'status set on create is dropped');
  const node = api.create(api.res('', 'nodes'), '', {
    metadata: { name: 'n1' },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  });
  assert.equal(node.status.conditions[0].type, 'Ready', 'a Node keeps the status it registers with');
  assert.throws(() => api.create(pods(api), 'default', podBody('a')), apiErr(409, 'AlreadyExists'));
  assert.throws(
    () => api.create(pods(api), 'nope', podBody('b')),
    (e: unknown) => e instanceof ApiError && e.code === 404 && e.message === 'namespaces "nope" not found',
  );
});

test('validation errors are 422 Invalid with field causes', () => {
  const api = newApi();
  assert.throws(
    () =>
      api.create(pods(api), 'default', {
        metadata: { name: 'Bad_Name' },
        spec: { containers: [{ name: 'c' }, { name: 'c', image: 'i' }] },
      }),
    (e: unknown) => {
      assert.ok(e instanceof ApiError && e.code === 422 && e.reason === 'Invalid');
      assert.deepEqual(
        e.details!.causes!.map((c) => c.field),
        ['metadata.name', 'spec.containers[0].image', 'spec.containers[1].name'],
      );
      assert.match(e.message, /^Pod "Bad_Name" is invalid: metadata.name: Invalid value/);
      return true;
    },
  );
  assert.throws(
    () => api.create(pods(api), 'default', { kind: 'Service', metadata: { name: 'x' } }),
    apiErr(400, 'BadRequest'),
  );
});

test('updates: stale resourceVersion is 409 Conflict; status changes only through the subresource', () => {
  const api = newApi();
  const p = api.create(pods(api), 'default', podBody('a'));
  const up = api.update(pods(api), 'default', 'a', {
    ...p,
    metadata: { ...p.metadata, labels: { x: '1' } },
    status: { phase: 'Running' },
  });
  assert.equal(up.status.phase, 'Pending', 'main resource ignores status');
  assert.deepEqual(up.metadata.labels, { x: '1' });
  assert.throws(
    () => api.update(pods(api), 'default', 'a', { ...p, metadata: { ...p.metadata, labels: { y: '1' } } }),
    apiErr(409, 'Conflict'),
  );
  const st = api.update(
    pods(api),
    'default',
    'a',
    { ...up, metadata: { ...up.metadata, labels: { z: '1' } }, status: { phase: 'Running' } },
    'status',
  );
  assert.equal(st.status.phase, 'Running');
  // Upstream's status strategies take the request's labels and annotations (not a pod's owner references).
  assert.deepEqual(st.metadata.labels, { z: '1' });
  assert.throws(
    () => api.update(pods(api), 'default', 'a', { ...st, spec: { ...st.spec, restartPolicy: 'Never' } }),
    apiErr(422, 'Invalid'),
  );
});

test('generation grows on spec changes only', () => {
  const api = newApi();
  const deploy = api.res('apps', 'deployments');
  const d = api.create(deploy, 'default', {
    metadata: { name: 'd' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
    },
  });
  assert.equal(d.spec.replicas, 1);
  const d2 = api.patch(deploy, 'default', 'd', 'merge', { metadata: { labels: { l: '1' } } });
  assert.equal(d2.metadata.generation, 1);
  const d3 = api.patch(deploy, 'default', 'd', 'merge', { spec: { replicas: 3 } });
  assert.equal(d3.metadata.generation, 2);
  // The same spec in another field order (a protobuf body's) or with an empty list added is no change.
  const reordered = Object.fromEntries(Object.entries(d3.spec).reverse());
  const same = api.update(deploy, 'default', 'd', { ...d3, spec: { ...reordered, template: { ...d3.spec.template } } });
  assert.equal(same.metadata.generation, 2);
  // The first deletionTimestamp bumps it too: a graceful pod delete, a delete held by a finalizer.
  const p = api.create(pods(api), 'default', podBody('g', { nodeName: 'n1' }));
  const gone = api.delete(pods(api), 'default', 'g', { gracePeriodSeconds: 60 });
  assert.deepEqual([gone.deleted, gone.object.metadata.generation], [false, p.metadata.generation + 1]);
  const again = api.delete(pods(api), 'default', 'g', { gracePeriodSeconds: 60 });
  assert.equal(again.object.metadata.generation, p.metadata.generation + 1, 'only the first');
  api.patch(deploy, 'default', 'd', 'merge', { metadata: { finalizers: ['example.com/hold'] } });
  assert.equal(api.delete(deploy, 'default', 'd').object.metadata.generation, 3);
});

test('patch: strategic merge on pod status by condition type, with a uid precondition', () => {
  const api = newApi();
  const p = api.create(pods(api), 'default', podBody('a', { nodeName: 'n1' }));
  const out = api.patch(
    pods(api),
    'default',
    'a',
    'strategic',
    {
      metadata: { uid: p.metadata.uid },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [{ name: 'c', ready: true }],
      },
    },
    'status',
  );
  assert.equal(out.status.phase, 'Running');
  const out2 = api.patch(
    pods(api),
    'default',
    'a',
    'strategic',
    { status: { conditions: [{ type: 'Initialized', status: 'True' }] } },
    'status',
  );
  // An item the patch adds goes before the stored ones, as upstream's strategic merge orders them.
  assert.deepEqual(
    out2.status.conditions.map((c: any) => c.type),
    ['Initialized', 'Ready'],
  );
  assert.throws(
    () => api.patch(pods(api), 'default', 'a', 'strategic', { metadata: { uid: 'other' }, status: {} }, 'status'),
    apiErr(409, 'Conflict'),
  );
  assert.throws(
    () => api.patch(pods(api), 'default', 'a', 'json', [{ op: 'replace', path: '/nope/x', value: 1 }]),
    apiErr(422, 'Invalid'),
  );
});

test('graceful pod deletion: unbound goes at once; bound is marked until deleted with grace 0', () => {
  const api = newApi();
  api.create(pods(api), 'default', podBody('free'));
  assert.equal(api.delete(pods(api), 'default', 'free').deleted, true);
  const bound = api.create(
    pods(api),
    'default',
    podBody('bound', { nodeName: 'n1', terminationGracePeriodSeconds: 20 }),
  );
  const r1 = api.delete(pods(api), 'default', 'bound');
  assert.equal(r1.deleted, false);
  assert.equal(r1.object.metadata.deletionGracePeriodSeconds, 20);
  assert.ok(r1.object.metadata.deletionTimestamp);
  assert.equal(api.delete(pods(api), 'default', 'bound').deleted, false, 'a second delete changes nothing');
  assert.throws(
    () => api.delete(pods(api), 'default', 'bound', { gracePeriodSeconds: 0, preconditions: { uid: 'wrong' } }),
    apiErr(409, 'Conflict'),
  );
  assert.equal(
    api.delete(pods(api), 'default', 'bound', { gracePeriodSeconds: 0, preconditions: { uid: bound.metadata.uid } })
      .deleted,
    true,
  );
  assert.throws(() => api.get(pods(api), 'default', 'bound'), apiErr(404, 'NotFound'));
});

test('finalizers hold deletion until the last one is removed', () => {
  const api = newApi();
  const cm = api.res('', 'configmaps');
  api.create(cm, 'default', { metadata: { name: 'c', finalizers: ['example.com/hold'] } });
  const r = api.delete(cm, 'default', 'c');
  assert.equal(r.deleted, false);
  assert.ok(r.object.metadata.deletionTimestamp);
  api.patch(cm, 'default', 'c', 'merge', { metadata: { finalizers: null } });
  assert.throws(() => api.get(cm, 'default', 'c'), apiErr(404, 'NotFound'));
});

test('binding sets nodeName once and records PodScheduled', () => {
  const api = newApi();
  api.create(pods(api), 'default', podBody('a'));
  api.bind('default', 'a', { target: { kind: 'Node', name: 'n1' } });
  const p = api.get(pods(api), 'default', 'a');
  assert.equal(p.spec.nodeName, 'n1');
  assert.equal(p.status.conditions.find((c: any) => c.type === 'PodScheduled').status, 'True');
  assert.throws(() => api.bind('default', 'a', { target: { name: 'n2' } }), apiErr(409, 'Conflict'));
});

test('services get ClusterIPs from the range and NodePorts; deletion frees them', () => {
  const api = newApi();
  const svc = api.res('', 'services');
  const a = api.create(svc, 'default', { metadata: { name: 'a' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } });
  assert.match(a.spec.clusterIP, /^10\.(9[6-9]|1[01][0-9])\./);
  assert.deepEqual(a.spec.clusterIPs, [a.spec.clusterIP]);
  assert.ok(a.spec.ports[0].nodePort >= 30000 && a.spec.ports[0].nodePort <= 32767);
  assert.equal(a.spec.ports[0].targetPort, 80);
  // A protobuf body carries targetPort 0 when the client left it out: defaulted to the port too.
  const z = api.create(svc, 'default', { metadata: { name: 'z' }, spec: { ports: [{ port: 81, targetPort: 0 }] } });
  assert.equal(z.spec.ports[0].targetPort, 81);
  assert.throws(
    () =>
      api.create(svc, 'default', {
        metadata: { name: 'b' },
        spec: { clusterIP: a.spec.clusterIP, ports: [{ port: 80 }] },
      }),
    apiErr(422, 'Invalid'),
  );
  assert.throws(
    () =>
      api.create(svc, 'default', {
        metadata: { name: 'c' },
        spec: { clusterIP: '192.168.1.1', ports: [{ port: 80 }] },
      }),
    (e: unknown) => e instanceof ApiError && /not in the valid range/.test(e.message),
  );
  // Port names are DNS labels: kubectl create service --tcp=80:8080 names its port "80-8080".
  assert.ok(
    api.create(svc, 'default', {
      metadata: { name: 'digits' },
      spec: { ports: [{ name: '80-8080', port: 80, targetPort: 8080 }] },
    }),
  );
  assert.throws(
    () => api.create(svc, 'default', { metadata: { name: 'upper' }, spec: { ports: [{ name: 'Web', port: 80 }] } }),
    (e: unknown) =>
      e instanceof ApiError &&
      /spec\.ports\[0\]\.name: Invalid value: "Web": a lowercase RFC 1123 label/.test(e.message),
  );
  const headless = api.create(svc, 'default', {
    metadata: { name: 'h' },
    spec: { clusterIP: 'None', ports: [{ port: 80 }] },
  });
  assert.equal(headless.spec.clusterIP, 'None');
  api.delete(svc, 'default', 'a');
  assert.ok(
    api.create(svc, 'default', {
      metadata: { name: 'd' },
      spec: { clusterIP: a.spec.clusterIP, ports: [{ port: 80 }] },
    }),
  );
  const kept = api.patch(svc, 'default', 'd', 'merge', { metadata: { labels: { x: 'y' } } });
  assert.equal(kept.spec.clusterIP, a.spec.clusterIP, 'updates keep the ClusterIP');
});

test('list: label and field selectors, unsupported fields, limit/continue paging', () => {
  const api = newApi();
  for (let i = 0; i < 5; i++) api.create(pods(api), 'default', podBody(`p${i}`, i % 2 ? { nodeName: 'n1' } : {}));
  const r = pods(api);
  assert.deepEqual(
    api.list(r, 'default', { fieldSelector: 'spec.nodeName=n1' }).items.map((p: any) => p.metadata.name),
    ['p1', 'p3'],
  );
  assert.deepEqual(
    api.list(r, undefined, { labelSelector: 'app in (p0,p4)' }).items.map((p: any) => p.metadata.name),
    ['p0', 'p4'],
  );
  // Go bools print "false" when unset: e2e's node list selects spec.unschedulable=false.
  assert.equal(api.list(r, 'default', { fieldSelector: 'spec.hostNetwork=false' }).items.length, 5);
  const nodes = api.res('', 'nodes');
  api.create(nodes, '', { metadata: { name: 'ready' } });
  api.create(nodes, '', { metadata: { name: 'cordoned' }, spec: { unschedulable: true } });
  assert.deepEqual(
    api.list(nodes, undefined, { fieldSelector: 'spec.unschedulable=false' }).items.map((n: any) => n.metadata.name),
    ['ready'],
  );
  // Go ints print "0" when unset: ReplicaSets select by status.replicas.
  const rs = api.res('apps', 'replicasets');
  const rsBody = (name: string) => ({
    metadata: { name },
    spec: {
      selector: { matchLabels: { a: name } },
      template: { metadata: { labels: { a: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });
  api.create(rs, 'default', rsBody('empty'));
  assert.deepEqual(
    api
      .list(rs, 'default', { fieldSelector: 'status.replicas=0' })
      .items.map((o: { metadata: { name: string } }) => o.metadata.name),
    ['empty'],
  );
  assert.deepEqual(api.list(r, 'default', { labelSelector: 'n>5' }).items, []);
  assert.throws(
    () => api.list(r, 'default', { fieldSelector: 'spec.bogus=1' }),
    (e: unknown) => e instanceof ApiError && e.code === 400 && e.message === 'field label not supported: spec.bogus',
  );
  assert.throws(() => api.list(r, 'default', { labelSelector: 'a in (' }), apiErr(400, 'BadRequest'));
  const page1 = api.list(r, 'default', { limit: 2 });
  assert.deepEqual(
    page1.items.map((p: any) => p.metadata.name),
    ['p0', 'p1'],
  );
  assert.equal(page1.metadata.remainingItemCount, 3);
  const page2 = api.list(r, 'default', { limit: 2, continue: page1.metadata.continue });
  assert.deepEqual(
    page2.items.map((p: any) => p.metadata.name),
    ['p2', 'p3'],
  );
  const page3 = api.list(r, 'default', { limit: 2, continue: page2.metadata.continue });
  assert.deepEqual(
    page3.items.map((p: any) => p.metadata.name),
    ['p4'],
  );
  assert.equal(page3.metadata.continue, undefined);
});

test("list pages in byte order (etcd's): names the locale orders differently are each listed once; no remaining count under a selector", () => {
  const api = newApi();
  const roles = api.res('rbac.authorization.k8s.io', 'clusterroles');
  const names = ['system:zz', 'system.zz', 'system1', 'System', 'sys-tem', 'systemX'];
  for (const n of names) api.create(roles, '', { metadata: { name: n, labels: { t: 'paging' } } });
  const all = api.list(roles, undefined).items.map((o: any) => o.metadata.name as string);
  assert.deepEqual(all, [...all].sort(), 'the full list is in byte order');
  for (const limit of [1, 2, 4]) {
    const seen: string[] = [];
    let cont: string | undefined;
    do {
      const page = api.list(roles, undefined, { limit, continue: cont, labelSelector: 't=paging' });
      seen.push(...page.items.map((o: any) => o.metadata.name as string));
      assert.equal(page.metadata.remainingItemCount, undefined);
      cont = page.metadata.continue;
    } while (cont);
    assert.deepEqual(seen, [...names].sort(), `limit ${limit}`);
  }
  const first = api.list(roles, undefined, { limit: 1 });
  assert.equal(first.metadata.remainingItemCount, all.length - 1);
});

test("later pages are read as of the first page's resourceVersion; once that is gone, 410 Expired with a token to go on inconsistently", () => {
  const api = new Api(new Store({ historySize: 20 }));
  const r = pods(api);
  for (let i = 0; i < 5; i++) api.create(r, 'default', podBody(`p${i}`));
  const page1 = api.list(r, 'default', { limit: 2 });
  // Between the pages: one listed later is changed, one deleted, one added at the end.
  api.patch(r, 'default', 'p2', 'merge', { metadata: { labels: { changed: 'yes' } } });
  api.delete(r, 'default', 'p3');
  api.create(r, 'default', podBody('p9'));
  const page2 = api.list(r, 'default', { limit: 2, continue: page1.metadata.continue });
  assert.equal(page2.metadata.resourceVersion, page1.metadata.resourceVersion, 'the same snapshot');
  assert.deepEqual(
    page2.items.map((p: any) => [p.metadata.name, p.metadata.labels.changed ?? '']),
    [
      ['p2', ''],
      ['p3', ''],
    ],
  );
  const page3 = api.list(r, 'default', { limit: 2, continue: page2.metadata.continue });
  assert.deepEqual(
    page3.items.map((p: any) => p.metadata.name),
    ['p4'],
  );
  assert.equal(page3.metadata.continue, undefined);
  // The history no longer reaches back to the first page: upstream's 410, and a token for the rest as it is now.
  const again = api.list(r, 'default', { limit: 2 });
  for (let i = 0; i < 30; i++) api.patch(r, 'default', 'p0', 'merge', { metadata: { labels: { n: String(i) } } });
  let expired: ApiError | undefined;
  try {
    api.list(r, 'default', { limit: 2, continue: again.metadata.continue });
  } catch (e) {
    expired = e as ApiError;
  }
  assert.equal(expired?.code, 410);
  const status = expired!.toStatus() as any;
  assert.equal(status.reason, 'Expired');
  assert.match(
    status.message,
    /^The provided continue parameter is too old to display a consistent list result\. You can start a new list without the continue parameter, or use the continue token in this response/,
  );
  const rest = api.list(r, 'default', { limit: 10, continue: status.metadata.continue });
  assert.deepEqual(
    rest.items.map((p: any) => p.metadata.name),
    ['p2', 'p4', 'p9'],
  );
  assert.equal(
    rest.metadata.resourceVersion,
    String(api.list(r, 'default').metadata.resourceVersion),
    'served at the current resourceVersion',
  );
});

test('watch: from an RV replays later events; selector changes become ADDED/DELETED', () => {
  const api = newApi();
  const r = pods(api);
  const a = api.create(r, 'default', podBody('a'));
  const rv = a.metadata.resourceVersion;
  api.create(r, 'default', podBody('b'));
  const events: string[] = [];
  const stop = api.watch(r, 'default', { resourceVersion: rv, labelSelector: 'sel=yes' }, (t, o) =>
    events.push(`${t} ${o.metadata.name}`),
  );
  api.patch(r, 'default', 'a', 'merge', { metadata: { labels: { sel: 'yes' } } });
  api.patch(r, 'default', 'a', 'merge', { metadata: { labels: { other: '1' } } });
  api.patch(r, 'default', 'a', 'merge', { metadata: { labels: { sel: 'no' } } });
  stop();
  assert.deepEqual(events, ['ADDED a', 'MODIFIED a', 'DELETED a']);
  const all: string[] = [];
  const stop2 = api.watch(r, 'default', { resourceVersion: rv }, (t, o) => all.push(`${t} ${o.metadata.name}`));
  stop2();
  assert.deepEqual(
    all,
    ['ADDED b', 'MODIFIED a', 'MODIFIED a', 'MODIFIED a'],
    'b was created after rv, so it replays as ADDED',
  );
});

test('watch from an RV older than the history is 410 Expired', () => {
  const api = new Api(new Store({ historySize: 5 }));
  const r = pods(api);
  const first = api.create(r, 'default', podBody('a'));
  for (let i = 0; i < 10; i++) api.patch(r, 'default', 'a', 'merge', { metadata: { labels: { n: String(i) } } });
  assert.throws(
    () => api.watch(r, 'default', { resourceVersion: first.metadata.resourceVersion }, () => {}),
    apiErr(410, 'Expired'),
  );
});

test('namespace lifecycle: deleting one makes it Terminating (no new content), namespaces/finalize ends it and what is left goes with it', () => {
  const api = newApi();
  const ns = api.res('', 'namespaces');
  const created = api.create(ns, '', { metadata: { name: 'demo' } });
  assert.deepEqual(created.spec.finalizers, ['kubernetes']);
  api.create(pods(api), 'demo', podBody('a'));
  const marked = api.delete(ns, '', 'demo');
  assert.equal(marked.deleted, false);
  assert.equal(api.get(ns, '', 'demo').status.phase, 'Terminating');
  assert.throws(
    () => api.create(pods(api), 'demo', podBody('b')),
    (e: unknown) =>
      e instanceof ApiError &&
      e.code === 403 &&
      e.message ===
        'pods "b" is forbidden: unable to create new content in namespace demo because it is being terminated',
  );
  // A plain update keeps the finalizers and the phase.
  const cur = api.get(ns, '', 'demo');
  const upd = api.update(ns, '', 'demo', {
    ...cur,
    spec: { finalizers: [] },
    metadata: { ...cur.metadata, labels: { x: 'y' } },
  });
  assert.deepEqual([upd.spec.finalizers, upd.status.phase], [['kubernetes'], 'Terminating']);
  api.update(ns, '', 'demo', { ...upd, spec: { finalizers: [] } }, 'finalize');
  assert.throws(
    () => api.get(ns, '', 'demo'),
    (e: unknown) => e instanceof ApiError && e.code === 404,
  );
  assert.equal(api.list(pods(api), 'demo').items.length, 0);
  assert.throws(
    () => api.delete(ns, '', 'kube-system'),
    (e: unknown) => e instanceof ApiError && e.code === 403 && /this namespace may not be deleted/.test(e.message),
  );
});

test('pods/ephemeralcontainers: a strategic merge patch adds a debug container (defaulted); existing ones cannot change or go; workload fields and unknown targets are refused', () => {
  const api = newApi();
  api.create(pods(api), 'default', podBody('a'));
  const dbg = { name: 'debugger', image: 'busybox:1', targetContainerName: 'c', stdin: true };
  const p = api.patch(
    pods(api),
    'default',
    'a',
    'strategic',
    { spec: { ephemeralContainers: [dbg] } },
    'ephemeralcontainers',
  );
  assert.deepEqual(p.spec.ephemeralContainers, [
    {
      ...dbg,
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    },
  ]);
  assert.equal(p.metadata.generation, 2, 'a new ephemeral container is a new generation');
  // A typed client's update sends the existing one back in its own field order, with empty structs: no change.
  const existing = Object.fromEntries(Object.entries(p.spec.ephemeralContainers[0]).reverse());
  const two = api.update(
    pods(api),
    'default',
    'a',
    {
      ...p,
      spec: {
        ...p.spec,
        ephemeralContainers: [
          { ...existing, resources: {}, securityContext: {} },
          { name: 'second', image: 'b' },
        ],
      },
    },
    'ephemeralcontainers',
  );
  assert.equal(two.spec.ephemeralContainers.length, 2);
  const invalid = (patch: unknown, re: RegExp) =>
    assert.throws(
      () => api.patch(pods(api), 'default', 'a', 'merge', patch, 'ephemeralcontainers'),
      (e: unknown) => e instanceof ApiError && e.code === 422 && re.test(e.message),
    );
  invalid({ spec: { ephemeralContainers: [] } }, /existing ephemeral containers "debugger" may not be removed/);
  invalid(
    { spec: { ephemeralContainers: [{ ...p.spec.ephemeralContainers[0], image: 'busybox:2' }] } },
    /existing ephemeral containers "debugger" may not be changed/,
  );
  invalid(
    {
      spec: {
        ephemeralContainers: [
          p.spec.ephemeralContainers[0],
          { name: 'x', image: 'i', resources: {}, ports: [{ containerPort: 80 }], targetContainerName: 'nope' },
        ],
      },
    },
    /spec\.ephemeralContainers\[1\]\.targetContainerName: Not found: "nope".*spec\.ephemeralContainers\[1\]\.ports: Forbidden: cannot be set for an Ephemeral Container/s,
  );
  invalid(
    { spec: { ephemeralContainers: [p.spec.ephemeralContainers[0], { name: 'c', image: 'i' }] } },
    /spec\.ephemeralContainers\[1\]\.name: Duplicate value: "c"/,
  );
  // A plain update cannot touch them.
  assert.throws(
    () => api.patch(pods(api), 'default', 'a', 'merge', { spec: { ephemeralContainers: [] } }),
    (e: unknown) => e instanceof ApiError && e.code === 422,
  );
});

test('a pod patch with empty objects where there were none (Go zero values) changes only the image', () => {
  const api = newApi();
  api.create(pods(api), 'default', podBody('z', { terminationGracePeriodSeconds: 1 }));
  const p = api.patch(pods(api), 'default', 'z', 'strategic', {
    metadata: { labels: { patched: 'yes' }, creationTimestamp: null },
    spec: { containers: [{ name: 'c', image: 'i:2', resources: {} }], terminationGracePeriodSeconds: 1 },
    status: {},
  });
  assert.equal(p.spec.containers[0].image, 'i:2');
  assert.equal(p.metadata.labels.patched, 'yes');
  assert.throws(
    () => api.patch(pods(api), 'default', 'z', 'strategic', { spec: { containers: [{ name: 'c', args: ['x'] }] } }),
    apiErr(422, 'Invalid'),
  );
});

test("a built-in kind's status is {} until set, so a JSON patch can add to it (ResourceClaim allocation)", () => {
  const api = newApi();
  const claims = api.res('resource.k8s.io', 'resourceclaims');
  const c = api.create(claims, 'default', {
    metadata: { name: 'c' },
    spec: { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'x' } }] } },
  });
  assert.deepEqual(c.status, {});
  const p = api.patch(claims, 'default', 'c', 'json', [{ op: 'add', path: '/status/allocation', value: {} }], 'status');
  assert.deepEqual(p.status, { allocation: {} });
});

test('a PodCertificateRequest without a lifetime asks for a day (its v1 default)', () => {
  const api = newApi();
  const pcrs = api.res('certificates.k8s.io', 'podcertificaterequests');
  const pcr = api.create(pcrs, 'default', {
    metadata: { name: 'p' },
    spec: { signerName: 'example.com/s', podName: 'pod', nodeName: 'n1', serviceAccountName: 'default' },
  });
  assert.equal(pcr.spec.maxExpirationSeconds, 86400);
});
