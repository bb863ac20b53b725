import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import protobuf from 'protobufjs';

import { decodeProtobuf } from './protobuf.js';

// Bodies the real kubectl 1.32 sent: `create deployment web --image=x --replicas=3 --port=8080`,
// `create deployment zero --image=x --replicas=0` and `create service nodeport np --tcp=80:http`.
const WEB =
  'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50ErABCh8KA3dlYhIAGgAiACoAMgA4AEIAWgoKA2FwcBIDd2ViEn8IAxIMCgoKA2FwcBIDd2ViGmUKHAoAEgAaACIAKgAyADgAQgBaCgoDYXBwEgN3ZWISRRInCgF4EgF4KgAyCwoAEAAYkD8iACoAQgBqAHIAgAEAiAEAkAEAogEAGgAyAEIASgBSAFgAYABoAIIBAIoBAJoBAMIBACICCgAoADgAGgwIABAAGAAgACgAOAAaACIA';
const ZERO =
  'azhzAAoVCgdhcHBzL3YxEgpEZXBsb3ltZW50EqcBCiEKBHplcm8SABoAIgAqADIAOABCAFoLCgNhcHASBHplcm8SdAgAEg0KCwoDYXBwEgR6ZXJvGlkKHQoAEgAaACIAKgAyADgAQgBaCwoDYXBwEgR6ZXJvEjgSGgoBeBIBeCoAQgBqAHIAgAEAiAEAkAEAogEAGgAyAEIASgBSAFgAYABoAIIBAIoBAJoBAMIBACICCgAoADgAGgwIABAAGAAgACgAOAAaACIA';
const NP =
  'azhzAAoNCgJ2MRIHU2VydmljZRJoCh0KAm5wEgAaACIAKgAyADgAQgBaCQoDYXBwEgJucBJDCh4KBzgwLWh0dHASA1RDUBhQIgoIARAAGgRodHRwKAASCQoDYXBwEgJucBoAIghOb2RlUG9ydDoAQgBSAFoAYABoABoCCgAaACIA';

test('a kubectl Deployment in protobuf decodes to the JSON Go would write', () => {
  assert.deepEqual(decodeProtobuf(Buffer.from(WEB, 'base64')), {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'x', image: 'x', ports: [{ containerPort: 8080 }] }] },
      },
    },
  });
});

test('an explicit replicas: 0 (a pointer in Go) is kept', () => {
  assert.equal((decodeProtobuf(Buffer.from(ZERO, 'base64')).spec as { replicas: number }).replicas, 0);
});

test('a Service with a named targetPort: IntOrString becomes the string', () => {
  assert.deepEqual(decodeProtobuf(Buffer.from(NP, 'base64')), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'np', labels: { app: 'np' } },
    spec: {
      ports: [{ name: '80-http', protocol: 'TCP', port: 80, targetPort: 'http' }],
      selector: { app: 'np' },
      type: 'NodePort',
    },
  });
});

test('a field the schema does not know is a 415, not silently dropped', () => {
  const raw = Buffer.from(WEB, 'base64');
  // Append field 99 (varint 1) to the Deployment message and fix up the envelope's length prefix for raw.
  const env = raw.subarray(4);
  const rawStart = env.indexOf(Buffer.from([0x12]), 2 + env[1]!);
  const inner = env.subarray(rawStart + 3);
  const grown = Buffer.concat([inner, Buffer.from([0x98, 0x06, 0x01])]);
  const len = Buffer.from([(grown.length & 0x7f) | 0x80, grown.length >> 7]);
  const body = Buffer.concat([raw.subarray(0, 4), env.subarray(0, rawStart), Buffer.from([0x12]), len, grown]);
  assert.throws(
    () => decodeProtobuf(body),
    (e: { code: number; message: string }) => e.code === 415 && /fields this apiserver does not decode/.test(e.message),
  );
});

test('kinds without a schema and bodies without the magic are refused', () => {
  assert.throws(() => decodeProtobuf(Buffer.from('not protobuf')), /magic prefix/);
});

// Bodies for other kinds, encoded here from the same upstream-derived schema: the decoder is generic.
const schema = JSON.parse(fs.readFileSync(new URL('../protobuf/schema.json', import.meta.url), 'utf8')) as {
  nested: protobuf.INamespace['nested'];
};
const proto = protobuf.Root.fromJSON({ nested: schema.nested });
function body(apiVersion: string, kind: string, type: string, obj: Record<string, unknown>): Buffer {
  const t = proto.lookupType(type);
  const raw = t.encode(t.fromObject(obj)).finish();
  const unknown = proto.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  return Buffer.concat([
    Buffer.from('k8s\0'),
    unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw })).finish(),
  ]);
}

test('any served kind decodes: pointer false kept, embedded structs inlined, MicroTime, bytes as base64, renamed fields', () => {
  const pod = decodeProtobuf(
    body('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: { name: 'p', creationTimestamp: { seconds: 1764720000 } },
      spec: {
        automountServiceAccountToken: false,
        hostNetwork: false,
        containers: [
          {
            name: 'c',
            image: 'i',
            stdin: false,
            env: [{ name: 'E', valueFrom: { configMapKeyRef: { localObjectReference: { name: 'cm' }, key: 'k' } } }],
            resources: { limits: { cpu: { string: '500m' } } },
          },
        ],
        volumes: [{ name: 'v', volumeSource: { emptyDir: {} } }],
      },
    }),
  );
  assert.deepEqual(pod, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', creationTimestamp: '2025-12-03T00:00:00Z' },
    spec: {
      automountServiceAccountToken: false,
      containers: [
        {
          name: 'c',
          image: 'i',
          env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } }],
          resources: { limits: { cpu: '500m' } },
        },
      ],
      volumes: [{ name: 'v', emptyDir: {} }],
    },
  });
  const lease = decodeProtobuf(
    body('coordination.k8s.io/v1', 'Lease', 'k8s.io.api.coordination.v1.Lease', {
      metadata: { name: 'n' },
      spec: { holderIdentity: 'n', leaseDurationSeconds: 40, renewTime: { seconds: 1764720000, nanos: 123456000 } },
    }),
  );
  assert.deepEqual(lease.spec, {
    holderIdentity: 'n',
    leaseDurationSeconds: 40,
    renewTime: '2025-12-03T00:00:00.123456Z',
  });
  const secret = decodeProtobuf(
    body('v1', 'Secret', 'k8s.io.api.core.v1.Secret', {
      metadata: { name: 's' },
      data: { a: Buffer.from('hi') },
      type: 'Opaque',
    }),
  );
  assert.deepEqual(secret.data, { a: Buffer.from('hi').toString('base64') });
  const tr = decodeProtobuf(
    body('authentication.k8s.io/v1', 'TokenRequest', 'k8s.io.api.authentication.v1.TokenRequest', {
      spec: { audiences: ['a'], boundObjectRef: { kind: 'Pod', name: 'p', uID: 'u1' } },
    }),
  );
  assert.deepEqual(tr.spec, { audiences: ['a'], boundObjectRef: { kind: 'Pod', name: 'p', uid: 'u1' } });
  const del = decodeProtobuf(
    body('v1', 'DeleteOptions', 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions', {
      gracePeriodSeconds: 0,
      propagationPolicy: 'Background',
    }),
  );
  assert.deepEqual(del, {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    gracePeriodSeconds: 0,
    propagationPolicy: 'Background',
  });
});

test('groups whose package is their first label decode: a webhook configuration with its inlined rule', () => {
  const ca = Buffer.from('-----BEGIN CERTIFICATE-----');
  const cfg = decodeProtobuf(
    body(
      'admissionregistration.k8s.io/v1',
      'ValidatingWebhookConfiguration',
      'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration',
      {
        metadata: { name: 'deny' },
        // generated.proto names the field Webhooks (json: webhooks).
        Webhooks: [
          {
            name: 'deny.example.com',
            clientConfig: { service: { namespace: 'ns', name: 'svc', path: '/deny', port: 8443 }, caBundle: ca },
            rules: [{ operations: ['CREATE'], rule: { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] } }],
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    ),
  );
  const w = (cfg.webhooks as Record<string, unknown>[])[0]!;
  assert.deepEqual(w.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }]);
  assert.equal((w.clientConfig as { caBundle: string }).caBundle, ca.toString('base64'));
  const fs1 = decodeProtobuf(
    body('flowcontrol.apiserver.k8s.io/v1', 'FlowSchema', 'k8s.io.api.flowcontrol.v1.FlowSchema', {
      metadata: { name: 'f' },
      spec: { matchingPrecedence: 500 },
    }),
  );
  assert.deepEqual(fs1.spec, { matchingPrecedence: 500 });
});

// A CustomResourceDefinition as apimachinery v0.37.2's protobuf serializer writes it (defaults, enums, items,
// additionalProperties with a schema, x-kubernetes-preserve-unknown-fields).
const CRD = [
  'azhzAAozChdhcGlleHRlbnNpb25zLms4cy5pby92MRIYQ3VzdG9tUmVzb3VyY2VEZWZpbml0aW9uEpEFClEKG2Nyb250YWJzLnN0',
  'YWJsZS5leGFtcGxlLmNvbRIAGgAiACoAMgA4AEIAWiQKEHdlYmhvb2stZTJlLXRlc3QSEHdlYmhvb2stZGlzYWxsb3cSrQQKEnN0',
  'YWJsZS5leGFtcGxlLmNvbRopCghjcm9udGFicxIHY3JvbnRhYiIHQ3JvblRhYioLQ3JvblRhYkxpc3QiCk5hbWVzcGFjZWQ63QMK',
  'AnYxEAEYASLQAwrNAwoAEgAiACoGb2JqZWN0MgA6AFAAYAB6AJABAOoBpQMKBHNwZWMSnAMKABIAIgAqBm9iamVjdDIAOgBQAGAA',
  'egCQAQDqAVMKBGNyb24SSwoAEgAiACoGc3RyaW5nMgA6AEINCgsiKiAqICogKiAqIlAAYAB6AJABAKIBBQoDImEiogENCgsiKiAq',
  'ICogKiAqIqgCALgCAMACAOoBLwoEZnJlZRInCgASACIAKgZvYmplY3QyADoAUABgAHoAkAEAqAIAsAIBuAIAwAIA6gFZCgZsYWJl',
  'bHMSTwoAEgAiACoGb2JqZWN0MgA6AFAAYAB6AJABAPIBKAgBEiQKABIAIgAqBnN0cmluZzIAOgBQAGAAegCQAQCoAgC4AgDAAgCo',
  'AgC4AgDAAgDqAToKCHJlcGxpY2FzEi4KABIAIgAqB2ludGVnZXIyADoAUABZAAAAAAAA8D9gAHoAkAEAqAIAuAIAwAIA6gFUCgR0',
  'YWdzEkwKABIAIgAqBWFycmF5MgA6AFAAYAB6AJABAMIBJgokCgASACIAKgZzdHJpbmcyADoAUABgAHoAkAEAqAIAuAIAwAIAqAIA',
  'uAIAwAIAqAIAuAIAwAIAqAIAuAIAwAIAOABQABoMEggKABIAIgAqACAAGgAiAA==',
].join('');

test('a CustomResourceDefinition decodes with its schema: JSON values and schema-or-array/bool unions', () => {
  const crd = decodeProtobuf(Buffer.from(CRD, 'base64')) as {
    spec: {
      versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } } }[];
    };
  };
  assert.deepEqual(crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties, {
    cron: { type: 'string', default: '* * * * *', enum: ['a', '* * * * *'] },
    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    replicas: { type: 'integer', minimum: 1 },
    tags: { type: 'array', items: { type: 'string' } },
  });
});

test('numbers and bools Go writes even when zero are kept: a sleep of 0 s, a container not ready', () => {
  const pod = decodeProtobuf(
    body('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'i', lifecycle: { preStop: { sleep: { seconds: 0 } } } }] },
      status: { containerStatuses: [{ name: 'c', ready: false, restartCount: 0, image: 'i', imageID: '' }] },
    }),
  ) as { spec: { containers: { lifecycle: unknown }[] }; status: { containerStatuses: unknown[] } };
  assert.deepEqual(pod.spec.containers[0]!.lifecycle, { preStop: { sleep: { seconds: 0 } } });
  assert.deepEqual(pod.status.containerStatuses[0], { name: 'c', ready: false, restartCount: 0, image: 'i' });
});

// A Job with a pod failure policy on exit codes, as apimachinery v0.37.2 writes it: proto2 repeated numbers unpacked.
const JOB = [
  'azhzAAoPCghiYXRjaC92MRIDSm9iEosBChEKAWoSABoAIgAqADIAOABCABJsMlEKEAoAEgAaACIAKgAyADgAQgASPRIaCgFjEgFp',
  'KgBCAGoAcgCAAQCIAQCQAQCiAQAaBU5ldmVyMgBCAEoAUgBYAGAAaACCAQCKAQCaAQDCAQBaFwoVCgdGYWlsSm9iEgoSAkluGAEY',
  'AhgDGgggACgAMAA6ABoAIgA=',
].join('');

test('repeated numbers come unpacked, as proto2 writes them, and decode with no field left over', () => {
  const job = decodeProtobuf(Buffer.from(JOB, 'base64')) as { spec: { podFailurePolicy: unknown } };
  assert.deepEqual(job.spec.podFailurePolicy, {
    rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1, 2, 3] } }],
  });
});

test('an ephemeral container is inlined from its embedded EphemeralContainerCommon (a tag without a name)', () => {
  const pod = decodeProtobuf(
    body('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: { name: 'p' },
      spec: {
        containers: [{ name: 'c', image: 'i' }],
        ephemeralContainers: [{ ephemeralContainerCommon: { name: 'debugger', image: 'b' }, targetContainerName: 'c' }],
      },
    }),
  ) as { spec: { ephemeralContainers: unknown[] } };
  assert.deepEqual(pod.spec.ephemeralContainers, [{ name: 'debugger', image: 'b', targetContainerName: 'c' }]);
});
