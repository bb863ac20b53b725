import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  buildCommand,
  busyboxConfig,
  FIXTURES,
  type GoModJson,
  replaceArgs,
  selectFixtures,
  stagingReplaces,
  upstreamDir,
  versionLdflags,
} from './upstream-plan.js';

test('staging replaces: each ./staging/src/<module> replace becomes the published module at the staging version', () => {
  const mod: GoModJson = {
    Module: { Path: 'k8s.io/kubernetes' },
    Replace: [
      { Old: { Path: 'k8s.io/kubelet' }, New: { Path: './staging/src/k8s.io/kubelet' } },
      { Old: { Path: 'k8s.io/api' }, New: { Path: './staging/src/k8s.io/api' } },
      // Not staging: a pinned fork, and a directory that is not the module's own.
      { Old: { Path: 'github.com/x/y' }, New: { Path: 'github.com/z/y', Version: 'v1.2.3' } },
      { Old: { Path: 'k8s.io/other' }, New: { Path: './third_party/other' } },
    ],
  };
  const replaces = stagingReplaces(mod, 'v0.37.2');
  assert.deepEqual(replaces, [
    { path: 'k8s.io/api', version: 'v0.37.2' },
    { path: 'k8s.io/kubelet', version: 'v0.37.2' },
  ]);
  assert.deepEqual(replaceArgs(replaces), [
    '-replace=k8s.io/api=k8s.io/api@v0.37.2',
    '-replace=k8s.io/kubelet=k8s.io/kubelet@v0.37.2',
  ]);
  assert.deepEqual(stagingReplaces({}), []);
});

test('version ldflags: both version packages get the release, its major and minor', () => {
  const flags = versionLdflags('v1.37.2', '2026-12-07T00:00:00Z');
  for (const pkg of ['k8s.io/client-go/pkg/version', 'k8s.io/component-base/version']) {
    assert.ok(flags.includes(`-X ${pkg}.gitVersion=v1.37.2`), flags);
    assert.ok(flags.includes(`-X ${pkg}.gitMajor=1`), flags);
    assert.ok(flags.includes(`-X ${pkg}.gitMinor=37`), flags);
    assert.ok(flags.includes(`-X ${pkg}.gitTreeState=clean`), flags);
    assert.ok(flags.includes(`-X ${pkg}.buildDate=2026-12-07T00:00:00Z`), flags);
  }
  assert.throws(() => versionLdflags('main'), /not a release version: main/);
});

test('fixtures: all by default, by name otherwise; unknown names are refused naming the known ones', () => {
  assert.equal(selectFixtures([]).length, FIXTURES.length);
  assert.deepEqual(
    selectFixtures(['kubeadm', 'etcd']).map((f) => f.name),
    ['etcd', 'kubeadm'],
  );
  assert.throws(
    () => selectFixtures(['kubelet', 'cilium']),
    /unknown fixture\(s\): cilium \(known: etcd, kube-apiserver/,
  );
});

test('build commands: static binaries with the version stamped; the e2e suite as a test binary; etcd from its own module', () => {
  const byName = (n: string) => selectFixtures([n])[0]!;
  const apiserver = buildCommand(byName('kube-apiserver'), '/out/kube-apiserver');
  assert.equal(apiserver.env.CGO_ENABLED, '0');
  assert.deepEqual(apiserver.args.slice(0, 2), ['build', '-trimpath']);
  assert.equal(apiserver.args.at(-1), 'k8s.io/kubernetes/cmd/kube-apiserver');
  assert.match(apiserver.args[apiserver.args.indexOf('-ldflags') + 1]!, /gitVersion=v1\.37\.2/);
  const e2e = buildCommand(byName('e2e.test'), '/out/e2e.test');
  assert.deepEqual(e2e.args.slice(0, 2), ['test', '-c']);
  assert.deepEqual(e2e.args.slice(-3), ['-o', '/out/e2e.test', 'k8s.io/kubernetes/test/e2e']);
  const etcd = byName('etcd');
  assert.equal(etcd.module, 'etcd');
  assert.doesNotMatch(buildCommand(etcd, '/out/etcd').args.join(' '), /gitVersion/);
  assert.equal(upstreamDir({ TSKUBE_UPSTREAM_DIR: '/tmp/u' }), '/tmp/u');
  assert.equal(upstreamDir({}), '/var/cache/tskube/upstream/v1.37.2');
});

test("busybox's config: defconfig made static, without tc; a defconfig without those keys is refused", () => {
  const defconfig = '# CONFIG_STATIC is not set\nCONFIG_STATIC_LIBGCC=y\nCONFIG_TC=y\nCONFIG_TCPSVD=y\n';
  assert.equal(
    busyboxConfig(defconfig),
    'CONFIG_STATIC=y\nCONFIG_STATIC_LIBGCC=y\n# CONFIG_TC is not set\nCONFIG_TCPSVD=y\n',
  );
  assert.throws(() => busyboxConfig('CONFIG_TC=y\n'), /busybox defconfig has no CONFIG_STATIC/);
});
