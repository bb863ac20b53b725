import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, test } from 'node:test';

import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';

import { type KObj, KubeApiError } from '../../kube/client.js';
import { startTestApiServer, type TestApiServer } from '../../testing/apiserver.js';
import { waitFor } from '../../testing/wait.js';

let t: TestApiServer;

before(async () => {
  t = await startTestApiServer('n1', {
    controllers: ['serviceaccount-controller', 'root-ca-certificate-publisher-controller'],
    advertiseAddress: '',
  });
});
after(() => t.stop());

/** GET with a bearer token; the status code. */
function getWith(token: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${t.srv.url}${path}`,
      { rejectUnauthorized: false, headers: { Authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('every namespace gets a default ServiceAccount and the kube-root-ca.crt ConfigMap; both come back when deleted', async () => {
  await t.admin.create('/api/v1/namespaces', { metadata: { name: 'team' } });
  const cm = await waitFor(
    () => t.admin.get('/api/v1/namespaces/team/configmaps/kube-root-ca.crt').catch(() => undefined),
    3000,
    20,
    'root CA configmap',
  );
  assert.match(cm.data['ca.crt'], /^-----BEGIN CERTIFICATE-----/);
  await t.admin.get('/api/v1/namespaces/team/serviceaccounts/default');
  await t.admin.delete('/api/v1/namespaces/team/serviceaccounts/default');
  await t.admin.delete('/api/v1/namespaces/team/configmaps/kube-root-ca.crt');
  await waitFor(
    () => t.admin.get('/api/v1/namespaces/team/serviceaccounts/default').catch(() => undefined),
    3000,
    20,
    'default SA back',
  );
  await waitFor(
    () => t.admin.get('/api/v1/namespaces/team/configmaps/kube-root-ca.crt').catch(() => undefined),
    3000,
    20,
    'configmap back',
  );
});

test('pods get serviceAccountName default and the kube-api-access projected volume in every container, unless automount is off', async () => {
  const p = await t.admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'sa1' },
    spec: { initContainers: [{ name: 'i', image: 'x' }], containers: [{ name: 'c', image: 'x' }] },
  });
  assert.equal(p.spec.serviceAccountName, 'default');
  const vol = p.spec.volumes.find((v: KObj) => v.name.startsWith('kube-api-access-'));
  assert.match(vol.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.deepEqual(
    vol.projected.sources.map((s: KObj) => Object.keys(s)[0]),
    ['serviceAccountToken', 'configMap', 'downwardAPI'],
  );
  assert.equal(vol.projected.sources[0].serviceAccountToken.expirationSeconds, 3607);
  for (const c of [...p.spec.initContainers, ...p.spec.containers])
    assert.deepEqual(c.volumeMounts, [
      { name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
    ]);
  const off = await t.admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'sa2' },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'x' }] },
  });
  assert.equal(off.spec.volumes, undefined);
  await assert.rejects(
    t.admin.create('/api/v1/namespaces/default/pods', {
      metadata: { name: 'sa3' },
      spec: { serviceAccountName: 'nope', containers: [{ name: 'c', image: 'x' }] },
    }),
    (e: KubeApiError) =>
      e.code === 403 &&
      e.message.endsWith(
        'pods "sa3" is forbidden: error looking up service account default/nope: serviceaccount "nope" not found',
      ),
  );
});

test('TokenRequest issues a JWT the apiserver accepts (API and TokenReview); bound to a pod it dies with the pod', async () => {
  const pod = await t.admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'tok' },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  const tr = await t.admin.create('/api/v1/namespaces/default/serviceaccounts/default/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'tok' } },
  });
  const token = tr.status.token as string;
  assert.equal(token.split('.').length, 3);
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
  assert.equal(claims.sub, 'system:serviceaccount:default:default');
  assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
  assert.equal(claims.exp - claims.iat, 3607);
  assert.equal(claims['kubernetes.io'].pod.uid, pod.metadata.uid);
  assert.equal(tr.spec.boundObjectRef.uid, pod.metadata.uid);
  assert.equal(await getWith(token, '/api'), 200, 'discovery with the token');
  const review = await t.admin.create('/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token },
  });
  assert.equal(review.status.authenticated, true);
  assert.equal(review.status.user.username, 'system:serviceaccount:default:default');
  assert.deepEqual(review.status.user.groups, [
    'system:serviceaccounts',
    'system:serviceaccounts:default',
    'system:authenticated',
  ]);
  assert.deepEqual(review.status.user.extra['authentication.kubernetes.io/pod-name'], ['tok']);
  // Another audience than the API's: not for the API, but a TokenReview that asks for it says yes.
  const other = (
    await t.admin.create('/api/v1/namespaces/default/serviceaccounts/default/token', { spec: { audiences: ['vault'] } })
  ).status.token as string;
  assert.equal(await getWith(other, '/api'), 401);
  assert.equal(
    (
      await t.admin.create('/apis/authentication.k8s.io/v1/tokenreviews', {
        spec: { token: other, audiences: ['vault'] },
      })
    ).status.authenticated,
    true,
  );
  await t.admin.delete('/api/v1/namespaces/default/pods/tok');
  assert.equal(await getWith(token, '/api'), 401, 'the bound pod is gone');
  await assert.rejects(
    t.admin.create('/api/v1/namespaces/default/serviceaccounts/default/token', { spec: { expirationSeconds: 60 } }),
    /may not specify a duration less than 10 minutes/,
  );
});

test('default/kubernetes has endpoints at the apiserver', async () => {
  const ep = await t.admin.get('/api/v1/namespaces/default/endpoints/kubernetes');
  assert.deepEqual(ep.subsets[0].ports, [{ name: 'https', port: t.srv.port, protocol: 'TCP' }]);
  const slice = await t.admin.get('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
  assert.equal(slice.endpoints[0].addresses[0], ep.subsets[0].addresses[0].ip);
  assert.equal(
    (await t.admin.get('/api/v1/namespaces/default/services/kubernetes')).spec.ports[0].targetPort,
    t.srv.port,
  );
});

test('service account issuer discovery: service accounts read the OIDC document and the key set that verifies their tokens', async () => {
  const tr = await t.admin.create('/api/v1/namespaces/default/serviceaccounts/default/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  const token = tr.status.token as string;
  const get = (path: string): Promise<{ code: number; type: string; body: KObj }> =>
    new Promise((resolve, reject) => {
      const req = https.request(
        `${t.srv.url}${path}`,
        { rejectUnauthorized: false, headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              code: res.statusCode ?? 0,
              type: String(res.headers['content-type']),
              body: JSON.parse(Buffer.concat(chunks).toString()) as KObj,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  const doc = await get('/.well-known/openid-configuration');
  assert.equal(doc.code, 200);
  assert.equal(doc.body.issuer, 'https://kubernetes.default.svc.cluster.local');
  assert.equal(doc.body.jwks_uri, `${t.srv.url}/openid/v1/jwks`);
  assert.deepEqual(doc.body.id_token_signing_alg_values_supported, ['ES256']);
  const jwks = await get('/openid/v1/jwks');
  assert.equal(jwks.type, 'application/jwk-set+json');
  const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks.body as JSONWebKeySet), {
    issuer: doc.body.issuer,
  });
  assert.equal(payload.sub, 'system:serviceaccount:default:default');
  assert.equal(protectedHeader.kid, jwks.body.keys[0].kid);
});
