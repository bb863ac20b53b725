import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { chainRemoval } from '../proxy/cleanup.js';
import { installFiles, installPlan, OURS_MARK } from './install.js';
import { kubeletDefaults, ourLogLinks, resetTargets } from './reset.js';
import { type CriObject, stopPlan } from './stop-pods.js';

const container = (id: string, state: string, grace?: string, pod = 'web'): CriObject => ({
  id,
  state,
  labels: {
    'io.kubernetes.pod.name': pod,
    'io.kubernetes.pod.namespace': 'default',
    'io.kubernetes.container.name': `c-${id}`,
  },
  annotations:
    grace === undefined ? {} : ({ 'io.kubernetes.pod.terminationGracePeriod': grace } as Record<string, string>),
});

test('stopPlan: running containers get their pod grace period, capped; exited ones are left alone', () => {
  const plan = stopPlan(
    [
      container('a', 'CONTAINER_RUNNING', '5'),
      container('b', 'CONTAINER_RUNNING', '120'),
      container('c', 'CONTAINER_EXITED', '5'),
      container('d', 'CONTAINER_CREATED'),
      container('e', 'CONTAINER_RUNNING', 'junk'),
    ],
    30,
  );
  assert.deepEqual(
    plan.map((p) => [p.id, p.graceSec, p.pod, p.container]),
    [
      ['a', 5, 'default/web', 'c-a'],
      ['b', 30, 'default/web', 'c-b'],
      ['d', 30, 'default/web', 'c-d'],
      ['e', 30, 'default/web', 'c-e'],
    ],
  );
  assert.deepEqual(
    stopPlan([container('a', 'CONTAINER_RUNNING', '5')], 0).map((p) => p.graceSec),
    [0],
  );
  const bare = stopPlan([{ id: '0123456789abcdef', state: 'CONTAINER_RUNNING', labels: {}, annotations: {} }], 10)[0]!;
  assert.equal(bare.pod, '0123456789abc');
});

test('resetTargets: the dirs and sockets up recorded; flags win; no record means the defaults', () => {
  const t = resetTargets(
    '/d',
    {
      command: 'up',
      pid: 1,
      endpoint: 'unix:///d/containerd/containerd.sock',
      containerdConfig: '/d/containerd/config.toml',
      rootDir: '/d/kubelet',
      podLogsDir: '/d/pod-logs',
      cniConfDir: '/d/cni',
      podNetwork: 'host-gw',
    },
    {},
  );
  assert.equal(t.rootDir, '/d/kubelet');
  assert.equal(t.linksDir, '/d/containers');
  assert.equal(t.conflist, '/d/cni/10-tskube.conflist');
  assert.equal(t.podNetwork, true);
  assert.equal(t.kubepodsCgroup, undefined);
  assert.equal(
    resetTargets(
      '/d',
      { command: 'up', pid: 1, endpoint: 'x', rootDir: '/r', cgroupRoot: '/tskube-e2e/n1', cgroupDriver: 'cgroupfs' },
      {},
    ).kubepodsCgroup,
    '/tskube-e2e/n1/kubepods',
  );
  assert.equal(
    resetTargets(
      '/d',
      { command: 'up', pid: 1, endpoint: 'x', rootDir: '/r', cgroupRoot: '/', cgroupDriver: 'systemd' },
      {},
    ).kubepodsCgroup,
    '/kubepods.slice',
  );
  assert.equal(resetTargets('/d', undefined, { rootDir: '/k' }).rootDir, '/k');
  // No record: nothing but the data dir and what the flags name (reset cannot know the rest is the node's).
  const none = resetTargets('/nonexistent', undefined, {});
  assert.equal(none.rootDir, undefined);
  assert.equal(none.podLogsDir, undefined);
  assert.equal(none.linksDir, undefined);
  assert.equal(none.conflist, undefined);
  assert.equal(none.ipamDir, undefined);
  assert.equal(none.podNetwork, false);
  assert.equal(none.endpoint, 'unix:///run/containerd/containerd.sock');
  assert.equal(none.containerdConfig, undefined);
  // A node the systemd units ran: its kubelet config over the kubelet's defaults.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-reset-'));
  try {
    fs.writeFileSync(
      path.join(dir, 'kubelet-config.yaml'),
      'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n',
    );
    const unit = resetTargets('/var/lib/tskube', kubeletDefaults(path.join(dir, 'kubelet-config.yaml'), undefined), {});
    assert.equal(unit.rootDir, '/var/lib/kubelet');
    assert.equal(unit.podLogsDir, '/var/log/pods');
    assert.equal(unit.linksDir, '/var/log/containers');
    assert.equal(unit.conflist, '/etc/cni/net.d/10-tskube.conflist');
    assert.equal(unit.ipamDir, '/var/lib/cni/networks/tskube');
    assert.equal(unit.kubepodsCgroup, '/kubepods.slice');
    assert.equal(kubeletDefaults(path.join(dir, 'missing.yaml'), undefined), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(
    resetTargets(
      '/d',
      { command: 'join', pid: 1, endpoint: 'x', rootDir: '/r', cniConfDir: '/etc/cni/net.d', podNetwork: 'none' },
      {},
    ).conflist,
    undefined,
  );
});

test("ourLogLinks: only links into the pod logs dir (another agent's links in /var/log/containers stay)", () => {
  const entries = [
    { name: 'a_default_c-1.log', target: '/var/log/pods/default_a_1/c/0.log' },
    { name: 'b_default_c-2.log', target: '/var/log/pods-other/x.log' },
    { name: 'c.log', target: undefined },
  ];
  assert.deepEqual(ourLogLinks(entries, '/var/log/pods'), ['a_default_c-1.log']);
});

test('chainRemoval: the pod network chains and the jumps to them go; other rules stay', () => {
  const save = [
    '*nat',
    ':POSTROUTING ACCEPT [0:0]',
    ':TSKUBE-POSTRTG - [0:0]',
    ':OTHER - [0:0]',
    '-A POSTROUTING -m comment --comment "tskube pod network masquerade" -j TSKUBE-POSTRTG',
    '-A POSTROUTING -j OTHER',
    '-A TSKUBE-POSTRTG -s 10.244.0.0/24 -j MASQUERADE',
    'COMMIT',
  ].join('\n');
  assert.equal(
    chainRemoval('nat', save, (c) => c === 'TSKUBE-POSTRTG'),
    [
      '*nat',
      ':TSKUBE-POSTRTG - [0:0]',
      '-D POSTROUTING -m comment --comment "tskube pod network masquerade" -j TSKUBE-POSTRTG',
      '-X TSKUBE-POSTRTG',
      'COMMIT',
      '',
    ].join('\n'),
  );
  assert.equal(
    chainRemoval('nat', save, (c) => c === 'NONE'),
    '',
  );
});

/** Relative modules a module loads when it is imported (type-only imports and dynamic imports do not load anything). */
function staticGraph(entries: string[]): Set<string> {
  const seen = new Set<string>();
  const queue = entries.map((e) => path.resolve(e));
  while (queue.length) {
    const f = queue.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const m of fs.readFileSync(f, 'utf8').matchAll(/^import\s+(?!type\b)([^;]*?)\s+from\s+'(\.[^']+)'/gms)) {
      const names = m[1]!.trim();
      if (
        /^\{[^}]*\}$/.test(names) &&
        names
          .replace(/[{}\s]/g, '')
          .split(',')
          .filter(Boolean)
          .every((n) => n.startsWith('type'))
      )
        continue;
      queue.push(path.resolve(path.dirname(f), m[2]!.replace(/\.js$/, '.ts')));
    }
  }
  return new Set([...seen].map((f) => path.relative(process.cwd(), f)));
}

test('lazy loading: the CLI entry loads no subcommand; the kubelet never loads the apiserver, the proxy never loads the kubelet', () => {
  const entry = staticGraph(['cli/tskube.ts']);
  assert.deepEqual(
    [...entry].filter((f) => /^(agent|apiserver|proxy|dns)\//.test(f)),
    [],
  );
  const kubelet = staticGraph(['cli/agent-config.ts', 'cli/agent.ts']);
  assert.ok(kubelet.has('agent/kubelet.ts'), 'the walk follows imports');
  assert.deepEqual(
    [...kubelet].filter((f) => f.startsWith('apiserver/') || f.startsWith('dns/')),
    [],
  );
  const proxy = staticGraph(['cli/proxy-config.ts', 'proxy/main.ts']);
  assert.ok(proxy.has('proxy/nftables/backend.ts'));
  assert.deepEqual(
    [...proxy].filter((f) => f.startsWith('agent/') || f.startsWith('apiserver/')),
    [],
  );
});

test('every subcommand answers --help and -h with its flags and defaults, and exits 0', () => {
  const tskube = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'cli/tskube.ts', ...args], { encoding: 'utf8' });
  const top = tskube(['--help']);
  assert.equal(top.status, 0, top.stderr);
  const names = /^usage: tskube (\S+) \[flags\]/.exec(top.stdout)![1]!.split('|');
  assert.deepEqual(names, [
    'up',
    'join',
    'reset',
    'agent',
    'proxy',
    'apiserver',
    'addon',
    'dns',
    'images',
    'install',
    'token',
  ]);
  for (const name of names) {
    const r = tskube([name, name === 'token' ? '-h' : '--help']);
    assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^usage: tskube ${name}`), name);
    assert.match(r.stdout, /\n {2}--[a-z-]+\n {6}\S/, `${name} lists flags`);
  }
  assert.match(tskube(['up', '--help']).stdout, /--pod-stop-timeout\n.*Default 30s/);
  assert.match(tskube(['help', 'reset']).stdout, /--force\n/);
  const bad = tskube(['nope']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown command "nope"/);
});

test("`--version` and a `kubelet` link answer as upstream's kubelet (kubeadm's preflight runs `kubelet --version`)", () => {
  const agent = spawnSync(process.execPath, ['--import', 'tsx', 'cli/tskube.ts', 'agent', '--version'], {
    encoding: 'utf8',
  });
  assert.equal(agent.status, 0, agent.stderr);
  assert.equal(agent.stdout, 'Kubernetes v1.37.2-tskube\n');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-kubelet-link-'));
  try {
    fs.symlinkSync(path.resolve('cli/tskube.ts'), path.join(dir, 'kubelet'));
    const link = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, 'kubelet'), '--version'], {
      encoding: 'utf8',
    });
    assert.equal(link.stdout, 'Kubernetes v1.37.2-tskube\n', link.stderr);
    const help = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, 'kubelet'), '--help'], {
      encoding: 'utf8',
    });
    assert.match(help.stdout, /^usage: tskube agent/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("install: a control plane gets containerd's config for its cgroup driver, the registry and the apiserver's address; a worker mirrors the first node's registry", () => {
  const cp = installPlan(['--node-ip=192.0.2.10'], { hasSystemd: true, firstIP: () => '10.0.0.1' });
  assert.equal(cp.cgroupDriver, 'systemd');
  const files = new Map(installFiles(cp).map((f) => [f.path, f]));
  const containerd = files.get('/etc/containerd/config.toml')!;
  assert.ok(containerd.content.startsWith(OURS_MARK));
  assert.match(containerd.content, /SystemdCgroup = true/);
  assert.match(containerd.content, /sandbox_image = "127\.0\.0\.1:5000\/tskube\/pause:1"/);
  assert.match(containerd.content, /config_path = "\/etc\/containerd\/certs\.d"/);
  assert.equal(containerd.keep, false);
  assert.match(files.get('/etc/tskube/kubelet-config.yaml')!.content, /cgroupDriver: systemd/);
  assert.equal(files.get('/etc/tskube/kubelet-config.yaml')!.keep, true);
  assert.match(files.get('/etc/tskube/apiserver.env')!.content, /--advertise-address=192\.0\.2\.10 /);
  assert.match(
    files.get('/etc/tskube/kubelet-config.yaml')!.content,
    /^clusterDNS: \[10\.96\.0\.10\]\nclusterDomain: cluster\.local$/m,
  );
  assert.match(
    files.get('/etc/tskube/dns.env')!.content,
    /--dns-address=192\.0\.2\.10:53 .*--publish-address=192\.0\.2\.10 --allow-from=10\.244\.0\.0\/16,10\.96\.0\.0\/12"/,
  );
  assert.match(files.get('/etc/tskube/registry.yml')!.content, /rootdirectory: \/var\/lib\/tskube\/registry/);
  assert.match(
    files.get('/etc/containerd/certs.d/127.0.0.1:5000/hosts.toml')!.content,
    /\[host\."http:\/\/127\.0\.0\.1:5000"\]/,
  );

  const worker = installPlan(['--role=worker', '--registry-mirror=192.0.2.10:5000'], {
    hasSystemd: false,
    firstIP: () => '10.0.0.2',
  });
  assert.equal(worker.nodeIP, '10.0.0.2');
  const wf = new Map(installFiles(worker).map((f) => [f.path, f]));
  assert.equal(wf.has('/etc/tskube/apiserver.env'), false);
  assert.equal(wf.has('/etc/tskube/registry.yml'), false);
  assert.equal(wf.has('/etc/tskube/dns.env'), false, 'the DNS runs on the control plane');
  assert.doesNotMatch(wf.get('/etc/containerd/config.toml')!.content, /SystemdCgroup/);
  assert.match(
    wf.get('/etc/containerd/certs.d/127.0.0.1:5000/hosts.toml')!.content,
    /\[host\."http:\/\/192\.0\.2\.10:5000"\]/,
  );

  const kubeadm = installPlan(['--role=kubeadm'], { hasSystemd: true, firstIP: () => '10.0.0.3' });
  const kf = new Map(installFiles(kubeadm).map((f) => [f.path, f]));
  assert.deepEqual(
    [...kf.keys()],
    ['/etc/containerd/config.toml', '/etc/containerd/certs.d/127.0.0.1:5000/hosts.toml'],
    "kubeadm writes the kubelet's config itself",
  );
  assert.match(kf.get('/etc/containerd/config.toml')!.content, /sandbox_image = "registry\.k8s\.io\/pause:3\.10\.2"/);
  assert.match(kf.get('/etc/containerd/config.toml')!.content, /SystemdCgroup = true/);

  assert.throws(
    () => installPlan(['--role=worker'], { hasSystemd: false, firstIP: () => 'x' }),
    /--registry-mirror is required with --role=worker/,
  );
  assert.throws(
    () => installPlan(['--role=boss'], { hasSystemd: false, firstIP: () => 'x' }),
    /--role: must be control-plane, worker or kubeadm, got "boss"/,
  );
  assert.throws(
    () => installPlan(['--cgroup-driver=none'], { hasSystemd: false, firstIP: () => 'x' }),
    /--cgroup-driver: must be cgroupfs or systemd/,
  );
});
