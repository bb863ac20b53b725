import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { test } from 'node:test';

import { commandLine, MountCommands, parseAnswer, shellWord } from './mount-commands.js';

test('command lines quote every word, so paths with spaces and quotes reach mount(8) as they are', () => {
  assert.equal(shellWord("/var/lib/kubelet/pods/x/it's here"), "'/var/lib/kubelet/pods/x/it'\\''s here'");
  assert.equal(
    commandLine('mount', ['-t', 'tmpfs', 'tmpfs', '/a b']),
    `'mount' '-t' 'tmpfs' 'tmpfs' '/a b' </dev/null 2>&1; echo "__tskube_rc=$?"\n`,
  );
  assert.equal(parseAnswer('mount: /x: permission denied.\n__tskube_rc=3'), undefined, 'no end of line yet');
  assert.deepEqual(parseAnswer('mount: /x: permission denied.\n__tskube_rc=32\n'), {
    text: 'mount: /x: permission denied.',
    code: 32,
  });
  assert.deepEqual(parseAnswer('__tskube_rc=0\n'), { text: '', code: 0 });
});

test('calls run one at a time through one shell; each gets its own outcome, with the output of a failure', async () => {
  const mc = new MountCommands();
  try {
    const results = await Promise.allSettled([
      mc.run('test', ["it's a b", '=', "it's a b"]),
      mc.run('ls', ['/nonexistent-tskube-path']),
      mc.run('test', ["it's", '=', 'its']),
      mc.run('true', []),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    assert.match(
      (results[1] as PromiseRejectedResult).reason.message,
      /^Command failed: ls \/nonexistent-tskube-path\nls: cannot access '\/nonexistent-tskube-path': No such file or directory$/,
    );
    assert.equal((results[2] as PromiseRejectedResult).reason.message, "Command failed: test it's = its");
    const shells = new Set<number>();
    for (let i = 0; i < 3; i++) {
      await mc.run('true', []);
      shells.add((mc as unknown as { sh: ChildProcess }).sh.pid!);
    }
    assert.equal(shells.size, 1, 'the same shell for every call');
  } finally {
    mc.close();
  }
});

test('a call in flight when the shell dies fails; the next call gets a new shell', async () => {
  const mc = new MountCommands();
  try {
    await mc.run('true', []);
    const first = (mc as unknown as { sh: ChildProcess }).sh;
    const slow = mc.run('sleep', ['3']);
    first.kill('SIGKILL');
    await assert.rejects(slow, /the shell running mount\(8\) is gone/);
    await mc.run('true', []);
    assert.notEqual((mc as unknown as { sh: ChildProcess }).sh.pid, first.pid);
  } finally {
    mc.close();
  }
});
