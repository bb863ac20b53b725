// Fields an attacker could use to redirect traffic: a Service's externalIPs in special ranges (and the opt-in
// DenyServiceExternalIPs plugin), and a Node's podCIDRs, which only go from unset to set, even for the node itself.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { rawRequest, useTestApiServer } from '../../testing/apiserver.js';
import { validateNodeUpdate, validateNonSpecialIP } from './validate.js';

test("externalIPs: upstream's ValidateNonSpecialIP", () => {
  const why = (ip: string): string[] => validateNonSpecialIP(ip, 'spec.externalIPs[0]').map((c) => c.message);
  assert.deepEqual(why('192.0.2.10'), []);
  assert.deepEqual(why('2001:db8::1'), []);
  assert.deepEqual(why('224.0.1.1'), [], 'multicast beyond the link-local block is not special upstream');
  assert.deepEqual(why('0.0.0.0'), ['Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)']);
  assert.deepEqual(why('::'), ['Invalid value: "::": may not be unspecified (::)']);
  assert.deepEqual(why('127.0.0.1'), [
    'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
  ]);
  assert.deepEqual(why('::1'), ['Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)']);
  assert.deepEqual(why('::ffff:127.0.0.2'), [
    'Invalid value: "::ffff:127.0.0.2": may not be in the loopback range (127.0.0.0/8, ::1/128)',
  ]);
  assert.deepEqual(why('169.254.169.254'), [
    'Invalid value: "169.254.169.254": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
  ]);
  assert.deepEqual(why('fe80::1'), [
    'Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
  ]);
  assert.deepEqual(why('224.0.0.1'), [
    'Invalid value: "224.0.0.1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
  ]);
  assert.deepEqual(why('ff02::1'), [
    'Invalid value: "ff02::1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
  ]);
  assert.deepEqual(why('10.0.0.300'), [
    'Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  ]);
});

test('podCIDRs and providerID may be set once and never changed', () => {
  const node = (spec: object) => ({ metadata: { name: 'n' }, spec });
  assert.deepEqual(validateNodeUpdate(node({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] }), node({})), []);
  const forbidden = ['spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid'];
  const cur = node({ podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] });
  const messages = (next: object) => validateNodeUpdate(next, cur).map((c) => `${c.field}: ${c.message}`);
  assert.deepEqual(messages(node({ podCIDR: '128.0.0.0/1', podCIDRs: ['128.0.0.0/1'] })), forbidden);
  assert.deepEqual(messages(node({ podCIDR: '128.0.0.0/1', podCIDRs: ['10.244.1.0/24'] })), forbidden);
  assert.deepEqual(messages(node({ podCIDRs: ['10.244.1.0/24', 'fd00::/64'] })), forbidden);
  assert.deepEqual(messages(node({})), forbidden);
  assert.deepEqual(messages(cur), []);
  assert.deepEqual(
    validateNodeUpdate(node({ providerID: 'b' }), node({ providerID: 'a' })).map((c) => c.message),
    ['Forbidden: node updates may not change providerID except from "" to valid'],
  );
});

const s = useTestApiServer('n1', {
  authorizationModes: ['Node', 'RBAC'],
  admissionPlugins: ['NodeRestriction', 'DenyServiceExternalIPs'],
});

test('a node cannot move its own podCIDR; the apiserver refuses special externalIPs (422) and, with DenyServiceExternalIPs, any new one (403)', async () => {
  await s.api.admin.create('/api/v1/nodes', {
    metadata: { name: 'n1' },
    spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
  });
  await assert.rejects(
    s.node.patch('/api/v1/nodes/n1', { spec: { podCIDR: '128.0.0.0/1', podCIDRs: ['128.0.0.0/1'] } }, 'strategic'),
    (e: Error & { code?: number }) => {
      assert.equal(e.code, 422);
      assert.match(
        e.message,
        /Node "n1" is invalid: spec\.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid/,
      );
      return true;
    },
  );
  assert.deepEqual((await s.api.admin.get('/api/v1/nodes/n1')).spec.podCIDRs, ['10.244.1.0/24']);
  const service = (name: string, externalIPs: string[]) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { ports: [{ port: 80 }], externalIPs },
  });
  const special = await rawRequest(s.api, 'POST', '/api/v1/namespaces/default/services', {
    body: service('metadata', ['169.254.169.254']),
  });
  assert.equal(special.code, 422, special.text);
  assert.match(
    JSON.parse(special.text).message,
    /spec\.externalIPs\[0\]: Invalid value: "169\.254\.169\.254": may not be in the link-local range/,
  );
  const plain = await rawRequest(s.api, 'POST', '/api/v1/namespaces/default/services', {
    body: service('plain', ['192.0.2.10']),
  });
  assert.equal(plain.code, 403, plain.text);
  assert.equal(JSON.parse(plain.text).message, 'services "plain" is forbidden: externalIPs are not allowed');
  const none = await rawRequest(s.api, 'POST', '/api/v1/namespaces/default/services', { body: service('none', []) });
  assert.equal(none.code, 201, none.text);
});
