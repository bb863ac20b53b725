// e2e: `kubeadm init` and `kubeadm join` with tskube as the kubelet. Each
// machine is a network namespace on one LAN plus a private mount namespace (e2e/machine.ts),
// so kubeadm writes /etc/kubernetes and /var/lib/kubelet for real. containerd mirrors
// registry.k8s.io to the control-plane machine's registry, which holds the images built
// from the upstream fixtures. There is no systemd here: the kubelet is started the way
// kubeadm's drop-in would start it, once kubeadm has written its files. tskube's kubelet
// must run kubeadm's etcd, kube-apiserver, kube-controller-manager and kube-scheduler
// static pods and let `kubeadm init` finish; the proxy is tskube's (addon/kube-proxy and
// addon/coredns skipped).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CgroupTree } from '../agent/cm/cgroupfs.js';
import { registryConfig } from '../cli/containerd-config.js';
import { IMAGE_VERSIONS, KUBERNETES_VERSION } from '../scripts/upstream-plan.js';
import { clusterSkip } from './cluster.js';
import { e2eSkipReason, REPO } from './harness.js';
import { execLines, Machine } from './machine.js';
import { type Proc, stopPid, waitFor } from './proc.js';
import { cgroupPids } from './teardown/leftovers.js';
import { upstreamBin, upstreamSkip } from './upstream-control-plane.js';
import { Lan, runningPods, type Vm, whoamiDeployment } from './vms.js';

const skip =
  clusterSkip(e2eSkipReason()) ??
  upstreamSkip(['kubeadm', 'kubectl', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);

const id = randomBytes(3).toString('hex');
const cgroupRoot = (name: string): string => `/tskube-e2e/kubeadm-${id}-${name}`;
const PAUSE = `registry.k8s.io/pause:${IMAGE_VERSIONS.pause}`;

/** Preflight checks this sandbox cannot pass, each for a reason of its own, not tskube's. */
const SANDBOX_PREFLIGHT = [
  // No swap accounting and no kernel config file to read in a network namespace on this VM.
  'Swap',
  'SystemVerification',
  // br_netfilter's sysctl does not exist in a network namespace without the module's per-namespace state.
  'FileContent--proc-sys-net-bridge-bridge-nf-call-iptables',
];

/** containerd's hosts.toml: pulls of `registry` come from the plain-HTTP `mirror`. */
const mirrorHosts = (registry: string, mirror: string): string =>
  `server = "https://${registry}"\n\n[host."http://${mirror}"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n`;

describe('kubeadm init and join with tskube as the kubelet', { skip, timeout: 25 * 60_000 }, () => {
  const lan = new Lan();
  let cpVm: Vm;
  let cp: Machine;
  let workerVm: Vm;
  let worker: Machine;
  let joinLine = '';

  /**
   * tskube installed as docs/kubeadm.md says (`scripts/install.sh --role=kubeadm`: the `kubelet` command and unit,
   * containerd's config with kubeadm's pause image), then containerd started with registry.k8s.io mirrored from
   * `mirror` (this sandbox's stand-in for the internet).
   */
  function install(m: Machine, mirror: string, args: string[] = []): void {
    // No network in here: npm installs from its cache (filled by the checkout's `npm ci`).
    const out = m.run('bash', [path.join(REPO, 'scripts/install.sh'), '--role=kubeadm', ...args], {
      timeoutMs: 8 * 60_000,
      env: { ...process.env, npm_config_offline: 'true' },
    });
    assert.match(out, /\[install\] kubeadm at .*Next: systemctl restart containerd && systemctl enable kubelet/);
    assert.match(m.run('kubelet', ['--version']), /^Kubernetes v1\.37\.2-tskube$/m);
    m.run('systemd-analyze', ['verify', '/etc/systemd/system/kubelet.service']);
    assert.match(m.read('/etc/containerd/config.toml'), new RegExp(`sandbox_image = "${PAUSE.replace(/\./g, '\\.')}"`));
    m.run('ln', ['-sf', upstreamBin('kubeadm'), '/usr/local/bin/kubeadm']);
    m.run('ln', ['-sf', upstreamBin('kubectl'), '/usr/local/bin/kubectl']);
    m.write('/etc/containerd/certs.d/registry.k8s.io/hosts.toml', mirrorHosts('registry.k8s.io', mirror));
    m.daemon('containerd', ['containerd', '--config', '/etc/containerd/config.toml']);
  }

  /** Starts the kubelet as systemd would start the installed unit, once kubeadm has written the files it names. */
  async function startKubeletUnit(m: Machine, name: string): Promise<Proc> {
    await waitFor(
      () =>
        m.ok('test', ['-s', '/var/lib/kubelet/config.yaml']) &&
        m.ok('test', ['-s', '/var/lib/kubelet/kubeadm-flags.env']),
      240_000,
      500,
      `kubeadm wrote the kubelet's files on ${name}`,
    );
    const [argv] = execLines(m.read('/etc/systemd/system/kubelet.service'), 'ExecStart', (f) => m.read(f));
    return m.daemon('kubelet', argv!);
  }

  const kubectl = (args: string[]): string =>
    cp.run('kubectl', ['--kubeconfig=/etc/kubernetes/admin.conf', ...args], { timeoutMs: 60_000 });

  before(async () => {
    await lan.create();
    cpVm = await lan.vm('cp-1', '192.0.2.1');
    // kubeadm's preflight wants IPv4 forwarding on; the machine's own namespace, not the host's.
    cpVm.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    cp = new Machine(cpVm.netns);
    await cp.create();
    cp.write('/etc/tskube-e2e/registry.yml', registryConfig('/var/lib/registry', '127.0.0.1:5000'));
    cp.write(
      '/etc/tskube-e2e/registry-lan.yml',
      registryConfig('/var/lib/registry', '192.0.2.1:5000', { readOnly: true }),
    );
    cp.daemon('registry', ['docker-registry', 'serve', '/etc/tskube-e2e/registry.yml']);
    cp.daemon('registry-lan', ['docker-registry', 'serve', '/etc/tskube-e2e/registry-lan.yml']);
    await waitFor(() => cp.ok('curl', ['-sf', 'http://127.0.0.1:5000/v2/']), 20_000, 200, 'the registry');
    cp.run(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO, 'scripts/upstream.ts'),
        'images',
        '--registry=127.0.0.1:5000',
        '--work-dir=/var/lib/tskube-e2e-images',
      ],
      { timeoutMs: 180_000 },
    );
    cp.run(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO, 'cli/tskube.ts'),
        'images',
        '--registry=127.0.0.1:5000',
        '--work-dir=/var/lib/tskube-e2e-images',
      ],
      { timeoutMs: 120_000 },
    );
    install(cp, '127.0.0.1:5000');
    workerVm = await lan.vm('worker-1', '192.0.2.2');
    workerVm.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
    worker = new Machine(workerVm.netns);
    await worker.create();
    // A worker pulls registry.k8s.io's names and the README's 127.0.0.1:5000 ones from the control plane's registry.
    install(worker, '192.0.2.1:5000', ['--registry-mirror=192.0.2.1:5000']);
    for (const m of [cp, worker])
      await waitFor(() => m.ok('test', ['-S', '/run/containerd/containerd.sock']), 20_000, 200, 'containerd');
  });

  after(async () => {
    await worker?.destroy();
    await cp?.destroy();
    await lan.cleanup();
    // Containers whose shims died before them keep running in the machines' pod cgroups.
    for (const n of ['cp-1', 'worker-1']) {
      for (const pid of cgroupPids(cgroupRoot(n))) await stopPid(pid, 2000, 'SIGKILL');
      await new CgroupTree().remove(cgroupRoot(n)).catch(() => undefined);
    }
    await new CgroupTree().removeIfEmpty('/tskube-e2e').catch(() => undefined);
  });

  test("kubeadm init: tskube's kubelet runs the control plane's static pods and the init finishes", async () => {
    cp.write(
      '/root/kubeadm.yaml',
      `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint: {advertiseAddress: 192.0.2.1, bindPort: 6443}
nodeRegistration:
  name: cp-1
  criSocket: unix:///run/containerd/containerd.sock
skipPhases: [addon/kube-proxy, addon/coredns]
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: ${KUBERNETES_VERSION}
networking: {podSubnet: 10.244.0.0/16, serviceSubnet: 10.96.0.0/12}
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: ${cgroupRoot('cp-1')}
`,
    );
    const init = cp.daemon('kubeadm-init', [
      'kubeadm',
      'init',
      '--config=/root/kubeadm.yaml',
      `--ignore-preflight-errors=${SANDBOX_PREFLIGHT.join(',')}`,
      '--v=1',
    ]);
    await startKubeletUnit(cp, 'cp-1');
    const code = await Promise.race([
      init.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 8 * 60_000).unref()),
    ]);
    if (code === 'timeout') await stopPid(init.pid, 2000);
    assert.equal(
      code,
      0,
      `kubeadm init:\n${cp.log('kubeadm-init').slice(-6000)}\nkubelet:\n${cp.log('kubelet').slice(-6000)}`,
    );
    assert.match(cp.log('kubeadm-init'), /Your Kubernetes control-plane has initialized successfully!/);
    const pods = await waitFor(
      () => {
        const o = kubectl([
          'get',
          'pods',
          '-n',
          'kube-system',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}',
        ]);
        return ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].every((c) =>
          new RegExp(`^${c}-cp-1 Running$`, 'm').test(o),
        )
          ? o
          : undefined;
      },
      120_000,
      1000,
      'the four mirror pods Running',
    );
    assert.ok(pods);
    assert.match(kubectl(['get', 'nodes', '-o', 'wide']), /cp-1\s+\S+\s+control-plane\s+\S+\s+v1\.37\.2-tskube/);
    joinLine = /kubeadm join \S+ --token \S+ \\?\s*--discovery-token-ca-cert-hash \S+/
      .exec(cp.log('kubeadm-init'))![0]
      .replace(/\\\s*/, ' ');
    // The kubelet rotated kubeadm's inline certificate out at once, so kubeadm pointed kubelet.conf at the rotated pair.
    assert.match(
      cp.log('kubeadm-init'),
      /\[kubelet-finalize\] Updating "\/etc\/kubernetes\/kubelet\.conf" to point to a rotatable kubelet client certificate and key/,
    );
  });

  test("tskube's kube-proxy on the control plane, with what `tskube token create` adds to a kubeadm cluster", () => {
    const out = cp.run('sh', [
      '-c',
      `${process.execPath} ${path.join(REPO, 'cli/bin.js')} token create --kubeconfig=/etc/kubernetes/admin.conf 2>&1`,
    ]);
    assert.match(out, /created ClusterRoleBinding tskube:node-proxier/);
    assert.doesNotMatch(out, /cluster-info/, 'kubeadm made cluster-info already');
    cp.daemon('kube-proxy', [
      process.execPath,
      path.join(REPO, 'cli/bin.js'),
      'proxy',
      '--kubeconfig=/etc/kubernetes/kubelet.conf',
      '--hostname-override=cp-1',
    ]);
  });

  test('kubeadm join with tskube as the kubelet: TLS bootstrap, the node Ready beside the control plane', async () => {
    const [, endpoint, token, hash] = /kubeadm join (\S+)\s+--token (\S+)\s+--discovery-token-ca-cert-hash (\S+)/.exec(
      joinLine,
    )!;
    worker.write(
      '/root/join.yaml',
      `apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken: {apiServerEndpoint: "${endpoint}", token: "${token}", caCertHashes: ["${hash}"]}
nodeRegistration:
  name: worker-1
  criSocket: unix:///run/containerd/containerd.sock
`,
    );
    const join = worker.daemon('kubeadm-join', [
      'kubeadm',
      'join',
      '--config=/root/join.yaml',
      `--ignore-preflight-errors=${SANDBOX_PREFLIGHT.join(',')}`,
    ]);
    // The cluster's KubeletConfiguration names the control plane's cgroup root: this node keeps its own
    // (KUBELET_EXTRA_ARGS in /etc/default/kubelet, which the unit reads).
    worker.write('/etc/default/kubelet', `KUBELET_EXTRA_ARGS=--cgroup-root=${cgroupRoot('worker-1')}\n`);
    const kubelet = await startKubeletUnit(worker, 'worker-1');
    const code = await Promise.race([
      join.exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 5 * 60_000).unref()),
    ]);
    assert.equal(
      code,
      0,
      `kubeadm join:\n${worker.log('kubeadm-join').slice(-5000)}\nkubelet:\n${worker.log('kubelet').slice(-5000)}`,
    );
    assert.match(worker.log('kubeadm-join'), /This node has joined the cluster/);
    assert.ok(kubelet.child.exitCode === null, 'the kubelet runs on');
    worker.daemon('kube-proxy', [
      process.execPath,
      path.join(REPO, 'cli/bin.js'),
      'proxy',
      '--kubeconfig=/etc/kubernetes/kubelet.conf',
      '--hostname-override=worker-1',
    ]);
    await waitFor(
      () => (kubectl(['get', 'nodes']).match(/ Ready /g) ?? []).length === 2,
      180_000,
      1000,
      `both nodes Ready:\n${kubectl(['get', 'nodes'])}`,
    );
  });

  const podsByNode = () => runningPods((args) => kubectl(args), 'spread');

  test('a Deployment spreads over both nodes and answers through its Service from both machines', async () => {
    cp.run('kubectl', ['--kubeconfig=/etc/kubernetes/admin.conf', 'apply', '-f', '-'], {
      input: whoamiDeployment(
        'spread',
        4,
        `      tolerations:
      - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}
`,
      ),
    });
    const pods = await waitFor(
      () => {
        const p = podsByNode();
        return p.length === 4 ? p : undefined;
      },
      180_000,
      1000,
      'four pods Running',
    );
    assert.deepEqual([...new Set(pods.map((p) => p.node))].sort(), ['cp-1', 'worker-1']);
    kubectl(['expose', 'deployment', 'spread', '--port=80', '--target-port=8080']);
    const ip = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.clusterIP}']);
    const nodeOf = new Map(pods.map((p) => [p.name, p.node]));
    for (const m of [cp, worker]) {
      const seen = new Set<string>();
      await waitFor(
        () => {
          const name = m.run('sh', ['-c', `curl -s -m 3 http://${ip}/ || true`]).trim();
          if (nodeOf.has(name)) seen.add(nodeOf.get(name)!);
          return seen.size === 2;
        },
        60_000,
        100,
        'answers from pods on both nodes',
      );
    }
  });

  test("the e2e suite's nginx image, built from Debian's nginx, serves its welcome page from the worker", async () => {
    kubectl([
      'run',
      'web',
      `--image=registry.k8s.io/e2e-test-images/nginx:${IMAGE_VERSIONS.nginx[0]}`,
      '--port=80',
      '--overrides={"spec":{"nodeName":"worker-1"}}',
    ]);
    const ip = await waitFor(
      () =>
        kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.phase} {.status.podIP}']).match(/^Running (\S+)$/)?.[1],
      120_000,
      500,
      'nginx pod Running',
    );
    await waitFor(
      () => /Welcome to nginx!/.test(cp.run('sh', ['-c', `curl -s -m 3 http://${ip}/ || true`])),
      30_000,
      200,
      'welcome page',
    );
    assert.match(kubectl(['logs', 'web']), /"GET \/ HTTP\/1\.1" 200/, "access log on the container's stdout");
    kubectl(['delete', 'pod', 'web', '--wait=true']);
  });

  test("restarting tskube's kubelet on the control plane restarts none of its containers", async () => {
    const state = () =>
      kubectl([
        'get',
        'pods',
        '-n',
        'kube-system',
        '-o',
        'jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}{"\\n"}{end}',
      ]);
    const before = state();
    const kubelet = cp.daemons.get('kubelet')!;
    await stopPid(kubelet.pid, 10_000);
    await startKubeletUnit(cp, 'cp-1');
    await waitFor(() => / Ready /.test(kubectl(['get', 'node', 'cp-1'])), 60_000, 1000, 'cp-1 Ready again');
    await new Promise((r) => setTimeout(r, 15_000));
    assert.equal(state(), before, 'the same containers, no restarts');
  });

  test('tskube reset, then kubeadm reset, on the worker leave no pod, rule, pod network or kubelet file behind', async () => {
    for (const name of ['kube-proxy', 'kubelet']) await stopPid(worker.daemons.get(name)!.pid, 10_000);
    // tskube's reset first, from the kubelet config kubeadm wrote (it says where the pods, cgroups and logs are);
    // here with the cgroup root this worker ran with (the cluster's config names the control plane's, on this one host).
    worker.write(
      '/root/kubelet-config.yaml',
      worker.read('/var/lib/kubelet/config.yaml').replace(/^cgroupRoot: .*$/m, `cgroupRoot: ${cgroupRoot('worker-1')}`),
    );
    const own = worker.run(
      process.execPath,
      [path.join(REPO, 'cli/bin.js'), 'reset', '--force', '--config=/root/kubelet-config.yaml'],
      { timeoutMs: 120_000 },
    );
    assert.match(own, /the tskube0 device/);
    assert.equal(worker.ok('ip', ['link', 'show', 'tskube0']), false, 'no bridge');
    assert.equal(worker.ok('test', ['-e', '/etc/cni/net.d/10-tskube.conflist']), false, 'no CNI config');
    for (const table of ['nat', 'filter'])
      assert.doesNotMatch(worker.run('iptables-save', ['-t', table]), /KUBE-|TSKUBE-/, `no proxy rules in ${table}`);
    const out = worker.run('kubeadm', ['reset', '-f', '--cri-socket=unix:///run/containerd/containerd.sock'], {
      timeoutMs: 180_000,
    });
    assert.match(out, /\[reset\] Deleting contents of directories/);
    assert.equal(
      worker.run('ctr', ['--address=/run/containerd/containerd.sock', '-n', 'k8s.io', 'containers', 'ls', '-q']).trim(),
      '',
      'no container left',
    );
    assert.equal(worker.ok('test', ['-e', '/etc/kubernetes/kubelet.conf']), false);
    assert.equal(
      worker.run('sh', ['-c', 'ls -A /var/lib/kubelet 2>/dev/null || true']).trim(),
      '',
      '/var/lib/kubelet emptied',
    );
    kubectl(['delete', 'node', 'worker-1']);
  });
});
