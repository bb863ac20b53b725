// Admission webhooks: matching, configuration validation, match conditions, and the dispatcher and the dev
// apiserver's writes against a real HTTPS webhook.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import type { ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';

import { KubeApiError } from '../../../kube/client.js';
import { useTestApiServer } from '../../../testing/apiserver.js';
import { ensurePki } from '../../pki.js';
import type { Obj } from '../../storage/store.js';
import { evaluateConditions } from './conditions.js';
import { defaultWebhookConfiguration, validateWebhookConfiguration } from './configuration.js';
import { WebhookDispatcher } from './dispatcher.js';
import { isExempt, namespaceMatches, objectMatches, type RequestTarget, ruleMatches } from './match.js';
import type { ReviewSubject } from './review.js';

const target = (over: Partial<RequestTarget> = {}): RequestTarget => ({
  operation: 'CREATE',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  namespace: 'ns1',
  ...over,
});

test('rules match operation, group, version, resource/subresource and scope as upstream', () => {
  const rule = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };
  assert.equal(ruleMatches(rule, target()), true);
  assert.equal(ruleMatches(rule, target({ operation: 'UPDATE' })), false);
  assert.equal(ruleMatches(rule, target({ subresource: 'status' })), false, 'pods does not take pods/status');
  assert.equal(ruleMatches({ ...rule, resources: ['*'] }, target({ subresource: 'status' })), false);
  assert.equal(ruleMatches({ ...rule, resources: ['*/*'] }, target({ subresource: 'status' })), true);
  assert.equal(ruleMatches({ ...rule, resources: ['pods/*'] }, target({ subresource: 'attach' })), true);
  assert.equal(
    ruleMatches(
      { ...rule, operations: ['CONNECT'], resources: ['pods/attach'] },
      target({ operation: 'CONNECT', subresource: 'attach' }),
    ),
    true,
  );
  assert.equal(ruleMatches({ ...rule, scope: 'Cluster' }, target()), false);
  assert.equal(ruleMatches({ ...rule, scope: 'Namespaced' }, target()), true);
  assert.equal(
    ruleMatches({ ...rule, apiGroups: ['*'], apiVersions: ['*'], operations: ['*'] }, target({ operation: 'DELETE' })),
    true,
  );
  assert.equal(
    isExempt(target({ group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' })),
    true,
  );
});

test('namespace and object selectors: namespace labels, a Namespace by its own, either object', () => {
  const sel = { matchLabels: { team: 'a' } };
  const labels = (n: string): Record<string, string> | undefined =>
    n === 'ns1' ? { team: 'a' } : n === 'ns2' ? {} : undefined;
  assert.equal(namespaceMatches(sel, target(), labels), true);
  assert.equal(namespaceMatches(sel, target({ namespace: 'ns2' }), labels), false);
  assert.equal(namespaceMatches(sel, target({ namespace: 'gone' }), labels), false);
  assert.equal(namespaceMatches(sel, target({ namespace: '', resource: 'nodes' }), labels), true);
  const ns = target({ namespace: '', resource: 'namespaces', object: { metadata: { labels: { team: 'a' } } } });
  assert.equal(
    namespaceMatches(sel, ns, () => undefined),
    true,
  );
  assert.equal(
    objectMatches(sel, target({ object: { metadata: {} }, oldObject: { metadata: { labels: { team: 'a' } } } })),
    true,
  );
  assert.equal(objectMatches(sel, target({ object: { metadata: {} } })), false);
  assert.equal(objectMatches({}, target()), true);
});

test('configurations are defaulted, and validated with CEL compilation of match conditions', () => {
  const cfg: Obj = {
    webhooks: [
      {
        name: 'deny.example.com',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        clientConfig: { service: { namespace: 'ns', name: 'svc' } },
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        matchConditions: [{ name: 'c1', expression: "object.metadata.namespace == 'production'" }],
      },
    ],
  };
  defaultWebhookConfiguration(cfg, true);
  const w = cfg.webhooks[0];
  assert.deepEqual(
    [
      w.failurePolicy,
      w.matchPolicy,
      w.timeoutSeconds,
      w.reinvocationPolicy,
      w.rules[0].scope,
      w.clientConfig.service.port,
    ],
    ['Fail', 'Equivalent', 10, 'Never', '*', 443],
  );
  assert.deepEqual(validateWebhookConfiguration(cfg, true), []);
  const bad = structuredClone(cfg);
  bad.webhooks[0].matchConditions = [{ name: 'c1', expression: '... [] bad expression' }];
  delete bad.webhooks[0].sideEffects;
  const causes = validateWebhookConfiguration(bad, true);
  assert.deepEqual(
    causes.map((c) => c.field),
    ['webhooks[0].sideEffects', 'webhooks[0].matchConditions[0].expression'],
  );
  assert.match(causes[1]!.message, /^Invalid value: "\.\.\. \[\] bad expression": compilation failed: /);
  const withPath = (p: string): string[] => {
    const c = structuredClone(cfg);
    c.webhooks[0].clientConfig.service.path = p;
    return validateWebhookConfiguration(c, true).map((x) => x.message);
  };
  assert.deepEqual([...withPath(''), ...withPath('/'), ...withPath('/pods/attach')], []);
  assert.deepEqual(withPath('pods'), [`Invalid value: "pods": must start with a '/'`]);
  assert.deepEqual(withPath('/a//b'), [`Invalid value: "/a//b": segment[1] may not be empty`]);
});

test('match conditions: all true matches, a false one skips, an error is reported with its name', () => {
  const vars = { object: { metadata: { name: 'skip-me', generation: 2 } }, oldObject: null, request: {} };
  assert.deepEqual(evaluateConditions([{ name: 'a', expression: "object.metadata.name != 'skip-me'" }], vars), {
    matched: false,
  });
  assert.deepEqual(evaluateConditions([{ name: 'a', expression: 'object.metadata.generation + 1 == 3' }], vars), {
    matched: true,
  });
  const r = evaluateConditions([{ name: 'a', expression: 'object.spec.x == 1' }], vars);
  assert.equal(r.matched, false);
  assert.match(r.error ?? '', /^expression 'a' resulted in error: /);
});

// A webhook server, as the e2e suite's agnhost webhook: deny configmaps with a key, add a label, or never answer.
let tmp = '';
let ca = '';
let port = 0;
let server: https.Server | undefined;
const seen: Obj[] = [];

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-webhook-'));
  const pki = ensurePki(tmp, { ips: ['127.0.0.1'], dns: ['hook.default.svc'] });
  ca = fs.readFileSync(pki.caCert, 'utf8');
  server = https.createServer(
    { cert: fs.readFileSync(pki.serverCert), key: fs.readFileSync(pki.serverKey) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url?.startsWith('/hang')) return;
        const review = JSON.parse(Buffer.concat(chunks).toString()) as Obj;
        seen.push({ url: req.url, request: review.request });
        const object = review.request.object as Obj | null;
        const response: Obj = { uid: review.request.uid, allowed: true };
        if (req.url?.startsWith('/deny') && object?.data?.['webhook-e2e-test'] === 'webhook-disallow') {
          response.allowed = false;
          response.status = { message: 'the configmap contains unwanted key and value' };
        }
        if (req.url?.startsWith('/deny-connect')) {
          response.allowed = false;
          response.status = { message: `attaching to pod '${review.request.name}' is not allowed` };
        }
        if (req.url?.startsWith('/mutate')) {
          response.patchType = 'JSONPatch';
          const ops = [{ op: 'add', path: '/data/mutation-stage-1', value: 'yes' }];
          response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
          response.warnings = ['mutated by the test'];
        }
        if (req.url?.startsWith('/bad-uid')) response.uid = 'other';
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    },
  );
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  fs.rmSync(tmp, { recursive: true, force: true });
});

const hook = (name: string, pathName: string, over: Obj = {}): Obj => ({
  name,
  rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  clientConfig: { url: `https://127.0.0.1:${port}${pathName}`, caBundle: Buffer.from(ca).toString('base64') },
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  timeoutSeconds: 5,
  failurePolicy: 'Fail',
  ...over,
});

const subject = (object: Obj): ReviewSubject => ({
  operation: 'CREATE',
  group: '',
  version: 'v1',
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: 'configmaps',
  subresource: '',
  namespace: 'default',
  name: object.metadata.name,
  object,
  user: { name: 'alice', groups: ['system:authenticated'] },
  dryRun: false,
});

test('the dispatcher dials a Service at its ClusterIP under the Service DNS name, which TLS verifies', async () => {
  const resolved: string[] = [];
  const config = (w: Obj): ValidatingWebhookConfiguration =>
    ({ metadata: { name: 'c' }, webhooks: [w] }) as ValidatingWebhookConfiguration;
  const viaService = hook('svc.example.com', '', {
    clientConfig: {
      service: { namespace: 'default', name: 'hook', port, path: '/deny' },
      caBundle: Buffer.from(ca).toString('base64'),
    },
  });
  const d = new WebhookDispatcher({
    validating: () => [config(viaService)],
    mutating: () => [],
    namespaceLabels: () => ({}),
    resolve: (ns, name) => {
      resolved.push(`${ns}/${name}`);
      return '127.0.0.1';
    },
  });
  const cm = { metadata: { name: 'x' }, data: { 'webhook-e2e-test': 'webhook-disallow' } };
  await assert.rejects(d.validate(subject(cm)), (e: Error & { code?: number }) => {
    assert.equal(e.code, 400);
    assert.equal(
      e.message,
      'admission webhook "svc.example.com" denied the request: the configmap contains unwanted key and value',
    );
    return true;
  });
  assert.deepEqual(resolved, ['default/hook']);
  const last = seen.at(-1)!;
  assert.equal(last.url, '/deny?timeout=5s');
  assert.equal(last.request.operation, 'CREATE');
  assert.deepEqual(last.request.userInfo, { username: 'alice', groups: ['system:authenticated'] });

  // Without the CA the call fails; Fail refuses with an internal error, Ignore lets the request through.
  const noCa = { ...viaService, clientConfig: { ...viaService.clientConfig, caBundle: undefined } };
  const failing = new WebhookDispatcher({
    validating: () => [config(noCa)],
    mutating: () => [],
    namespaceLabels: () => ({}),
    resolve: () => '127.0.0.1',
  });
  await assert.rejects(failing.validate(subject({ metadata: { name: 'y' } })), (e: Error & { code?: number }) => {
    assert.equal(e.code, 500);
    assert.ok(
      e.message.startsWith(
        `Internal error occurred: failed calling webhook "svc.example.com": failed to call webhook: Post "https://hook.default.svc:${port}/deny?timeout=5s": `,
      ),
      e.message,
    );
    return true;
  });
  const ignoring = new WebhookDispatcher({
    validating: () => [config({ ...noCa, failurePolicy: 'Ignore' })],
    mutating: () => [],
    namespaceLabels: () => ({}),
    resolve: () => '127.0.0.1',
  });
  assert.deepEqual(await ignoring.validate(subject({ metadata: { name: 'z' } })), { warnings: [] });
});

const s = useTestApiServer('n1');
const refused = (code: number, text: string) => (e: KubeApiError) => {
  assert.equal(e.code, code, e.message);
  assert.ok(e.message.includes(text), e.message);
  return true;
};

test('the dev apiserver serves webhook configurations and calls them on create, update and patch', async () => {
  const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  const mwc = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
  const cms = '/api/v1/namespaces/default/configmaps';
  await assert.rejects(
    s.api.admin.create(vwc, {
      metadata: { name: 'bad' },
      webhooks: [hook('a.example.com', '/deny', { matchConditions: [{ name: 'x', expression: '... [] bad' }] })],
    }),
    refused(422, 'compilation failed'),
  );
  await s.api.admin.create(vwc, { metadata: { name: 'deny' }, webhooks: [hook('deny.example.com', '/deny')] });
  await s.api.admin.create(mwc, { metadata: { name: 'mutate' }, webhooks: [hook('mutate.example.com', '/mutate')] });

  const created = await s.api.admin.create(cms, { metadata: { generateName: 'cm-' }, data: { a: '1' } });
  assert.equal(created.data['mutation-stage-1'], 'yes', 'the mutating webhook added its key');
  assert.match(created.metadata.name, /^cm-/);
  const validated = seen.filter((x) => x.url?.startsWith('/deny?')).at(-1)!;
  assert.equal(validated.request.object.data['mutation-stage-1'], 'yes', 'validation saw the mutated object');
  assert.equal(validated.request.name, created.metadata.name, 'the name the webhooks saw is the name stored');

  const disallow = { 'webhook-e2e-test': 'webhook-disallow' };
  await assert.rejects(
    s.api.admin.create(cms, { metadata: { name: 'no' }, data: disallow }),
    refused(
      400,
      'admission webhook "deny.example.com" denied the request: the configmap contains unwanted key and value',
    ),
  );
  await assert.rejects(s.api.admin.get(`${cms}/no`), refused(404, 'not found'));
  await assert.rejects(
    s.api.admin.patch(`${cms}/${created.metadata.name}`, { data: disallow }, 'strategic'),
    refused(400, 'the configmap contains unwanted key and value'),
  );
  await assert.rejects(
    s.api.admin.update(`${cms}/${created.metadata.name}`, { ...created, data: disallow }),
    refused(400, 'the configmap contains unwanted key and value'),
  );
  const patched = await s.api.admin.patch(`${cms}/${created.metadata.name}`, { data: { b: '2' } }, 'merge');
  assert.equal(patched.data.b, '2');
  const update = seen.at(-1)!.request;
  assert.equal(update.operation, 'UPDATE');
  assert.equal(update.oldObject.data.b, undefined);

  // Webhook configurations themselves are never sent to webhooks.
  await s.api.admin.create(vwc, {
    metadata: { name: 'on-configs' },
    webhooks: [
      hook('configs.example.com', '/deny', {
        rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
        clientConfig: { url: `https://127.0.0.1:${port}/hang`, caBundle: Buffer.from(ca).toString('base64') },
        objectSelector: { matchLabels: { never: 'matched' } },
      }),
    ],
  });
  await s.api.admin.delete(`${vwc}/on-configs`);
  await s.api.admin.delete(`${vwc}/deny`);
  await s.api.admin.delete(`${mwc}/mutate`);
  const plain = await s.api.admin.create(cms, { metadata: { name: 'plain' }, data: disallow });
  assert.equal(plain.data['mutation-stage-1'], undefined);
});

test('an invalid answer (wrong uid) is a failure to call, refused as an internal error', async () => {
  const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
  await s.api.admin.create(vwc, { metadata: { name: 'uid' }, webhooks: [hook('uid.example.com', '/bad-uid')] });
  await assert.rejects(
    s.api.admin.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'u' } }),
    refused(500, 'received invalid webhook response: expected response.uid='),
  );
  await s.api.admin.delete(`${vwc}/uid`);
});
