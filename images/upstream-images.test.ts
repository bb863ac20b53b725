import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';

import type { BuiltImage } from './build.js';
import { buildUpstreamImage, repositoryOf, upstreamImages } from './upstream-images.js';

const VERSIONS = {
  kubernetes: 'v1.37.2',
  etcd: '3.7.0-0',
  pause: '3.10.2',
  agnhost: '2.66.1',
  agnhostPrev: '2.55',
  busybox: '1.37.0-2',
  nginx: ['1.27.0-2', '1.28.0-2'] as [string, string],
  glibcDnsTesting: '2.1.1',
  nonroot: '1.5',
  nonewprivs: '1.4',
  kitten: '1.8',
  nautilus: '1.8',
  sampleApiserver: '1.29.2',
};

/** Name → mode of each entry of an uncompressed ustar/pax archive (pax headers skipped). */
function tarEntries(tar: Buffer): Map<string, number> {
  const out = new Map<string, number>();
  for (let off = 0; off + 512 <= tar.length;) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const field = (from: number, len: number): string =>
      header
        .subarray(from, from + len)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const name = (prefix ? `${prefix}/` : '') + field(0, 100);
    if (type !== 'x' && type !== 'g')
      out.set(name.replace(/^\.\//, '').replace(/\/$/, ''), parseInt(field(100, 8).trim(), 8));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** Name → mode of the one layer of a built image's layout. */
function layerEntries(built: BuiltImage): Map<string, number> {
  const blob = (digest: string) => fs.readFileSync(path.join(built.layout, 'blobs/sha256', digest.slice(7)));
  const manifest = JSON.parse(blob(built.digest).toString()) as { layers: { digest: string }[] };
  return tarEntries(zlib.gunzipSync(blob(manifest.layers[0]!.digest)));
}

test("upstream images: kubeadm's and the e2e suite's names and tags; each carries its fixture binary", () => {
  const images = upstreamImages(
    VERSIONS,
    (n) => `/fixtures/${n}`,
    (p) => `/debs/${p}.deb`,
    (f) => `/src/${f}`,
  );
  assert.deepEqual(
    images.map((i) => `${i.name}:${i.tag}`),
    [
      'registry.k8s.io/kube-apiserver:v1.37.2',
      'registry.k8s.io/kube-controller-manager:v1.37.2',
      'registry.k8s.io/kube-scheduler:v1.37.2',
      'registry.k8s.io/etcd:3.7.0-0',
      'registry.k8s.io/pause:3.10.2',
      'registry.k8s.io/e2e-test-images/agnhost:2.66.1',
      'registry.k8s.io/e2e-test-images/agnhost:2.55',
      'registry.k8s.io/e2e-test-images/busybox:1.37.0-2',
      'registry.k8s.io/e2e-test-images/nginx:1.27.0-2',
      'registry.k8s.io/e2e-test-images/nginx:1.28.0-2',
      'registry.k8s.io/e2e-test-images/glibc-dns-testing:2.1.1',
      'registry.k8s.io/e2e-test-images/nonroot:1.5',
      'registry.k8s.io/e2e-test-images/nonewprivs:1.4',
      'registry.k8s.io/e2e-test-images/kitten:1.8',
      'registry.k8s.io/e2e-test-images/nautilus:1.8',
      'registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2',
    ],
  );
  const busybox = images.find((i) => i.name.endsWith('/busybox'))!;
  assert.equal(busybox.busyboxBinary, '/fixtures/busybox', "upstream's busybox, not Debian's");
  const nnp = images.find((i) => i.name.endsWith('/nonewprivs'))!;
  assert.deepEqual(nnp.files, { 'usr/local/bin/nnp': '/fixtures/nnp' });
  assert.equal(nnp.modes!['usr/local/bin/nnp'], 0o4755, 'setuid root, as upstream builds it');
  assert.deepEqual(nnp.config.cmd, ['nnp']);
  const kitten = images.find((i) => i.name.endsWith('/kitten'))!;
  assert.equal(kitten.files['kitten.jpg'], '/src/test/images/kitten/html/kitten.jpg');
  assert.equal(kitten.files['data.json'], '/src/test/images/kitten/html/data.json');
  assert.deepEqual(kitten.config.entrypoint, ['/agnhost']);
  assert.deepEqual(kitten.config.cmd, ['test-webserver'], "agnhost's file server at /");
  assert.equal(images.find((i) => i.name.endsWith('/nonroot'))!.config.user, '1234');
  const nginx = images.find((i) => i.name.endsWith('/nginx'))!;
  assert.deepEqual(nginx.debs, ['/debs/nginx.deb', '/debs/nginx-common.deb']);
  assert.deepEqual(nginx.config.cmd, ['/usr/sbin/nginx', '-g', 'daemon off;']);
  assert.match(nginx.contents!['etc/nginx/conf.d/default.conf']!, /listen 80;/);
  assert.deepEqual(images[0]!.files, { 'usr/local/bin/kube-apiserver': '/fixtures/kube-apiserver' });
  assert.equal(repositoryOf('registry.k8s.io/e2e-test-images/agnhost'), 'e2e-test-images/agnhost');
  const pause = images.find((i) => i.name === 'registry.k8s.io/pause')!;
  assert.match(pause.config.entrypoint!.join(' '), /trap 'exit 0' TERM INT/, 'pause exits on SIGTERM, as upstream');
  const agnhost = images.find((i) => i.name.endsWith('/agnhost'))!;
  assert.deepEqual(agnhost.config.cmd, ['pause'], "agnhost without arguments pauses, as upstream's");
  assert.equal(agnhost.files['localhost.crt'], '/src/test/images/agnhost/porter/localhost.crt');
  assert.ok(agnhost.installed!.includes('curl') && agnhost.installed!.includes('bind9-dnsutils'));
  assert.equal(repositoryOf('registry.k8s.io/etcd'), 'etcd');
});

test('an upstream image is a layout whose one layer holds the binary, executable, beside what a Go binary looks up', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-upstream-image-'));
  try {
    const fake = path.join(dir, 'kube-scheduler');
    fs.writeFileSync(fake, '#!/bin/sh\necho scheduler\n');
    const scheduler = upstreamImages(
      VERSIONS,
      () => fake,
      () => '',
      () => fake,
    ).find((i) => i.name.endsWith('/kube-scheduler'))!;
    const built = buildUpstreamImage(scheduler, dir);
    assert.equal(built.name, 'kube-scheduler');
    assert.equal(built.tag, 'v1.37.2');
    const blob = (d: string) => fs.readFileSync(path.join(built.layout, 'blobs/sha256', d.slice(7)));
    const manifest = JSON.parse(blob(built.digest).toString()) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    const config = JSON.parse(blob(manifest.config.digest).toString()) as { config: { Entrypoint?: string[] } };
    assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/kube-scheduler']);
    const entries = tarEntries(zlib.gunzipSync(blob(manifest.layers[0]!.digest)));
    assert.equal(entries.get('usr/local/bin/kube-scheduler'), 0o755);
    assert.ok(entries.has('etc/passwd') && entries.has('tmp'), [...entries.keys()].join(' '));
    assert.ok(!entries.has('bin/sh'), 'no shell in a component image');
    const agnhost = buildUpstreamImage(
      upstreamImages(
        VERSIONS,
        () => fake,
        () => '',
        () => fake,
      ).find((i) => i.name.endsWith('/agnhost'))!,
      dir,
    );
    const agnEntries = layerEntries(agnhost);
    assert.ok(agnEntries.has('agnhost') && agnEntries.has('bin/sh'), "agnhost with a shell, as upstream's");
    for (const tool of ['usr/bin/curl', 'usr/bin/dig', 'bin/nc.openbsd', 'usr/bin/getent', 'agnhost-2', 'uploads'])
      assert.ok(agnEntries.has(tool), `${tool} in agnhost's image`);
    const nnp = buildUpstreamImage(
      upstreamImages(
        VERSIONS,
        (n) => (n === 'busybox' ? '/bin/busybox' : fake),
        () => '',
        () => fake,
      ).find((i) => i.name.endsWith('/nonewprivs'))!,
      dir,
    );
    assert.equal(layerEntries(nnp).get('usr/local/bin/nnp'), 0o4755, 'the setuid bit survives into the layer');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
