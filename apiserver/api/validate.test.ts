// The dev apiserver's object validation, compared with upstream's field.ErrorList wording.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RESOURCES } from '../resources.js';
import { validateObject } from './validate.js';

const msgs = (errs: { field?: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);
const res = (kind: string) => RESOURCES.find((r) => r.kind === kind && r.group !== 'events.k8s.io')!;

test('Services: type, named ports when several, unique names, ports and targetPorts in range', () => {
  const svc = {
    metadata: { name: 's' },
    spec: {
      type: 'Internal',
      ports: [
        { port: 80 },
        { port: 70000, name: 'b', targetPort: 'way-too-long-name', protocol: 'HTTP' },
        { port: 82, name: 'b' },
      ],
    },
  };
  assert.deepEqual(msgs(validateObject(res('Service'), svc)), [
    'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    'spec.ports[0].name: Required value',
    'spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
    'spec.ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
    'spec.ports[1].targetPort: Invalid value: "way-too-long-name": must be no more than 15 characters',
    'spec.ports[2].name: Duplicate value: "b"',
  ]);
});

test('Deployments: strategy type, rollingUpdate not both 0, no rollingUpdate with Recreate; ConfigMap keys', () => {
  const d = (strategy: object) => ({
    metadata: { name: 'd' },
    spec: {
      strategy,
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  });
  assert.deepEqual(msgs(validateObject(res('Deployment'), d({ type: 'BlueGreen' }))), [
    'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"',
  ]);
  assert.deepEqual(
    msgs(
      validateObject(
        res('Deployment'),
        d({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } }),
      ),
    ),
    [
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    ],
  );
  assert.deepEqual(msgs(validateObject(res('Deployment'), d({ type: 'Recreate', rollingUpdate: { maxSurge: 1 } }))), [
    "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
  ]);
  assert.deepEqual(
    msgs(validateObject(res('ConfigMap'), { metadata: { name: 'c' }, data: { 'ok.key': '1', 'bad key': '2' } })),
    [
      `data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
    ],
  );
});
