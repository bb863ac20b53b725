// OpenAPI documents and server-side field validation:
// unknown and duplicate fields reported in upstream's order and wording
// (cases after upstream's field_validation_test), the v3 documents
// self-contained, the v2 protobuf form readable.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';
import { openapiV2Doc, openapiV3Doc, openapiV3Root } from './documents.js';
import { dropUnknownFields, fieldMessages, scanJsonKeys } from './fields.js';
import { definitionOf, DEFINITIONS, resolve } from './schema.js';
import { decodeV2Document } from './v2-protobuf.js';

const deployment = DEFINITIONS[definitionOf('apps/v1', 'Deployment')!];

// A Deployment with the mistakes upstream's test body has: repeated keys, unknown fields at three depths.
const BODY = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "NAME",
    "name": "NAME",
    "unknownMeta": "metaVal",
    "labels": {"app": "nginx"}
  },
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "containers": [{
          "name": "nginx",
          "image": "nginx:latest",
          "unknownNested": "val1",
          "imagePullPolicy": "Always",
          "imagePullPolicy": "Never"
        }]
      }
    }
  }
}`;
const STRICT =
  'strict decoding error: duplicate field "metadata.name", unknown field "metadata.unknownMeta", unknown field "spec.unknown1", unknown field "spec.unknownDupe", duplicate field "spec.paused", unknown field "spec.template.spec.containers[0].unknownNested", duplicate field "spec.template.spec.containers[0].imagePullPolicy"';

test('unknown fields are dropped with their paths; maps, free-form objects and known fields stay', () => {
  const o = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'x',
      labels: { any: 'key' },
      managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': { 'f:anything': {} } } }],
      bogus: 1,
    },
    spec: {
      replicas: 1,
      template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, nodeport: 3 }] }] } },
    },
  };
  assert.deepEqual(dropUnknownFields(o, deployment), [
    'metadata.bogus',
    'spec.template.spec.containers[0].ports[0].nodeport',
  ]);
  assert.deepEqual(o.metadata.labels, { any: 'key' });
  assert.deepEqual(o.metadata.managedFields[0]!.fieldsV1, { 'f:spec': { 'f:anything': {} } });
  assert.deepEqual(o.spec.template.spec.containers[0]!.ports, [{ containerPort: 80 }]);
  assert.equal((o.metadata as Record<string, unknown>).bogus, undefined);
});

test('repeated JSON keys are found with their paths (array indexes included); reports follow upstream order', () => {
  const scan = scanJsonKeys(BODY);
  assert.deepEqual(scan.duplicates, [
    'metadata.name',
    'spec.unknownDupe',
    'spec.paused',
    'spec.template.spec.containers[0].imagePullPolicy',
  ]);
  assert.deepEqual(scanJsonKeys('{"a":[{"b":1},{"b":2,"b":3}],"s":"{\\"a\\":1,\\"a\\":2}"}').duplicates, ['a[1].b']);
  const o = JSON.parse(BODY) as Record<string, unknown>;
  const unknown = dropUnknownFields(o, deployment);
  // As upstream for typed objects: a field both unknown and repeated is reported as unknown only.
  const dupes = scan.duplicates.filter((d) => !unknown.includes(d));
  assert.equal(
    `strict decoding error: ${fieldMessages({ unknown, duplicates: dupes, firstAt: scan.firstAt }).join(', ')}`,
    STRICT,
  );
  // Patches: duplicates first, then unknown fields in sorted order.
  assert.deepEqual(
    fieldMessages({
      unknown: ['spec.unknown1', 'spec.template.spec.containers[0].unknownNested'],
      duplicates: ['spec.paused'],
    }),
    [
      'duplicate field "spec.paused"',
      'unknown field "spec.template.spec.containers[0].unknownNested"',
      'unknown field "spec.unknown1"',
    ],
  );
});

test('every v3 document is self-contained and carries kinds, list types and merge keys', () => {
  const root = openapiV3Root() as { paths: Record<string, { serverRelativeURL: string }> };
  assert.ok(root.paths['api/v1'] && root.paths['apis/apps/v1'] && root.paths['apis/rbac.authorization.k8s.io/v1']);
  for (const gv of Object.keys(root.paths)) {
    const doc = JSON.parse(openapiV3Doc(undefined, gv)!.body) as { components: { schemas: Record<string, unknown> } };
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    for (const r of refs) assert.ok(doc.components.schemas[r], `${gv}: dangling $ref ${r}`);
  }
  const core = JSON.parse(openapiV3Doc(undefined, 'api/v1')!.body) as {
    components: { schemas: Record<string, Record<string, unknown>> };
  };
  assert.deepEqual(core.components.schemas['io.k8s.api.core.v1.Pod']!['x-kubernetes-group-version-kind'], [
    { group: '', kind: 'Pod', version: 'v1' },
  ]);
  const containers = (
    core.components.schemas['io.k8s.api.core.v1.PodSpec']!.properties as Record<string, Record<string, unknown>>
  ).containers!;
  assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
  assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
  assert.equal(
    resolve({ $ref: '#/definitions/io.k8s.api.core.v1.PodSpec' })?.properties?.containers?.items?.$ref,
    '#/definitions/io.k8s.api.core.v1.Container',
  );
});

test('the v2 protobuf document decodes back to the same definitions, with group-version-kinds as YAML', () => {
  const doc = openapiV2Doc();
  const json = JSON.parse(doc.body) as { definitions: Record<string, unknown> };
  const pb = decodeV2Document(doc.protobuf) as {
    swagger: string;
    definitions: {
      additionalProperties: {
        name: string;
        value: { vendorExtension?: { name: string; value: { yaml: string } }[]; properties?: unknown };
      }[];
    };
  };
  assert.equal(pb.swagger, '2.0');
  const names = pb.definitions.additionalProperties.map((d) => d.name);
  assert.deepEqual(names, Object.keys(json.definitions));
  const svc = pb.definitions.additionalProperties.find((d) => d.name === 'io.k8s.api.core.v1.Service')!;
  const gvk = svc.value.vendorExtension!.find((e) => e.name === 'x-kubernetes-group-version-kind')!;
  assert.deepEqual(JSON.parse(gvk.value.yaml), [{ group: '', kind: 'Service', version: 'v1' }]);
});

const s = useTestApiServer('n1');

test('fieldValidation over HTTP: Strict refuses with upstream wording, Warn (the default) drops and warns, Ignore drops silently', async () => {
  const post = (q: string, name: string) =>
    rawRequest(s.api, 'POST', `/apis/apps/v1/namespaces/default/deployments${q}`, {
      body: BODY.replaceAll('NAME', name),
    });
  const strict = await post('?fieldValidation=Strict', 'strict');
  assert.equal(strict.code, 400);
  assert.equal(
    JSON.parse(strict.text).message,
    `Deployment in version "v1" cannot be handled as a Deployment: ${STRICT}`,
  );
  const warn = await post('', 'warn');
  assert.equal(warn.code, 201);
  assert.deepEqual(warn.headers.warning?.split(/, (?=299)/), [
    '299 - "duplicate field \\"metadata.name\\""',
    '299 - "unknown field \\"metadata.unknownMeta\\""',
    '299 - "unknown field \\"spec.unknown1\\""',
    '299 - "unknown field \\"spec.unknownDupe\\""',
    '299 - "duplicate field \\"spec.paused\\""',
    '299 - "unknown field \\"spec.template.spec.containers[0].unknownNested\\""',
    '299 - "duplicate field \\"spec.template.spec.containers[0].imagePullPolicy\\""',
  ]);
  const stored = await s.api.admin.get('/apis/apps/v1/namespaces/default/deployments/warn');
  assert.equal(stored.spec.unknown1, undefined);
  assert.equal(stored.spec.paused, false);
  assert.equal(stored.spec.template.spec.containers[0].imagePullPolicy, 'Never');
  const ignore = await post('?fieldValidation=Ignore', 'ignore');
  assert.equal(ignore.code, 201);
  assert.equal(ignore.headers.warning, undefined);
  const patch = await rawRequest(
    s.api,
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/warn?fieldValidation=Strict',
    { contentType: 'application/merge-patch+json', body: '{"spec":{"paused":true,"paused":false,"bogus":1}}' },
  );
  assert.equal(patch.code, 400);
  assert.equal(
    JSON.parse(patch.text).message,
    'strict decoding error: duplicate field "spec.paused", unknown field "spec.bogus"',
  );
  const bad = await post('?fieldValidation=strict', 'x');
  assert.equal(
    JSON.parse(bad.text).message,
    'fieldValidation: Unsupported value: "strict": supported values: "Ignore", "Strict", "Warn"',
  );
});

test('/openapi/v2 answers JSON or, when asked, protobuf; /openapi/v3 documents have ETags', async () => {
  const json = await rawRequest(s.api, 'GET', '/openapi/v2');
  assert.equal(json.headers['content-type'], 'application/json');
  assert.equal(JSON.parse(json.text).swagger, '2.0');
  const pb = await rawRequest(s.api, 'GET', '/openapi/v2', {
    accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  });
  assert.equal(pb.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
  assert.equal((decodeV2Document(pb.body) as { swagger: string }).swagger, '2.0');
  const v3 = await rawRequest(s.api, 'GET', '/openapi/v3/apis/apps/v1');
  assert.ok(v3.headers.etag);
  assert.ok(JSON.parse(v3.text).components.schemas['io.k8s.api.apps.v1.Deployment']);
});
