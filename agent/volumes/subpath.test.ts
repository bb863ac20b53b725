// subPath and pod-path confinement: a subPath can never mount
// something outside its volume, even through a symlink a container planted;
// a uid that is not one path element never names a directory; pod and volume
// directories are closed to other host users.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { memoryLogger } from '../../kube/log.js';
import { mountsUnder, unmountAll } from './mounts.js';
import { mountSubPath, openInside, SubPathError, subPathTarget } from './subpath.js';
import { containerMounts, podDir, VolumeManager } from './volume-manager.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-subpath-'));
after(async () => {
  await unmountAll(root);
  fs.rmSync(root, { recursive: true, force: true });
});

function volume(name: string): string {
  const v = path.join(root, name, 'vol');
  fs.mkdirSync(v, { recursive: true });
  fs.mkdirSync(path.join(root, name, 'outside'));
  fs.writeFileSync(path.join(root, name, 'outside', 'secret'), 'host data');
  return v;
}

test('a subPath inside the volume is bind-mounted from the opened file; missing directories are made', async () => {
  const v = volume('inside');
  fs.mkdirSync(path.join(v, 'conf'));
  fs.writeFileSync(path.join(v, 'conf', 'app.ini'), 'x=1');
  // A symlink that stays inside the volume is followed, as upstream.
  fs.symlinkSync('conf', path.join(v, 'link'));
  const t1 = path.join(root, 'inside', 'targets', '0');
  assert.equal(await mountSubPath(v, 'conf/app.ini', t1), t1);
  assert.equal(fs.readFileSync(t1, 'utf8'), 'x=1');
  const t2 = path.join(root, 'inside', 'targets', '1');
  await mountSubPath(v, 'link', t2);
  assert.deepEqual(fs.readdirSync(t2), ['app.ini']);
  const t3 = path.join(root, 'inside', 'targets', '2');
  // A missing subPath is made with the volume's own mode, whatever the umask (an fsGroup emptyDir: 2777, or 3777).
  fs.chmodSync(v, 0o3777);
  await mountSubPath(v, 'new/dir', t3);
  assert.ok(fs.statSync(path.join(v, 'new', 'dir')).isDirectory());
  assert.equal(fs.statSync(path.join(v, 'new', 'dir')).mode & 0o7777, 0o3777);
  // Through AtomicWriter's layout (data -> ..data -> ..<timestamp>/data), as configMap and downwardAPI volumes are.
  fs.mkdirSync(path.join(v, '..2026_12_07_12_00_00.1', 'downward'), { recursive: true });
  fs.writeFileSync(path.join(v, '..2026_12_07_12_00_00.1', 'downward', 'podname'), 'web');
  fs.symlinkSync('..2026_12_07_12_00_00.1', path.join(v, '..data'));
  fs.symlinkSync('..data/downward', path.join(v, 'downward'));
  const t4 = path.join(root, 'inside', 'targets', '3');
  await mountSubPath(v, 'downward/podname', t4);
  assert.equal(fs.readFileSync(t4, 'utf8'), 'web');
  // Mounting again (a container restart) reuses the bind mount.
  assert.equal(await mountSubPath(v, 'conf/app.ini', t1), t1);
  assert.equal((await mountsUnder(path.join(root, 'inside', 'targets'))).length, 4);
});

test('a planted symlink to the host, absolute or relative, and .. are refused', async () => {
  const v = volume('escape');
  fs.symlinkSync('/etc', path.join(v, 'etc'));
  fs.symlinkSync('../outside', path.join(v, 'up'));
  fs.mkdirSync(path.join(v, 'd'));
  fs.symlinkSync('../../outside/secret', path.join(v, 'd', 'leak'));
  for (const sub of ['etc', 'up', 'up/secret', 'd/leak', '../outside', 'd/../../outside']) {
    await assert.rejects(
      mountSubPath(v, sub, path.join(root, 'escape', 't', sub.replace(/\W/g, '_'))),
      SubPathError,
      sub,
    );
  }
  assert.deepEqual(await mountsUnder(path.join(root, 'escape', 't')), []);
  // The element-by-element open refuses a symlink even where the path check was passed (a swap after resolving).
  assert.throws(() => openInside(fs.realpathSync(v), 'up/secret'), SubPathError);
});

test('containerMounts names the volume and container of a refused subPath; pod paths refuse unsafe uids', async () => {
  const v = volume('named');
  fs.symlinkSync('/', path.join(v, 'root'));
  const vols = new Map([['data', { hostPath: v, readOnly: false }]]);
  await assert.rejects(
    containerMounts(
      path.join(root, 'named', 'pod'),
      { name: 'app', volumeMounts: [{ name: 'data', mountPath: '/d', subPath: 'root' }] },
      vols,
    ),
    (e: Error) =>
      e instanceof SubPathError &&
      e.message.startsWith('failed to prepare subPath for volumeMount "data" of container "app": '),
  );
  const ok = await containerMounts(
    path.join(root, 'named', 'pod'),
    { name: 'app', volumeMounts: [{ name: 'data', mountPath: '/d', subPath: 'sub' }] },
    vols,
  );
  assert.deepEqual(ok, [
    {
      container_path: '/d',
      host_path: subPathTarget(path.join(root, 'named', 'pod'), 'data', 'app', 0),
      readonly: false,
    },
  ]);
  for (const uid of ['../../canary', '.', '..', 'a/b', '', '../x'])
    assert.throws(() => podDir('/var/lib/kubelet', uid), /pod uid/, uid);
  assert.equal(
    podDir('/var/lib/kubelet', '0f8e9c6a-1234-4bcd-9abc-0123456789ab'),
    '/var/lib/kubelet/pods/0f8e9c6a-1234-4bcd-9abc-0123456789ab',
  );
});

test('pod and volume directories are 0750: another host user cannot read a pod volume', async () => {
  const vm = new VolumeManager({ rootDir: path.join(root, 'kubelet'), log: memoryLogger() });
  const pod = {
    metadata: { name: 'p', namespace: 'ns', uid: 'perm-1' },
    spec: { containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'scratch', emptyDir: {} }] },
  } as unknown as Pod;
  const vols = await vm.setUp(pod, { podIP: '', hostIP: '' });
  fs.writeFileSync(path.join(vols.get('scratch')!.hostPath, 'token'), 'secret');
  for (const d of [
    podDir(path.join(root, 'kubelet'), 'perm-1'),
    path.join(podDir(path.join(root, 'kubelet'), 'perm-1'), 'volumes'),
    path.dirname(vols.get('scratch')!.hostPath),
  ]) {
    assert.equal(fs.statSync(d).mode & 0o777, 0o750, d);
  }
  fs.chmodSync(root, 0o755);
  const r = (() => {
    try {
      return execFileSync(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', path.join(vols.get('scratch')!.hostPath, 'token')],
        { stdio: 'pipe' },
      ).toString();
    } catch (e) {
      return String((e as { stderr?: Buffer }).stderr ?? e);
    }
  })();
  assert.match(r, /Permission denied/);
  await vm.tearDown('perm-1');
});
