// e2e: the install path on a machine with only Debian's containerd and its
// stock config. A "VM" is a network namespace plus a private mount namespace
// whose /etc, /var/lib, /opt and /usr/local are overlays (and /run, /var/log,
// /var/lib/containerd tmpfs), so scripts/install.sh writes the real paths
// (/etc/containerd/config.toml, /etc/tskube, /usr/local/bin/tskube, the units)
// without touching the host's. The installed units pass systemd-analyze
// verify; then the commands their ExecStart lines run (PID 1 here is not
// systemd) bring up a node whose pods run and answer through a Service, and
// `tskube reset` takes it all down again.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CgroupTree } from '../agent/cm/cgroupfs.js';
import { REPO } from './harness.js';
import { execLines, HOLDER, pidsInMountNamespaceOf } from './machine.js';
import { type Proc, sh, start, stopPid, waitFor } from './proc.js';

const skip =
  process.getuid?.() !== 0
    ? 'needs root'
    : spawnSync('sh', ['-c', 'command -v systemd-analyze']).status !== 0
      ? 'systemd-analyze missing (Debian package systemd)'
      : undefined;

function execStart(unit: string, read: (file: string) => string): string[] {
  const [line] = execLines(unit, 'ExecStart', read);
  if (!line) throw new Error('no ExecStart');
  return line;
}

describe('install on a plain Debian machine', { skip, timeout: 10 * 60_000 }, () => {
  const id = randomBytes(3).toString('hex');
  const netns = `tskube-inst-${id}`;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-install-'));
  const logs = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-install-logs-'));
  const cgroupRoot = `/tskube-e2e/inst-${id}`;
  let holder: ChildProcess | undefined;
  const daemons = new Map<string, Proc>();
  const enter = (): string[] => ['-t', String(holder!.pid), '-m', '-n', `--wd=${REPO}`];
  /** A command in the VM (its mount and network namespaces). */
  const vm = (cmd: string, args: string[], o: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): string => {
    const r = spawnSync('nsenter', [...enter(), cmd, ...args], {
      encoding: 'utf8',
      timeout: o.timeoutMs ?? 30_000,
      env: o.env ?? process.env,
    });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (exit ${r.status}): ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  const readInVm = (f: string): string => vm('cat', [f]);
  const runUnit = (name: string, unitFile: string): Proc => {
    const unit = readInVm(unitFile);
    // ExecStartPre lines run to their end first, as systemd runs them; a leading "-" lets one fail.
    for (const pre of execLines(unit, 'ExecStartPre', readInVm)) {
      const mayFail = pre[0]!.startsWith('-');
      const cmd = pre[0]!.replace(/^[-@+!]+/, '');
      if (mayFail) spawnSync('nsenter', [...enter(), cmd, ...pre.slice(1)], { timeout: 60_000 });
      else vm(cmd, pre.slice(1), { timeoutMs: 60_000 });
    }
    const argv = execStart(unit, readInVm);
    // Without the malloc setting the harness gives its own children: what the installed command sets is checked.
    const { MALLOC_MMAP_THRESHOLD_: _set, ...env } = process.env;
    const p = start('nsenter', [...enter(), ...argv], path.join(logs, `${name}.log`), { env });
    daemons.set(name, p);
    return p;
  };
  const kubectl = (args: string[]): string =>
    vm('kubectl', ['--kubeconfig=/var/lib/tskube/pki/admin.kubeconfig', ...args]);
  /** Processes in the VM's mount namespace (found by PID through /proc, never by name). */
  const vmPids = (): number[] => (holder?.pid ? pidsInMountNamespaceOf(holder.pid) : []);
  const shims = (): number[] =>
    vmPids().filter((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('containerd-shim'));

  before(async () => {
    sh('ip', ['netns', 'add', netns]);
    // eth0 leads to its own peer in the same namespace: a node address and a default route, and nowhere to go.
    for (const args of [
      ['link', 'set', 'lo', 'up'],
      ['link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0p'],
      ['link', 'set', 'eth0', 'up'],
      ['link', 'set', 'eth0p', 'up'],
      ['addr', 'add', '192.0.2.10/24', 'dev', 'eth0'],
      ['route', 'add', 'default', 'via', '192.0.2.1', 'dev', 'eth0', 'onlink'],
    ])
      sh('ip', args, { netns });
    fs.writeFileSync(path.join(logs, 'holder.sh'), HOLDER);
    holder = spawn(
      'nsenter',
      [
        `--net=/run/netns/${netns}`,
        'unshare',
        '--mount',
        '--propagation',
        'private',
        'bash',
        path.join(logs, 'holder.sh'),
        scratch,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    holder.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    holder.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    await waitFor(
      () => out.includes('ready') || (holder!.exitCode !== null && 'exited'),
      20_000,
      100,
      'the VM mount namespace',
    ).then((r) => {
      if (r === 'exited') throw new Error(`mount namespace: ${out}`);
    });
  });

  after(async () => {
    if (holder?.pid) {
      // Pods first, through the VM's containerd while it runs; then every process left in the VM, by PID.
      for (const name of ['tskube-agent', 'tskube-proxy', 'tskube-dns', 'tskube-apiserver'])
        if (daemons.get(name)) await stopPid(daemons.get(name)!.pid, 5000);
      spawnSync('nsenter', [...enter(), '/usr/local/bin/tskube', 'reset', '--force'], { timeout: 60_000 });
      for (const pid of vmPids()) await stopPid(pid, 3000);
      await stopPid(holder.pid, 2000, 'SIGKILL');
    }
    sh('ip', ['netns', 'del', netns], { allowFail: true });
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.rmSync(logs, { recursive: true, force: true });
    await new CgroupTree().remove(cgroupRoot).catch(() => undefined);
    await new CgroupTree().removeIfEmpty('/tskube-e2e').catch(() => undefined);
  });

  test("install.sh configures Debian's containerd and installs the compiled CLI, the units (systemd-analyze verify) and the configs", () => {
    const stock = readInVm('/etc/containerd/config.toml');
    assert.doesNotMatch(stock, /sandbox_image/, "Debian's stock config to start from");
    // No network in here: npm installs from its cache (filled by the checkout's `npm ci`), nothing leaves the machine.
    const out = vm('bash', [path.join(REPO, 'scripts/install.sh')], {
      timeoutMs: 8 * 60_000,
      env: { ...process.env, npm_config_offline: 'true' },
    });
    assert.match(out, /\[install\] control-plane at 192\.0\.2\.10, cgroup driver cgroupfs/);
    assert.equal(
      fs.existsSync('/usr/local/bin/tskube') &&
        fs.readFileSync('/usr/local/bin/tskube', 'utf8').includes('/opt/tskube'),
      false,
      'the host is untouched',
    );
    assert.equal(
      spawnSync('nsenter', [...enter(), 'test', '-e', '/opt/tskube/node_modules/tsx']).status,
      1,
      'the runtime never loads tsx',
    );
    assert.equal(
      spawnSync('nsenter', [...enter(), 'test', '-e', '/opt/tskube/node_modules/typescript']).status,
      1,
      'no dev dependencies',
    );
    assert.match(vm('/usr/local/bin/tskube', ['--help']), /^usage: tskube up\|join\|reset\|agent\|proxy\|apiserver/);
    // containerd: tskube's config, the stock one kept beside it.
    assert.equal(readInVm('/etc/containerd/config.toml.orig'), stock);
    const cfg = readInVm('/etc/containerd/config.toml');
    assert.match(cfg, /sandbox_image = "127\.0\.0\.1:5000\/tskube\/pause:1"/);
    assert.match(cfg, /bin_dir = "\/usr\/lib\/cni"\n {4}conf_dir = "\/etc\/cni\/net\.d"/);
    assert.doesNotMatch(cfg, /SystemdCgroup/, 'cgroupfs here: PID 1 is not systemd');
    assert.match(
      readInVm('/etc/containerd/certs.d/127.0.0.1:5000/hosts.toml'),
      /server = "http:\/\/127\.0\.0\.1:5000"/,
    );
    assert.match(readInVm('/etc/tskube/kubelet-config.yaml'), /cgroupDriver: cgroupfs/);
    assert.match(
      readInVm('/etc/tskube/apiserver.env'),
      /--advertise-address=192\.0\.2\.10 .*--allocate-node-cidrs=true --cluster-cidr=10\.244\.0\.0\/16/,
    );
    assert.match(readInVm('/etc/tskube/registry.yml'), /addr: "127\.0\.0\.1:5000"/);
    assert.match(
      readInVm('/etc/tskube/registry-lan.yml'),
      /readonly:\n {6}enabled: true\nhttp:\n {2}addr: "192\.0\.2\.10:5000"/,
    );
    const units = [
      'tskube-registry',
      'tskube-registry-lan',
      'tskube-images',
      'tskube-apiserver',
      'tskube-dns',
      'tskube-agent',
      'tskube-proxy',
      'tskube-join',
    ].map((u) => `/etc/systemd/system/${u}.service`);
    assert.equal(
      vm('readlink', ['/etc/systemd/system/docker-registry.service']).trim(),
      '/dev/null',
      "Debian's own registry unit is masked: tskube-registry takes :5000",
    );
    for (const u of units) assert.match(readInVm(u), /ExecStart=\/usr\/(local\/)?bin\//);
    // Warnings about units this machine lacks (containerd.service in a bare CI container) are not errors.
    vm('systemd-analyze', ['verify', ...units]);
    // Again: the configs the user may have edited stay, containerd's is rewritten (no second .orig).
    assert.match(
      vm('bash', [path.join(REPO, 'scripts/install.sh')], {
        timeoutMs: 8 * 60_000,
        env: { ...process.env, npm_config_offline: 'true' },
      }),
      /kept \/etc\/tskube\/apiserver\.env/,
    );
    assert.equal(readInVm('/etc/containerd/config.toml.orig'), stock);
  });

  test("the units' commands bring up a node whose pods run and answer through a Service", async () => {
    runUnit('containerd', '/lib/systemd/system/containerd.service');
    runUnit('tskube-registry', '/etc/systemd/system/tskube-registry.service');
    await waitFor(
      () => spawnSync('nsenter', [...enter(), 'curl', '-sf', 'http://127.0.0.1:5000/v2/']).status === 0,
      20_000,
      200,
      'the registry',
    );
    runUnit('tskube-registry-lan', '/etc/systemd/system/tskube-registry-lan.service');
    await waitFor(
      () => spawnSync('nsenter', [...enter(), 'curl', '-sf', 'http://192.0.2.10:5000/v2/']).status === 0,
      20_000,
      200,
      'the read-only registry',
    );
    assert.equal(
      vm('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-X',
        'POST',
        'http://192.0.2.10:5000/v2/evil/blobs/uploads/',
      ]),
      '405',
      'no push on the node address',
    );
    // The oneshot unit: runs to its end.
    const images = execStart(readInVm('/etc/systemd/system/tskube-images.service'), readInVm);
    assert.match(
      vm(images[0]!, images.slice(1), { timeoutMs: 120_000 }),
      /127\.0\.0\.1:5000\/tskube\/pause:1: built and pushed/,
    );
    runUnit('tskube-apiserver', '/etc/systemd/system/tskube-apiserver.service');
    await waitFor(
      () =>
        spawnSync('nsenter', [
          ...enter(),
          'kubectl',
          '--kubeconfig=/var/lib/tskube/pki/admin.kubeconfig',
          'get',
          'ns',
          'default',
        ]).status === 0,
      30_000,
      300,
      'the apiserver serving',
    );
    // systemd/README.md's steps: the node's and the proxy's kubeconfigs; the cgroup root keeps this node's kubepods apart from the host's.
    vm('sh', [
      '-c',
      `cp /var/lib/tskube/pki/node-$(hostname | tr A-Z a-z).kubeconfig /etc/tskube/kubelet.kubeconfig && cp /var/lib/tskube/pki/kube-proxy.kubeconfig /etc/tskube/kube-proxy.kubeconfig && echo 'cgroupRoot: ${cgroupRoot}' >> /etc/tskube/kubelet-config.yaml`,
    ]);
    runUnit('tskube-dns', '/etc/systemd/system/tskube-dns.service');
    runUnit('tskube-agent', '/etc/systemd/system/tskube-agent.service');
    runUnit('tskube-proxy', '/etc/systemd/system/tskube-proxy.service');
    await waitFor(() => / Ready /.test(kubectl(['get', 'nodes'])), 60_000, 500, 'the node Ready');
    assert.ok(
      fs
        .readFileSync(`/proc/${daemons.get('tskube-agent')!.pid}/environ`, 'utf8')
        .split('\0')
        .includes('MALLOC_MMAP_THRESHOLD_=131072'),
      "the installed command fixes malloc's mmap threshold",
    );
    kubectl(['create', 'deployment', 'hello', '--image=127.0.0.1:5000/tskube/app:1', '--replicas=2']);
    kubectl(['expose', 'deployment', 'hello', '--port=80', '--target-port=8080']);
    await waitFor(
      () => (kubectl(['get', 'pods', '-l', 'app=hello']).match(/1\/1\s+Running/g) ?? []).length === 2,
      90_000,
      500,
      'two pods running',
    );
    assert.match(
      readInVm('/etc/cni/net.d/10-tskube.conflist'),
      /"subnet": "10\.244\.0\.0\/24"/,
      'the pod network wrote the CNI config containerd reads',
    );
    const ip = kubectl(['get', 'svc', 'hello', '-o', 'jsonpath={.spec.clusterIP}']).trim();
    await waitFor(
      () =>
        spawnSync('nsenter', [...enter(), 'curl', '-s', '-m', '3', `http://${ip}/`], {
          encoding: 'utf8',
        }).stdout.includes('hello from tskube'),
      30_000,
      500,
      'the Service answering',
    );
    // The DNS unit: pods get 10.96.0.10 from the kubelet config and resolve the Service through it.
    const pod = kubectl(['get', 'pods', '-l', 'app=hello', '-o', 'jsonpath={.items[0].metadata.name}']).trim();
    const answer = await waitFor(
      () => {
        const o = spawnSync(
          'nsenter',
          [
            ...enter(),
            'kubectl',
            '--kubeconfig=/var/lib/tskube/pki/admin.kubeconfig',
            'exec',
            pod,
            '--',
            'sh',
            '-c',
            'cat /etc/resolv.conf; nslookup hello.default.svc.cluster.local',
          ],
          { encoding: 'utf8', timeout: 20_000 },
        ).stdout;
        return o.includes(ip) ? o : undefined;
      },
      60_000,
      1000,
      'a Service name resolved in a pod',
    );
    assert.match(answer, /^nameserver 10\.96\.0\.10$/m);
  });

  test("tskube reset on the stopped node removes its pods, rules, pod network, log links and dirs, and not the packages' files", async () => {
    for (const name of ['tskube-agent', 'tskube-proxy', 'tskube-dns', 'tskube-apiserver'])
      await stopPid(daemons.get(name)!.pid, 10_000);
    const out = vm('/usr/local/bin/tskube', ['reset', '--force'], { timeoutMs: 120_000 });
    assert.match(out, /2 pod sandbox\(es\) and their containers/);
    assert.match(out, /the tskube0 device/);
    assert.match(out, /\/etc\/cni\/net\.d\/10-tskube\.conflist/);
    assert.match(out, /log link\(s\) in \/var\/log\/containers/);
    assert.match(out, new RegExp(`cgroup ${cgroupRoot}/kubepods`));
    assert.deepEqual(shims(), [], 'no shim is left');
    for (const save of ['iptables-save', 'ip6tables-save'])
      for (const table of ['nat', 'filter'])
        assert.doesNotMatch(vm(save, ['-t', table]), /KUBE-|TSKUBE-/, `${save} ${table}`);
    for (const gone of ['/var/lib/kubelet', '/var/lib/tskube', '/var/log/pods'])
      assert.equal(spawnSync('nsenter', [...enter(), 'test', '-e', gone]).status, 1, `${gone} removed`);
    assert.match(
      readInVm('/etc/containerd/config.toml'),
      /sandbox_image/,
      'the install stays; reset undoes the node, not the install',
    );
  });
});
