import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ANN_CONFIG_HASH, ANN_CONFIG_SOURCE, parseManifest } from './manifest.js';

const pod = (name = 'web', extra = ''): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {app: web}
spec:
${extra}  containers:
  - name: c
    image: reg/app:1
`;

test('static pod name, namespace, UID, hash and source follow upstream', () => {
  const r = parseManifest(Buffer.from(pod()), '/etc/kubernetes/manifests/web.yaml', 'file', 'Node-A');
  assert.deepEqual(r.errors, []);
  const p = r.pods[0]!;
  assert.equal(p.metadata!.name, 'web-node-a');
  assert.equal(p.metadata!.namespace, 'default');
  assert.match(p.metadata!.uid!, /^[0-9a-f]{32}$/);
  assert.equal(p.metadata!.annotations![ANN_CONFIG_HASH], p.metadata!.uid);
  assert.equal(p.metadata!.annotations![ANN_CONFIG_SOURCE], 'file');
  assert.equal(p.spec!.nodeName, 'Node-A');
  assert.deepEqual(p.spec!.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]);
  assert.equal(p.spec!.restartPolicy, 'Always');
  assert.equal(p.spec!.terminationGracePeriodSeconds, 30);
  assert.equal(p.spec!.containers[0]!.imagePullPolicy, 'IfNotPresent');
  assert.equal(p.status!.phase, 'Pending');
});

test('the UID depends on node, path and content, and nothing else', () => {
  const uid = (content: string, path: string, node: string) =>
    parseManifest(Buffer.from(content), path, 'file', node).pods[0]!.metadata!.uid;
  const base = uid(pod(), '/m/web.yaml', 'a');
  assert.equal(uid(pod(), '/m/web.yaml', 'a'), base);
  assert.notEqual(uid(pod(), '/m/other.yaml', 'a'), base);
  assert.notEqual(uid(pod(), '/m/web.yaml', 'b'), base);
  assert.notEqual(uid(pod('web', '  hostNetwork: true\n'), '/m/web.yaml', 'a'), base);
  // Same content as JSON decodes to the same object, so the same UID.
  const json = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: { containers: [{ name: 'c', image: 'reg/app:1' }] },
  });
  assert.equal(uid(json, '/m/web.yaml', 'a'), base);
});

test('a PodList yields each pod; :latest defaults to Always', () => {
  const list = {
    apiVersion: 'v1',
    kind: 'PodList',
    items: [
      { metadata: { name: 'a' }, spec: { containers: [{ name: 'x', image: 'img' }] } },
      { metadata: { name: 'b' }, spec: { containers: [{ name: 'x', image: 'img:latest' }] } },
    ],
  };
  const r = parseManifest(Buffer.from(JSON.stringify(list)), '/m/l.json', 'file', 'n');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.pods.map((p) => p.metadata!.name),
    ['a-n', 'b-n'],
  );
  assert.equal(r.pods[1]!.spec!.containers[0]!.imagePullPolicy, 'Always');
});

test('an empty file is an empty set, not an error', () => {
  assert.deepEqual(parseManifest(Buffer.from('  \n'), '/m/e.yaml', 'file', 'n'), { pods: [], errors: [] });
});

test('bad input gives one clear message naming file, object and field', () => {
  const err = (content: string | Buffer) =>
    parseManifest(Buffer.isBuffer(content) ? content : Buffer.from(content), '/m/f.yaml', 'file', 'n').errors;
  assert.match(err('kind: Pod\nmetadata: {name: [\n')[0]!, /^\/m\/f\.yaml: invalid YAML\/JSON at line \d+, column \d+/);
  assert.deepEqual(err('apiVersion: v1\nkind: Deployment\n'), [
    '/m/f.yaml: kind: Unsupported value: "Deployment": a manifest holds a Pod or a PodList',
  ]);
  assert.deepEqual(err('apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {}\n'), [
    '/m/f.yaml: Pod "x": spec.containers: Required value',
  ]);
  assert.deepEqual(err('apiVersion: v1\nkind: Pod\nspec: {containers: [{name: a, image: i}]}\n'), [
    '/m/f.yaml: Pod: metadata: Required value',
  ]);
  assert.deepEqual(err(pod('Bad_Name')), [
    `/m/f.yaml: Pod "Bad_Name": metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
  ]);
  assert.deepEqual(
    err('kind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - {name: a, image: i}\n  - {name: a, image: i}\n'),
    ['/m/f.yaml: Pod "x": spec.containers[1].name: Duplicate value: "a"'],
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec:\n  initContainers: [{name: a, image: i}]\n  containers: [{name: a, image: i}]\n',
    ),
    ['/m/f.yaml: Pod "x": spec.containers[0].name: Duplicate value: "a"'],
  );
  assert.deepEqual(err('kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a}]}\n'), [
    '/m/f.yaml: Pod "x": spec.containers[0].image: Required value',
  ]);
  assert.deepEqual(err('kind: Pod\nmetadata: {name: x}\nspec: {containers: "a"}\n'), [
    '/m/f.yaml: Pod "x": spec.containers: Invalid type: expected array, got string',
  ]);
  assert.deepEqual(
    err('kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a, image: i, ports: [{containerPort: 70000}]}]}\n'),
    [
      '/m/f.yaml: Pod "x": spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ],
  );
  assert.deepEqual(
    err('kind: Pod\nmetadata: {name: x}\nspec: {restartPolicy: Sometimes, containers: [{name: a, image: i}]}\n'),
    [
      '/m/f.yaml: Pod "x": spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ],
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: a, image: i, resources: {limits: {memory: lots}}}]}\n',
    )[0]?.startsWith('/m/f.yaml: Pod "x": spec.containers[0].resources.limits[memory]: Invalid value: "lots"'),
    true,
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {volumes: [{name: v, secret: {secretName: s}}], containers: [{name: a, image: i}]}\n',
    ),
    ['/m/f.yaml: Pod "x": spec.volumes[0].secret: Forbidden: static pods cannot reference Secrets'],
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {volumes: [{name: v, nfs: {server: s}}], containers: [{name: a, image: i}]}\n',
    ),
    [
      '/m/f.yaml: Pod "x": spec.volumes[0].nfs: volume type not supported by this kubelet yet (supported: emptyDir, hostPath, downwardAPI)',
    ],
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {serviceAccountName: robot, containers: [{name: a, image: i, env: [{name: E, valueFrom: {configMapKeyRef: {name: c, key: k}}}]}]}\n',
    ),
    [
      '/m/f.yaml: Pod "x": spec.containers[0].env[0].valueFrom.configMapKeyRef: Forbidden: static pods cannot reference ConfigMaps',
      '/m/f.yaml: Pod "x": spec.serviceAccountName: Forbidden: static pods cannot reference ServiceAccounts',
    ],
  );
  assert.deepEqual(err(Buffer.from([0x6b, 0xff, 0xfe])), ['/m/f.yaml: not valid UTF-8']);
  assert.match(err(Buffer.alloc(3 * 1024 * 1024 + 1, 0x20))[0]!, /larger than the 3145728-byte limit/);
  assert.match(err(`${pod('a')}---\n${pod('b')}`)[0]!, /holds 2 YAML documents/);
  assert.deepEqual(err('- a\n- b\n'), ['/m/f.yaml: expected a Pod or PodList object, got array']);
});

test('a uid, subPath or hostPath that would leave the kubelet directories is refused, naming the field', () => {
  const err = (content: string) => parseManifest(Buffer.from(content), '/m/f.yaml', 'file', 'n').errors;
  assert.deepEqual(
    err('kind: Pod\nmetadata: {name: x, uid: ../../canary}\nspec: {containers: [{name: a, image: i}]}\n'),
    [
      `/m/f.yaml: Pod "x": metadata.uid: Invalid value: "../../canary": must be a UUID or up to 128 letters, digits, '-', '_' or '.' starting with a letter or digit`,
    ],
  );
  assert.equal(err('kind: Pod\nmetadata: {name: x, uid: .}\nspec: {containers: [{name: a, image: i}]}\n').length, 1);
  assert.deepEqual(err('kind: Pod\nmetadata: {name: x, uid: 12345}\nspec: {containers: [{name: a, image: i}]}\n'), [
    '/m/f.yaml: Pod "x": metadata.uid: Invalid type: expected string, got number',
  ]);
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {volumes: [{name: v, emptyDir: {}}], containers: [{name: a, image: i, volumeMounts: [{name: v, mountPath: /m, subPath: ../../etc}]}]}\n',
    ),
    [
      `/m/f.yaml: Pod "x": spec.containers[0].volumeMounts[0].subPath: Invalid value: "../../etc": must not contain '..'`,
    ],
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {volumes: [{name: v, hostPath: {path: etc}}], containers: [{name: a, image: i}]}\n',
    ),
    ['/m/f.yaml: Pod "x": spec.volumes[0].hostPath.path: Invalid value: "etc": must be an absolute path'],
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x}\nspec: {volumes: [{name: ../v, emptyDir: {}}], containers: [{name: a, image: i}]}\n',
    )[0]?.startsWith('/m/f.yaml: Pod "x": spec.volumes[0].name: Invalid value: "../v"'),
    true,
  );
  assert.equal(
    err(
      'kind: Pod\nmetadata: {name: x, labels: {"bad key": v}}\nspec: {containers: [{name: a, image: i}]}\n',
    )[0]?.includes('metadata.labels: Invalid value: "bad key"'),
    true,
  );
  assert.deepEqual(
    err(
      'kind: Pod\nmetadata: {name: x, uid: 0f8e9c6a-1234-4bcd-9abc-0123456789ab}\nspec: {containers: [{name: a, image: i}]}\n',
    ),
    [],
  );
});

test('one bad pod in a list does not drop the others', () => {
  const list = {
    kind: 'List',
    apiVersion: 'v1',
    items: [
      { kind: 'Pod', metadata: { name: 'ok' }, spec: { containers: [{ name: 'x', image: 'i' }] } },
      { kind: 'Pod', metadata: { name: 'bad' }, spec: { containers: [] } },
    ],
  };
  const r = parseManifest(Buffer.from(JSON.stringify(list)), '/m/l.json', 'file', 'n');
  assert.deepEqual(
    r.pods.map((p) => p.metadata!.name),
    ['ok-n'],
  );
  assert.deepEqual(r.errors, ['/m/l.json: items[1] Pod "bad": spec.containers: Required value']);
});

test('YAML 1.1 booleans, as kubectl reads them', () => {
  const r = parseManifest(Buffer.from(pod('yaml11', '  hostNetwork: yes\n')), '/m/y.yaml', 'file', 'n');
  assert.equal(r.pods[0]!.spec!.hostNetwork, true);
});
