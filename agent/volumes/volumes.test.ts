import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import type { KObj } from '../../kube/client.js';
import { memoryLogger } from '../../kube/log.js';
import { containerEnv, expand, serviceEnv } from '../pods/env.js';
import { ApiObjects } from './api-objects.js';
import { writeAtomic } from './atomic-writer.js';
import { isMountPoint, mountsUnder, unmountAll } from './mounts.js';
import { containerMounts, MountError, VolumeManager } from './volume-manager.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-vol-'));
after(async () => {
  await unmountAll(root);
  fs.rmSync(root, { recursive: true, force: true });
});

/** API objects from maps instead of an apiserver; tokens are numbered so rotation shows. */
class FakeObjects extends ApiObjects {
  readonly cms = new Map<string, KObj>();
  readonly secrets = new Map<string, KObj>();
  tokenCalls = 0;
  override async configMap(ns: string, name: string) {
    return structuredClone(this.cms.get(`${ns}/${name}`));
  }
  override async secret(ns: string, name: string) {
    return structuredClone(this.secrets.get(`${ns}/${name}`));
  }
  override async token(pod: KObj, audience: string | undefined, exp: number) {
    return `token-${++this.tokenCalls}-${pod.metadata.name}-${audience ?? 'api'}-${exp}`;
  }
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const read = (p: string) => fs.readFileSync(p, 'utf8');
const mode = (p: string) => fs.statSync(p).mode & 0o777;

function pod(volumes: KObj[], extra: KObj = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'ns',
      uid: `uid-${Math.random().toString(36).slice(2)}`,
      labels: { app: 'x', tier: 'web' },
    },
    spec: {
      containers: [{ name: 'c', image: 'i', resources: { limits: { memory: '64Mi', cpu: '250m' } } }],
      volumes,
      ...extra,
    },
  } as unknown as Pod;
}

test('writeAtomic: files through ..data, modes, an update swaps in one rename, dropped names disappear', async () => {
  const dir = path.join(root, 'atomic');
  assert.equal(
    await writeAtomic(
      dir,
      new Map([
        ['a', { data: Buffer.from('1'), mode: 0o644 }],
        ['sub/b', { data: Buffer.from('2'), mode: 0o600 }],
      ]),
    ),
    true,
  );
  assert.equal(read(path.join(dir, 'a')), '1');
  assert.equal(read(path.join(dir, 'sub/b')), '2');
  assert.equal(mode(path.join(dir, 'sub/b')), 0o600);
  assert.equal(fs.readlinkSync(path.join(dir, 'a')), '..data/a');
  const first = fs.readlinkSync(path.join(dir, '..data'));
  assert.equal(
    await writeAtomic(
      dir,
      new Map([
        ['a', { data: Buffer.from('1'), mode: 0o644 }],
        ['sub/b', { data: Buffer.from('2'), mode: 0o600 }],
      ]),
    ),
    false,
    'same content: no change',
  );
  await writeAtomic(dir, new Map([['a', { data: Buffer.from('new'), mode: 0o644 }]]));
  assert.notEqual(fs.readlinkSync(path.join(dir, '..data')), first);
  assert.equal(read(path.join(dir, 'a')), 'new');
  assert.equal(fs.existsSync(path.join(dir, 'sub')), false);
  assert.deepEqual(
    fs.readdirSync(dir).filter((e) => e.startsWith('..') && e !== '..data').length,
    1,
    'the old timestamped dir is gone',
  );
});

test('configMap, secret (on tmpfs), downwardAPI and projected volumes, with items, modes and optional', async () => {
  const objects = new FakeObjects();
  objects.cms.set('ns/cfg', { data: { 'app.conf': 'x=1', other: 'o' }, binaryData: { bin: b64('\x00\x01') } });
  objects.secrets.set('ns/creds', { data: { user: b64('admin'), pass: b64('s3cret') } });
  const vm = new VolumeManager({ rootDir: root, log: memoryLogger(), objects });
  const p = pod([
    { name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'app.conf', path: 'conf/app.conf', mode: 0o600 }] } },
    { name: 'all', configMap: { name: 'cfg', defaultMode: 0o440 } },
    { name: 'creds', secret: { secretName: 'creds' } },
    { name: 'maybe', configMap: { name: 'absent', optional: true } },
    {
      name: 'info',
      downwardAPI: {
        items: [
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' } },
        ],
      },
    },
    {
      name: 'api',
      projected: {
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
          { configMap: { name: 'cfg', items: [{ key: 'other', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
    { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
  ]);
  const v = await vm.setUp(p, { podIP: '10.0.0.5', hostIP: '10.0.0.1' });
  const at = (name: string, rel: string) => path.join(v.get(name)!.hostPath, rel);
  assert.equal(read(at('cfg', 'conf/app.conf')), 'x=1');
  assert.equal(mode(at('cfg', 'conf/app.conf')), 0o600);
  assert.deepEqual(
    fs
      .readdirSync(v.get('all')!.hostPath)
      .filter((e) => !e.startsWith('..'))
      .sort(),
    ['app.conf', 'bin', 'other'],
  );
  assert.equal(mode(at('all', 'other')), 0o440);
  assert.deepEqual([...fs.readFileSync(at('all', 'bin'))], [0, 1]);
  assert.equal(read(at('creds', 'pass')), 's3cret');
  assert.deepEqual(
    fs.readdirSync(v.get('maybe')!.hostPath).filter((e) => !e.startsWith('..')),
    [],
  );
  assert.equal(read(at('info', 'labels')), 'app="x"\ntier="web"');
  assert.equal(read(at('info', 'mem')), '64');
  assert.equal(read(at('api', 'token')), 'token-1-p-api-3607');
  assert.equal(read(at('api', 'ca.crt')), 'o');
  assert.equal(read(at('api', 'namespace')), 'ns');
  const mounts = await mountsUnder(root);
  for (const name of ['creds', 'api', 'scratch']) assert.ok(mounts.includes(v.get(name)!.hostPath), `${name} is tmpfs`);
  assert.equal(
    fs.statSync(v.get('scratch')!.hostPath).mode & 0o7777,
    0o1777,
    "a memory emptyDir is a tmpfs's own root",
  );
  assert.ok(!mounts.includes(v.get('cfg')!.hostPath), 'configMaps live on disk');
  assert.deepEqual(
    await containerMounts(
      path.join(root, 'unused'),
      {
        name: 'c',
        volumeMounts: [
          { name: 'cfg', mountPath: '/etc/app' },
          { name: 'scratch', mountPath: '/s' },
        ],
      },
      v,
    ),
    [
      { container_path: '/etc/app', host_path: v.get('cfg')!.hostPath, readonly: true },
      { container_path: '/s', host_path: v.get('scratch')!.hostPath, readonly: false },
    ],
  );

  // Set up again (every pod sync does) while the API is unreachable: the contents already there are used.
  const down = new FakeObjects();
  down.configMap = async () => Promise.reject(new Error('connection refused'));
  down.token = async () => Promise.reject(new Error('connection refused'));
  const again = await new VolumeManager({ rootDir: root, log: memoryLogger(), objects: down }).setUp(p, {
    podIP: '10.0.0.5',
    hostIP: '10.0.0.1',
  });
  assert.equal(read(path.join(again.get('api')!.hostPath, 'token')), 'token-1-p-api-3607');

  // A ConfigMap edit reaches the files on the next resync.
  objects.cms.set('ns/cfg', { data: { 'app.conf': 'x=2', other: 'o' } });
  await vm.resync();
  assert.equal(read(at('cfg', 'conf/app.conf')), 'x=2');
  assert.equal(fs.existsSync(at('all', 'bin')), false);

  await vm.tearDown(p.metadata!.uid!);
  assert.deepEqual(await mountsUnder(path.join(root, 'pods', p.metadata!.uid!)), []);
  assert.equal(fs.existsSync(path.join(root, 'pods', p.metadata!.uid!)), false);
});

test("a pod's volumes are set up once per kubelet run: later syncs reuse them (no mount table read) until the pod is torn down", async () => {
  const objects = new FakeObjects();
  objects.cms.set('ns/cfg', { data: { a: '1' } });
  const vm = new VolumeManager({ rootDir: root, log: memoryLogger(), objects });
  const p = pod([
    { name: 'cfg', configMap: { name: 'cfg' } },
    { name: 'api', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
  ]);
  const first = await vm.setUp(p, { podIP: '', hostIP: '10.0.0.1' });
  const tokenDir = first.get('api')!.hostPath;
  assert.ok((await mountsUnder(root)).includes(tokenDir));
  // Behind the kubelet's back: a sync that looked would mount and write the token again.
  execFileSync('umount', [tokenDir]);
  const second = await vm.setUp(p, { podIP: '10.0.0.7', hostIP: '10.0.0.1' });
  assert.deepEqual(second, first);
  assert.ok(!(await mountsUnder(root)).includes(tokenDir), 'the second sync did not set the volume up again');
  // The newer context (the pod IP) still reaches the resync.
  objects.cms.set('ns/cfg', { data: { a: '2' } });
  await vm.resync();
  assert.equal(read(path.join(first.get('cfg')!.hostPath, 'a')), '2');
  await vm.tearDown(p.metadata!.uid!);
  const third = await vm.setUp(p, { podIP: '10.0.0.7', hostIP: '10.0.0.1' });
  assert.ok((await mountsUnder(root)).includes(third.get('api')!.hostPath), 'set up again after a tear-down');
  await vm.tearDown(p.metadata!.uid!);
});

test("persistentVolumeClaim volumes: the bound volume's hostPath or local path; unbound or missing claims are MountErrors. fsGroup, subPathExpr and mountPropagation", async () => {
  const objects = new FakeObjects();
  const claims = new Map<string, KObj>();
  const pvs = new Map<string, KObj>();
  objects.claim = async (ns: string, name: string) => structuredClone(claims.get(`${ns}/${name}`));
  objects.volume = async (name: string) => structuredClone(pvs.get(name));
  const vm = new VolumeManager({ rootDir: root, log: memoryLogger(), objects });
  const data = path.join(root, 'pv-data');
  claims.set('ns/data', { metadata: { name: 'data' }, spec: { volumeName: 'pv1' }, status: { phase: 'Bound' } });
  pvs.set('pv1', { metadata: { name: 'pv1' }, spec: { hostPath: { path: data, type: 'DirectoryOrCreate' } } });
  claims.set('ns/wait', { metadata: { name: 'wait' }, spec: {}, status: { phase: 'Pending' } });
  const p = pod(
    [
      { name: 'd', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'scratch', emptyDir: {} },
    ],
    { securityContext: { fsGroup: 2345 } },
  );
  const v = await vm.setUp(p, { podIP: '10.0.0.5', hostIP: '10.0.0.1' });
  assert.deepEqual(v.get('d'), { hostPath: data, readOnly: false });
  assert.ok(fs.statSync(data).isDirectory(), 'DirectoryOrCreate made it');
  assert.notEqual(fs.statSync(data).gid, 2345, 'hostPath volumes keep their ownership (as upstream)');
  const scratch = fs.statSync(v.get('scratch')!.hostPath);
  assert.equal(scratch.gid, 2345, 'emptyDir gets the fsGroup');
  assert.ok(scratch.mode & 0o2000, 'setgid, so new files inherit the group');
  await vm.setUp(p, { podIP: '10.0.0.5', hostIP: '10.0.0.1' });
  assert.ok(
    fs.statSync(v.get('scratch')!.hostPath).mode & 0o2000,
    'still setgid after the next sync sets the volumes up again',
  );
  await assert.rejects(
    vm.setUp(pod([{ name: 'w', persistentVolumeClaim: { claimName: 'wait' } }]), { podIP: '', hostIP: '' }),
    (e: unknown) =>
      e instanceof MountError &&
      /PVC ns\/wait has non-bound phase \("Pending"\) or empty pvc.Spec.VolumeName \(""\)/.test(e.message),
  );
  await assert.rejects(
    vm.setUp(pod([{ name: 'm', persistentVolumeClaim: { claimName: 'nope' } }]), { podIP: '', hostIP: '' }),
    (e: unknown) => e instanceof MountError && /persistentvolumeclaims "nope" not found/.test(e.message),
  );

  fs.mkdirSync(path.join(data, 'web-0'), { recursive: true });
  fs.writeFileSync(path.join(data, 'web-0', 'marker'), 'mine');
  const c = {
    name: 'c',
    volumeMounts: [{ name: 'd', mountPath: '/data', subPathExpr: '$(POD_NAME)', mountPropagation: 'HostToContainer' }],
  };
  const mounts = await containerMounts(
    path.join(root, 'pods', p.metadata!.uid!),
    c,
    v,
    new Map([['POD_NAME', 'web-0']]),
  );
  assert.equal(mounts[0]!.propagation, 1);
  assert.equal(read(path.join(mounts[0]!.host_path!, 'marker')), 'mine', 'subPathExpr expanded from the env');
  await assert.rejects(
    containerMounts(
      root,
      { name: 'c', volumeMounts: [{ name: 'd', mountPath: '/x', subPathExpr: '$(UP)' }] },
      v,
      new Map([['UP', '../..']]),
    ),
    /must be a relative path without '\.\.'/,
  );
  await assert.rejects(
    containerMounts(
      root,
      { name: 'c', volumeMounts: [{ name: 'd', mountPath: '/x', mountPropagation: 'Bidirectional' }] },
      v,
    ),
    /Bidirectional mount propagation is available only to privileged containers/,
  );
  await vm.tearDown(p.metadata!.uid!);
});

test('a missing ConfigMap, key or Secret, or a failed hostPath check, is a MountError naming the volume', async () => {
  const objects = new FakeObjects();
  objects.cms.set('ns/cfg', { data: { a: '1' } });
  const vm = new VolumeManager({ rootDir: root, log: memoryLogger(), objects });
  const fail = (v: KObj) => vm.setUp(pod([v]), { podIP: '', hostIP: '' });
  await assert.rejects(
    fail({ name: 'c1', configMap: { name: 'nope' } }),
    (e: MountError) => e.message === 'MountVolume.SetUp failed for volume "c1" : configmap "nope" not found',
  );
  await assert.rejects(
    fail({ name: 'c2', configMap: { name: 'cfg', items: [{ key: 'b', path: 'b' }] } }),
    /configmap references non-existent config key: b/,
  );
  await assert.rejects(
    fail({ name: 's', secret: { secretName: 'gone' } }),
    /MountVolume.SetUp failed for volume "s" : secret "gone" not found/,
  );
  await assert.rejects(
    fail({ name: 'h', hostPath: { path: '/etc/hostname', type: 'Directory' } }),
    /hostPath type check failed: \/etc\/hostname is not a directory/,
  );
  await assert.rejects(
    fail({ name: 'x', configMap: { name: 'cfg', items: [{ key: 'a', path: '../escape' }] } }),
    /must not contain '\.\.'/,
  );
  await unmountAll(path.join(root, 'pods'));
});

test('env: Service variables, envFrom with prefix, key refs, downward API, $(VAR) expansion and upstream errors', async () => {
  const objects = new FakeObjects();
  objects.cms.set('ns/cfg', { data: { LEVEL: 'debug', PORT: '8080' } });
  objects.secrets.set('ns/creds', { data: { password: b64('pw') } });
  const services: KObj[] = [
    {
      metadata: { name: 'kubernetes', namespace: 'default' },
      spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] },
    },
    {
      metadata: { name: 'my-db', namespace: 'ns' },
      spec: { clusterIP: '10.96.0.9', ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }] },
    },
    { metadata: { name: 'headless', namespace: 'ns' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } },
    { metadata: { name: 'elsewhere', namespace: 'other' }, spec: { clusterIP: '10.96.0.7', ports: [{ port: 80 }] } },
  ];
  const p = pod([]);
  const svc = serviceEnv(p, services);
  assert.equal(svc.get('KUBERNETES_SERVICE_HOST'), '10.96.0.1');
  assert.equal(svc.get('KUBERNETES_SERVICE_PORT'), '443');
  assert.equal(svc.get('KUBERNETES_SERVICE_PORT_HTTPS'), '443');
  assert.equal(svc.get('KUBERNETES_PORT'), 'tcp://10.96.0.1:443');
  assert.equal(svc.get('MY_DB_PORT_5432_TCP_ADDR'), '10.96.0.9');
  assert.equal(svc.get('MY_DB_SERVICE_PORT_SQL'), '5432');
  assert.equal(svc.has('HEADLESS_SERVICE_HOST'), false);
  assert.equal(svc.has('ELSEWHERE_SERVICE_HOST'), false);
  assert.deepEqual(
    [...serviceEnv(pod([], { enableServiceLinks: false }), services).keys()].filter(
      (k) => !k.startsWith('KUBERNETES_'),
    ),
    [],
    'enableServiceLinks: false keeps only the kubernetes Service',
  );

  const c = {
    name: 'c',
    image: 'i',
    resources: { limits: { cpu: '250m' } },
    envFrom: [{ configMapRef: { name: 'cfg' }, prefix: 'CFG_' }],
    env: [
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
      { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'LEVEL' } } },
      { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'missing', optional: true } } },
      { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'CPU_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
      { name: 'URL', value: 'http://$(POD):$(CFG_PORT)/$(UNSET)$$(LITERAL)' },
      { name: 'API', value: 'https://$(KUBERNETES_SERVICE_HOST)' },
    ],
  };
  const env = await containerEnv(p, c, objects, { podIP: '10.0.0.5', hostIP: '10.0.0.1' }, services);
  assert.equal(env.get('CFG_LEVEL'), 'debug');
  assert.equal(env.get('PASSWORD'), 'pw');
  assert.equal(env.get('LEVEL'), 'debug');
  assert.equal(env.has('OPT'), false);
  assert.equal(env.get('POD'), 'p');
  assert.equal(env.get('IP'), '10.0.0.5');
  assert.equal(env.get('CPU_M'), '250');
  assert.equal(env.get('URL'), 'http://p:8080/$(UNSET)$(LITERAL)');
  assert.equal(env.get('API'), 'https://10.96.0.1');
  assert.equal(env.get('MY_DB_SERVICE_HOST'), '10.96.0.9');
  assert.equal(expand('$(A)-$$(A)-$(B', new Map([['A', '1']])), '1-$(A)-$(B');

  const bad = (e: KObj) =>
    containerEnv(p, { name: 'c', image: 'i', env: [e as { name: string }] }, objects, { podIP: '', hostIP: '' }, []);
  await assert.rejects(
    bad({ name: 'X', valueFrom: { configMapKeyRef: { name: 'nope', key: 'k' } } }),
    /^Error: configmap "nope" not found$/,
  );
  await assert.rejects(
    bad({ name: 'X', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'k' } } }),
    /couldn't find key k in ConfigMap ns\/cfg/,
  );
  await assert.rejects(
    bad({ name: 'X', valueFrom: { secretKeyRef: { name: 'creds', key: 'k' } } }),
    /couldn't find key k in Secret ns\/creds/,
  );
});

test("isMountPoint: a directory on its parent's filesystem is not one, /proc is, a missing path is not", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-mp-'));
  try {
    assert.equal(isMountPoint(dir), false);
    assert.equal(isMountPoint(path.join(dir, 'missing')), false);
    assert.equal(isMountPoint('/proc'), true);
  } finally {
    fs.rmSync(dir, { recursive: true });
  }
});
