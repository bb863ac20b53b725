import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { cgroupPids, shimPidsUnder } from './leftovers.js';

test("a node's shims are found by their -address under its dir, and only those", () => {
  const proc = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
  const cmd = (pid: number, argv: string[]): void => {
    fs.mkdirSync(path.join(proc, String(pid)));
    fs.writeFileSync(path.join(proc, String(pid), 'cmdline'), `${argv.join('\0')}\0`);
  };
  cmd(100, [
    '/usr/bin/containerd-shim-runc-v2',
    '-namespace',
    'k8s.io',
    '-id',
    'a',
    '-address',
    '/e2e/n1/containerd.sock',
  ]);
  cmd(101, [
    '/usr/bin/containerd-shim-runc-v2',
    '-namespace',
    'k8s.io',
    '-id',
    'b',
    '-address',
    '/e2e/n10/containerd.sock',
  ]);
  cmd(102, ['containerd', '--config', '/e2e/n1/config.toml', '-address', '/e2e/n1/containerd.sock']);
  cmd(103, ['sleep', '3600']);
  fs.mkdirSync(path.join(proc, 'self'));
  assert.deepEqual(shimPidsUnder('/e2e/n1', proc), [100]);
});

test('the processes of a cgroup tree are read from every level of the memory hierarchy', () => {
  const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-'));
  const at = (rel: string, procs: number[]): void => {
    fs.mkdirSync(path.join(mount, 'memory', rel), { recursive: true });
    fs.writeFileSync(path.join(mount, 'memory', rel, 'cgroup.procs'), procs.map((p) => `${p}\n`).join(''));
  };
  at('tskube-e2e/n1', []);
  at('tskube-e2e/n1/kubepods/besteffort/podx', [7, 8]);
  at('tskube-e2e/n1/kubepods/podY', [9]);
  at('tskube-e2e/n2/kubepods', [10]);
  assert.deepEqual(cgroupPids('/tskube-e2e/n1', mount).sort(), [7, 8, 9]);
});
