import assert from 'node:assert/strict';
import { test } from 'node:test';

import { credentialsFor, imageLocation } from './pull-secrets.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const cfgjson = (auths: object) => ({
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
});

test('image references: registry host and repository path, Docker Hub when no host', () => {
  assert.deepEqual(imageLocation('127.0.0.1:5000/tskube/app:1'), { host: '127.0.0.1:5000', path: 'tskube/app' });
  assert.deepEqual(imageLocation('busybox'), { host: 'docker.io', path: 'busybox' });
  assert.deepEqual(imageLocation('registry.example.com/team/app@sha256:abc'), {
    host: 'registry.example.com',
    path: 'team/app',
  });
  assert.deepEqual(imageLocation('localhost/app:2'), { host: 'localhost', path: 'app' });
});

test('pull secrets: dockerconfigjson and dockercfg, auth or username/password, matched by host, path prefix and wildcard; longest path first', () => {
  const secrets = [
    cfgjson({
      'https://127.0.0.1:5000': { auth: b64('alice:s3:cret') },
      'reg.example.com/team': { username: 'team', password: 'p1' },
      '*.example.com': { username: 'any', password: 'p2' },
    }),
    {
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'reg.example.com': { username: 'old', password: 'p3' } })) },
    },
    { type: 'Opaque', data: { '.dockerconfigjson': b64('{}') } },
    cfgjson({}) as object,
    { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('not json') } },
  ];
  assert.deepEqual(credentialsFor('127.0.0.1:5000/tskube/app:1', secrets), [
    { username: 'alice', password: 's3:cret' },
  ]);
  assert.deepEqual(
    credentialsFor('reg.example.com/team/app:1', secrets).map((a) => a.username),
    ['team', 'any', 'old'],
  );
  assert.deepEqual(
    credentialsFor('reg.example.com/other/app:1', secrets).map((a) => a.username),
    ['any', 'old'],
  );
  assert.deepEqual(credentialsFor('127.0.0.1:5001/x:1', secrets), []);
  assert.deepEqual(
    credentialsFor('docker.io/library/busybox', [
      cfgjson({ 'https://index.docker.io/v1/': { username: 'hub', password: 'x' } }),
    ]).map((a) => a.username),
    ['hub'],
  );
});
