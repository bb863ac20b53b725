import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import {
  dependsNames,
  isRuntimePath,
  libraryClosure,
  type PackageInfo,
  unpackWithLibraries,
} from './debian-packages.js';

test('dependsNames: first alternative of each clause, without versions or architecture qualifiers', () => {
  assert.deepEqual(
    dependsNames(
      'libc6 (>= 2.34), libcrypt1 (>= 1:4.1.0), debconf (>= 0.5) | debconf-2.0, python3:any, nginx-common (<< 1.22.1-9.1~)',
    ),
    ['libc6', 'libcrypt1', 'debconf', 'python3', 'nginx-common'],
  );
  assert.deepEqual(dependsNames(''), []);
  assert.deepEqual(dependsNames('\n'), []);
});

test('libraryClosure: library packages reachable through dependencies, each once, others not followed', () => {
  const db: Record<string, PackageInfo> = {
    libc6: { section: 'libs', depends: ['libgcc-s1'] },
    'libgcc-s1': { section: 'libs', depends: ['gcc-12-base', 'libc6'] },
    'gcc-12-base': { section: 'libs', depends: [] },
    libssl3: { section: 'libs', depends: ['libc6'] },
    iproute2: { section: 'net', depends: ['libbpf1'] },
    libbpf1: { section: 'libs', depends: [] },
    'libfoo-nonfree': { section: 'non-free/libs', depends: [] },
  };
  assert.deepEqual(
    libraryClosure(['libssl3', 'iproute2', 'nginx-common', 'libfoo-nonfree'], (p) => db[p]),
    ['libssl3', 'libfoo-nonfree', 'libc6', 'libgcc-s1', 'gcc-12-base'],
  );
});

test('isRuntimePath: documentation and shared data stay out of images', () => {
  assert.equal(isRuntimePath('/lib/x86_64-linux-gnu/libc.so.6'), true);
  assert.equal(isRuntimePath('/usr/share/doc/libc6/copyright'), false);
  assert.equal(isRuntimePath('/.'), false);
  assert.equal(isRuntimePath('package diverts others to: /bin/sh.distrib'), false, 'dpkg -L notes are not paths');
});

test('unpackWithLibraries: a .deb unpacked beside the installed libraries it depends on', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-deb-'));
  try {
    const src = path.join(dir, 'src');
    fs.mkdirSync(path.join(src, 'DEBIAN'), { recursive: true });
    fs.mkdirSync(path.join(src, 'usr/sbin'), { recursive: true });
    fs.writeFileSync(path.join(src, 'usr/sbin/hello'), '#!/bin/sh\necho hello\n', { mode: 0o755 });
    fs.writeFileSync(
      path.join(src, 'DEBIAN/control'),
      'Package: hello\nVersion: 1.0\nArchitecture: all\nMaintainer: tskube <tskube@example.invalid>\nDepends: libc6 (>= 2.34), hello-data | other\nDescription: test\n',
    );
    execFileSync('dpkg-deb', ['--root-owner-group', '-b', src, path.join(dir, 'hello.deb')], { stdio: 'pipe' });
    const rootfs = path.join(dir, 'rootfs');
    const libs = unpackWithLibraries([path.join(dir, 'hello.deb')], rootfs);
    assert.equal(libs[0], 'libc6');
    assert.ok(fs.existsSync(path.join(rootfs, 'usr/sbin/hello')));
    // The ELF interpreter path dynamic binaries name, and libc itself, resolve inside the rootfs.
    const loader = path.join(rootfs, 'lib64/ld-linux-x86-64.so.2');
    assert.ok(fs.lstatSync(loader).isSymbolicLink() || fs.lstatSync(loader).isFile());
    assert.ok(fs.statSync(path.join(rootfs, 'lib/x86_64-linux-gnu/libc.so.6')).isFile());
    assert.ok(!fs.existsSync(path.join(rootfs, 'usr/share/doc')), 'no documentation copied');
    assert.throws(() => unpackWithLibraries([path.join(dir, 'missing.deb')], rootfs), /missing\.deb: not downloaded/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
