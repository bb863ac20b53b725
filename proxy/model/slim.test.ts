import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KObj } from '../../kube/client.js';
import { endpointsOfSlices } from './endpoints.js';
import { servicePorts } from './service-port.js';
import { slimEndpointSlice, slimService, TRIGGER_ANNOTATION } from './slim.js';

const managedFields = [
  {
    manager: 'kube-controller-manager',
    operation: 'Update',
    apiVersion: 'v1',
    time: '2026-12-05T12:06:58Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:ports': {} } },
  },
];

const service: KObj = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web',
    namespace: 'shop',
    uid: 'u-1',
    resourceVersion: '42',
    creationTimestamp: '2026-12-05T12:06:58Z',
    labels: { app: 'web' },
    annotations: { note: 'x' },
    managedFields,
  },
  spec: {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.7',
    clusterIPs: ['10.96.0.7', 'fd00:96::7'],
    ipFamilies: ['IPv4', 'IPv6'],
    externalIPs: ['1.2.3.4'],
    loadBalancerSourceRanges: ['203.0.113.0/24'],
    externalTrafficPolicy: 'Local',
    internalTrafficPolicy: 'Cluster',
    healthCheckNodePort: 31000,
    sessionAffinity: 'ClientIP',
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
    ports: [
      { name: 'http', port: 80, targetPort: 8080, nodePort: 30080, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ],
  },
  status: { loadBalancer: { ingress: [{ ip: '5.6.7.8' }, { ip: '5.6.7.9', ipMode: 'Proxy' }, { ip: '2001:db8::8' }] } },
};

const slice: KObj = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'web-abc',
    namespace: 'shop',
    uid: 'u-2',
    resourceVersion: '43',
    labels: {
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    },
    annotations: { [TRIGGER_ANNOTATION]: '2026-12-05T12:06:58Z', other: 'y' },
    ownerReferences: [{ kind: 'Service', name: 'web', uid: 'u-1' }],
    managedFields,
  },
  addressType: 'IPv4',
  ports: [
    { name: 'http', port: 8080, protocol: 'TCP' },
    { name: 'dns', port: 5353, protocol: 'UDP' },
  ],
  endpoints: [
    {
      addresses: ['10.244.1.5'],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'node-a',
      zone: 'z1',
      hints: { forZones: [{ name: 'z1' }] },
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'p-1' },
    },
    {
      addresses: ['10.244.2.6'],
      conditions: { ready: false, serving: true, terminating: true },
      nodeName: 'node-b',
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-2', uid: 'p-2' },
    },
  ],
};

test('a slimmed Service gives the proxier the same service ports in both families, without managedFields or metadata it does not read', () => {
  const slim = slimService(service);
  for (const family of ['IPv4', 'IPv6'] as const)
    assert.deepEqual(servicePorts(slim as never, family), servicePorts(service as never, family));
  assert.equal(servicePorts(slim as never, 'IPv4').length, 2);
  assert.deepEqual(slim.metadata, { name: 'web', namespace: 'shop', resourceVersion: '42' });
  assert.equal(JSON.stringify(slim).includes('managedFields'), false);
  assert.deepEqual(
    slimService({ metadata: { name: 'a', namespace: 'b', resourceVersion: '1' }, spec: { clusterIP: 'None' } }),
    { metadata: { name: 'a', namespace: 'b', resourceVersion: '1' }, spec: { clusterIP: 'None' } },
    'no status: none invented',
  );
});

test('a slimmed EndpointSlice gives the same endpoints, keeps its service-name label and trigger-time annotation, drops targetRefs', () => {
  const slim = slimEndpointSlice(slice);
  for (const node of ['node-a', 'node-b'])
    assert.deepEqual(endpointsOfSlices([slim as never], node), endpointsOfSlices([slice as never], node));
  assert.equal([...endpointsOfSlices([slim as never], 'node-a').values()].flat().length, 4);
  assert.deepEqual(slim.metadata, {
    name: 'web-abc',
    namespace: 'shop',
    resourceVersion: '43',
    labels: { 'kubernetes.io/service-name': 'web' },
    annotations: { [TRIGGER_ANNOTATION]: '2026-12-05T12:06:58Z' },
  });
  assert.deepEqual(slim.endpoints[0], {
    addresses: ['10.244.1.5'],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: 'node-a',
    zone: 'z1',
    hints: { forZones: [{ name: 'z1' }] },
  });
  assert.equal(JSON.stringify(slim).includes('targetRef'), false);
  assert.equal(JSON.stringify(slim).includes('managedFields'), false);
  const bare = slimEndpointSlice({
    metadata: { name: 's', namespace: 'n', resourceVersion: '2', labels: { other: 'x' } },
    addressType: 'IPv6',
  });
  assert.deepEqual(
    bare,
    { metadata: { name: 's', namespace: 'n', resourceVersion: '2' }, addressType: 'IPv6', ports: undefined },
    'no endpoints, no labels kept: nothing invented',
  );
});

test('a slimmed object being deleted keeps its deletionTimestamp', () => {
  assert.equal(
    slimService({ ...service, metadata: { ...service.metadata, deletionTimestamp: '2026-12-05T12:07:00Z' } }).metadata
      .deletionTimestamp,
    '2026-12-05T12:07:00Z',
  );
});
