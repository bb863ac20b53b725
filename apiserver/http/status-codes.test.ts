// Status codes and messages real clients see for bad patches and delete options, as upstream's v1.37.2 kube-apiserver
// answered the same requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';

const t = useTestApiServer('n1');
const CM = '/api/v1/namespaces/default/configmaps/probe-cm';

test('a JSON patch that fails to apply is 422; one that is not a list is 400; a bad propagationPolicy is 422', async () => {
  await t.api.admin.create('/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'probe-cm' },
    data: { a: '1' },
  });
  const patch = (body: unknown) => rawRequest(t.api, 'PATCH', CM, { body, contentType: 'application/json-patch+json' });
  for (const body of [
    [{ op: 'test', path: '/data/a', value: '2' }],
    [{ op: 'remove', path: '/data/missing' }],
    [{ op: 'bogus', path: '/data/a' }],
    [{ path: '/data/a' }],
  ]) {
    const r = await patch(body);
    assert.equal(r.code, 422, JSON.stringify(body));
    assert.deepEqual(JSON.parse(r.text), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server rejected our request due to an error in our request',
      reason: 'Invalid',
      details: {},
      code: 422,
    });
  }
  const notList = await patch({ op: 'remove' });
  assert.equal(notList.code, 400);
  assert.equal(
    JSON.parse(notList.text).message,
    'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
  );

  const del = await rawRequest(t.api, 'DELETE', `${CM}?propagationPolicy=Bogus`);
  assert.equal(del.code, 422);
  const status = JSON.parse(del.text);
  assert.equal(
    status.message,
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
  );
  assert.deepEqual(status.details.causes, [
    {
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"',
      field: 'propagationPolicy',
    },
  ]);
});

test('a merge patch setting uid to null changes nothing, not even the resourceVersion', async () => {
  const before = await t.api.admin.get(CM);
  const r = await rawRequest(t.api, 'PATCH', CM, {
    body: { metadata: { uid: null } },
    contentType: 'application/merge-patch+json',
  });
  assert.equal(r.code, 200);
  const after = JSON.parse(r.text);
  assert.equal(after.metadata.uid, before.metadata.uid);
  assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
});
