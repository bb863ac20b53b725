// Write semantics real clients rely on: Secret stringData,
// `uid: null` in patches, workload selector validation, no-op writes,
// deletecollection and what DELETE answers per kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { type KObj, KubeApiError } from '../../kube/client.js';
import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';

const s = useTestApiServer('n1');
const refused = (code: number, text: string) => (e: KubeApiError) => {
  assert.equal(e.code, code, e.message);
  assert.ok(e.message.includes(text), e.message);
  return true;
};
const deploy = (name: string, spec: KObj) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    ...spec,
  },
});

test('Secret stringData is merged into data (base64) and never stored', async () => {
  const sec = await s.api.admin.create('/api/v1/namespaces/default/secrets', {
    metadata: { name: 'sd' },
    data: { a: Buffer.from('1').toString('base64') },
    stringData: { b: 'two', a: 'one' },
  });
  assert.deepEqual(sec.data, { a: Buffer.from('one').toString('base64'), b: Buffer.from('two').toString('base64') });
  assert.equal(sec.stringData, undefined);
  const patched = await s.api.admin.patch(
    '/api/v1/namespaces/default/secrets/sd',
    { stringData: { c: 'three' } },
    'merge',
  );
  assert.equal(Buffer.from(patched.data.c, 'base64').toString(), 'three');
});

test('uid: null in a patch is no precondition (get -o yaml | apply); a wrong uid still is', async () => {
  await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'rt' }, data: { a: '1' } });
  const p = await s.api.admin.patch(
    '/api/v1/namespaces/default/configmaps/rt',
    { metadata: { uid: null }, data: { a: '2' } },
    'merge',
  );
  assert.equal(p.data.a, '2');
  assert.match(p.metadata.uid, /^[0-9a-f-]{36}$/);
  await assert.rejects(
    s.api.admin.patch(
      '/api/v1/namespaces/default/configmaps/rt',
      { metadata: { uid: 'other' }, data: { a: '3' } },
      'merge',
    ),
    refused(409, 'Precondition failed: UID in precondition: other'),
  );
});

test('Deployments need a selector that matches the template, replicas >= 0, and keep their selector', async () => {
  await assert.rejects(
    s.api.admin.create('/apis/apps/v1/namespaces/default/deployments', deploy('nosel', {})),
    refused(422, 'spec.selector: Required value'),
  );
  await assert.rejects(
    s.api.admin.create(
      '/apis/apps/v1/namespaces/default/deployments',
      deploy('mismatch', { selector: { matchLabels: { app: 'other' } } }),
    ),
    refused(
      422,
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"mismatch"}: `selector` does not match template `labels`',
    ),
  );
  await assert.rejects(
    s.api.admin.create(
      '/apis/apps/v1/namespaces/default/deployments',
      deploy('neg', { replicas: -1, selector: { matchLabels: { app: 'neg' } } }),
    ),
    refused(422, 'spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
  );
  await s.api.admin.create(
    '/apis/apps/v1/namespaces/default/deployments',
    deploy('ok', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['ok'] }] } }),
  );
  await assert.rejects(
    s.api.admin.patch(
      '/apis/apps/v1/namespaces/default/deployments/ok',
      { spec: { selector: { matchLabels: { app: 'ok' } } } },
      'merge',
    ),
    refused(422, 'spec.selector: Invalid value'),
  );
});

test('a write that changes nothing keeps the resourceVersion', async () => {
  const cm = await s.api.admin.create('/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'same', labels: { a: 'b' } },
    data: { k: 'v' },
  });
  const again = await s.api.admin.update('/api/v1/namespaces/default/configmaps/same', {
    metadata: { name: 'same', labels: { a: 'b' } },
    data: { k: 'v' },
  });
  assert.equal(again.metadata.resourceVersion, cm.metadata.resourceVersion);
  const patched = await s.api.admin.patch(
    '/api/v1/namespaces/default/configmaps/same',
    { data: { k: 'v' } },
    'strategic',
  );
  assert.equal(patched.metadata.resourceVersion, cm.metadata.resourceVersion);
  const changed = await s.api.admin.patch(
    '/api/v1/namespaces/default/configmaps/same',
    { data: { k: 'w' } },
    'strategic',
  );
  assert.notEqual(changed.metadata.resourceVersion, cm.metadata.resourceVersion);
});

test('deletecollection deletes what the selectors match; DELETE answers a Status for most kinds, the object for pods', async () => {
  for (const [name, tier] of [
    ['dc1', 'x'],
    ['dc2', 'x'],
    ['dc3', 'y'],
  ])
    await s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name, labels: { tier: tier! } } });
  const gone = await s.api.admin.delete('/api/v1/namespaces/default/configmaps', undefined, {
    labelSelector: 'tier=x',
  });
  assert.deepEqual(gone.items.map((o: KObj) => o.metadata.name).sort(), ['dc1', 'dc2']);
  const left = await s.api.admin.get('/api/v1/namespaces/default/configmaps', { labelSelector: 'tier' });
  assert.deepEqual(
    left.items.map((o: KObj) => o.metadata.name),
    ['dc3'],
  );
  const st = await s.api.admin.delete('/api/v1/namespaces/default/configmaps/dc3');
  assert.equal(st.kind, 'Status');
  assert.equal(st.status, 'Success');
  assert.equal(st.details.name, 'dc3');
  assert.equal(st.details.kind, 'configmaps');
  await s.api.admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  assert.equal((await s.api.admin.delete('/api/v1/namespaces/default/pods/p')).kind, 'Pod');
});

test('an immutable ConfigMap or Secret keeps its data and stays immutable; a Secret keeps its type', async () => {
  const cms = '/api/v1/namespaces/default/configmaps';
  await s.api.admin.create(cms, { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true });
  await assert.rejects(
    s.api.admin.patch(`${cms}/frozen`, { data: { a: '2' } }, 'merge'),
    refused(422, 'data: Forbidden: field is immutable when `immutable` is set'),
  );
  await assert.rejects(
    s.api.admin.patch(`${cms}/frozen`, { immutable: false }, 'merge'),
    refused(422, 'immutable: Forbidden: field is immutable when `immutable` is set'),
  );
  const labelled = await s.api.admin.patch(`${cms}/frozen`, { metadata: { labels: { a: 'b' } } }, 'merge');
  assert.equal(labelled.metadata.labels.a, 'b', 'metadata still changes');
  await s.api.admin.delete(`${cms}/frozen`);
  const secrets = '/api/v1/namespaces/default/secrets';
  await s.api.admin.create(secrets, { metadata: { name: 'typed' }, type: 'Opaque' });
  await assert.rejects(
    s.api.admin.patch(`${secrets}/typed`, { type: 'kubernetes.io/tls' }, 'merge'),
    refused(422, 'type: Invalid value: "kubernetes.io/tls": field is immutable'),
  );
});

test('IPAddresses are named by a canonical IP and name their parent; flow control and storage kinds are served', async () => {
  const ips = '/apis/networking.k8s.io/v1/ipaddresses';
  const parentRef = { group: '', resource: 'services', namespace: 'default', name: 'web' };
  await s.api.admin.create(ips, { metadata: { name: '192.168.7.1' }, spec: { parentRef } });
  await assert.rejects(
    s.api.admin.create(ips, { metadata: { name: '2001:DB8::1' }, spec: { parentRef } }),
    refused(422, 'must be in canonical form ("2001:db8::1")'),
  );
  await assert.rejects(
    s.api.admin.create(ips, { metadata: { name: '192.168.7.2' }, spec: {} }),
    refused(422, 'spec.parentRef: Required value'),
  );
  for (const path of [
    '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas',
    '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations',
    '/apis/storage.k8s.io/v1/volumeattributesclasses',
    '/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities',
  ])
    assert.deepEqual((await s.api.admin.get(path)).items, [], path);
});

test('apply with fieldValidation=Strict: a repeated YAML key and an undeclared field are refused as upstream words them', async () => {
  const path = '/api/v1/namespaces/default/configmaps/applied?fieldManager=m&fieldValidation=Strict';
  const contentType = 'application/apply-patch+yaml';
  const dup = await rawRequest(s.api, 'PATCH', path, {
    contentType,
    body: '\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: "1"\n  a: "2"\n',
  });
  assert.equal(dup.code, 400);
  assert.match(dup.text, /yaml: unmarshal errors:\\n {2}line 8: key \\"a\\" already set in map/);
  const unknown = await rawRequest(s.api, 'PATCH', path, {
    contentType,
    body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\nbogus: 1\n',
  });
  assert.equal(unknown.code, 400);
  assert.match(
    unknown.text,
    /failed to create typed patch object \(default\/applied; v1, Kind=ConfigMap\): \.bogus: field not declared in schema/,
  );
});
