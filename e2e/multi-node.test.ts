// e2e: three "VMs" on one LAN bridge. VM 1 runs `tskube up`; VMs 2
// and 3 run the `tskube join` line it prints. Bad join lines fail cleanly and
// leave nothing behind; the joined nodes go Ready with distinct podCIDRs; a
// DaemonSet puts one pod on each; a Deployment spreads over all three; every pod reaches every other by IP over
// the host-gw routes; a Service answers from every node and every pod with
// backends on all nodes; a NodePort answers on every node's IP; logs, exec and
// port-forward reach pods on joined nodes; their pods resolve Services by name; a stopped node goes NotReady, its
// pods are replaced elsewhere, and it comes back by running join again.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip } from './cluster.js';
import { e2eSkipReason } from './harness.js';
import { start, stopPid, waitFor } from './proc.js';
import { HTTP_GET, Lan, runningPods, type Vm, whoamiDeployment } from './vms.js';

const skip = clusterSkip(e2eSkipReason());

describe('three VMs: tskube up, then tskube join', { skip, timeout: 15 * 60_000 }, () => {
  const lan = new Lan();
  let vm1: Vm;
  let vm2: Vm;
  let vm3: Vm;
  let join = '';
  const kubectl = (args: string[], input?: string): string =>
    vm1.exec('kubectl', [`--kubeconfig=${vm1.dir}/pki/admin.kubeconfig`, ...args], { input });
  const joinArgs = (line: string): string[] => line.trim().split(/\s+/).slice(1);

  before(async () => {
    await lan.create();
    vm1 = await lan.vm('vm-1', '192.0.2.1');
    vm2 = await lan.vm('vm-2', '192.0.2.2');
    vm3 = await lan.vm('vm-3', '192.0.2.3');
    const out = await vm1.run(['up'], /tskube join \S+ --token \S+ --discovery-token-ca-cert-hash \S+/);
    join = /tskube join .*$/m.exec(out)![0];
  });
  after(() => lan.cleanup());

  test('up prints a join line; wrong hash, wrong token, expired token, an unreachable server and a taken node name each fail with one clear line and leave nothing behind', async () => {
    assert.match(
      join,
      /^tskube join https:\/\/192\.0\.2\.1:6443 --token [a-z0-9]{6}\.[a-z0-9]{16} --discovery-token-ca-cert-hash sha256:[0-9a-f]{64}$/,
    );
    const args = joinArgs(join);
    const token = args[args.indexOf('--token') + 1]!;
    const hash = args[args.indexOf('--discovery-token-ca-cert-hash') + 1]!;
    const withArgs = (t: string, h: string, server = 'https://192.0.2.1:6443') => [
      'join',
      server,
      '--token',
      t,
      '--discovery-token-ca-cert-hash',
      h,
    ];
    const expired = 'exp000.0123456789abcdef';
    kubectl([
      '-n',
      'kube-system',
      'create',
      'secret',
      'generic',
      'bootstrap-token-exp000',
      '--type=bootstrap.kubernetes.io/token',
      '--from-literal=token-id=exp000',
      '--from-literal=token-secret=0123456789abcdef',
      `--from-literal=expiration=${new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z')}`,
      '--from-literal=usage-bootstrap-authentication=true',
      '--from-literal=usage-bootstrap-signing=true',
    ]);
    const cases: [string[], RegExp, string[]?][] = [
      [
        withArgs(token, `sha256:${'0'.repeat(64)}`),
        /cluster CA found in cluster-info ConfigMap is invalid: none of the public keys "sha256:[0-9a-f]{64}" are pinned/,
      ],
      [
        withArgs(`${token.split('.')[0]}.0000000000000000`, hash),
        /failed to verify JWS signature of received cluster info object, can't trust this API Server/,
      ],
      [
        withArgs('zzzzzz.0000000000000000', hash),
        /could not find a JWS signature in the cluster-info ConfigMap for token ID "zzzzzz"/,
      ],
      [
        withArgs(expired, hash),
        /could not find a JWS signature in the cluster-info ConfigMap for token ID "exp000": the token is wrong or has expired/,
      ],
      [withArgs(token, hash, 'https://192.0.2.9:6443'), /cannot reach the apiserver at https:\/\/192\.0\.2\.9:6443/],
      [
        withArgs(token, hash),
        /a Node with name "vm-1" and status "Ready" already exists in the cluster\. You must delete the existing Node or change the name of this new joining Node/,
        ['--hostname-override=vm-1'],
      ],
    ];
    for (const [a, want, extra] of cases) {
      const { code, out } = await vm2.joinFails(a, extra);
      assert.equal(code, 1, out);
      assert.match(out, want);
      assert.match(out, /discovery: cluster-info from .*: FAILED after/);
      assert.doesNotMatch(out, /\[2\/5\] containerd/, 'nothing started');
      const left = fs.readdirSync(vm2.dir).filter((f) => !/^(join-fail-.*\.out|owner\.pid|harness\.json)$/.test(f));
      assert.deepEqual(left, [], `nothing written in ${vm2.dir}`);
    }
  });

  test("two nodes join with the printed line: all three Ready with distinct podCIDRs, images pulled through the first node's registry", async () => {
    await Promise.all([
      vm2.run(joinArgs(join), /This node has joined the cluster/),
      vm3.run(joinArgs(join), /This node has joined the cluster/),
    ]);
    assert.match(vm2.log(), /\[1\/5\] discovery: cluster-info from https:\/\/192\.0\.2\.1:6443: done/);
    assert.match(vm2.log(), /started containerd .*127\.0\.0\.1:5000 mirrored from 192\.0\.2\.1:5000/);
    assert.ok(fs.existsSync(path.join(vm2.rootDir, 'pki', 'kubelet-client-current.pem')));
    const nodes = await waitFor(
      () => {
        const o = kubectl([
          'get',
          'nodes',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.spec.podCIDR} {.spec.taints}{"\\n"}{end}',
        ]);
        return o.split('\n').filter((l) => / True \S+ $/.test(l)).length === 3 ? o : undefined;
      },
      60_000,
      1000,
      'three Ready nodes without taints',
    );
    const cidrs = nodes
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[2]);
    assert.equal(new Set(cidrs).size, 3, nodes);
    for (const c of cidrs) assert.match(c!, /^10\.244\.\d+\.0\/24$/);
    // Each node routes to the other two podCIDRs via their addresses, and to nothing else of ours.
    const routes = vm2.exec('ip', ['route', 'show', 'proto', '77']);
    assert.equal(routes.trim().split('\n').length, 2, routes);
    assert.match(routes, /via 192\.0\.2\.1 dev eth0/);
    assert.match(routes, /via 192\.0\.2\.3 dev eth0/);
  });

  test('a DaemonSet runs one ready pod on each of the three nodes', async () => {
    kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'everywhere' },
        spec: {
          selector: { matchLabels: { app: 'everywhere' } },
          template: {
            metadata: { labels: { app: 'everywhere' } },
            spec: {
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'c', image: '127.0.0.1:5000/tskube/app:1', command: ['sleep', '3600'] }],
            },
          },
        },
      }),
    );
    await waitFor(
      () =>
        kubectl([
          'get',
          'ds',
          'everywhere',
          '-o',
          'jsonpath={.status.desiredNumberScheduled} {.status.numberReady}',
        ]) === '3 3',
      120_000,
      1000,
      'three ready daemon pods',
    );
    const nodes = kubectl(['get', 'pods', '-l', 'app=everywhere', '-o', 'jsonpath={.items[*].spec.nodeName}'])
      .split(' ')
      .sort();
    assert.deepEqual(nodes, ['vm-1', 'vm-2', 'vm-3']);
    kubectl(['delete', 'ds', 'everywhere']);
    await waitFor(
      () => kubectl(['get', 'pods', '-l', 'app=everywhere', '-o', 'name']).trim() === '',
      60_000,
      1000,
      'daemon pods gone',
    );
  });

  const podsByNode = () => runningPods((args) => kubectl(args), 'spread');

  test('a 6-replica Deployment spreads over the three nodes and every pod reaches every other pod by IP', async () => {
    kubectl(
      ['apply', '-f', '-'],
      whoamiDeployment(
        'spread',
        6,
        `      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
`,
      ),
    );
    const pods = await waitFor(
      () => {
        const p = podsByNode();
        return p.length === 6 ? p : undefined;
      },
      120_000,
      1000,
      'six pods Running',
    );
    assert.deepEqual([...new Set(pods.map((p) => p.node))].sort(), ['vm-1', 'vm-2', 'vm-3'], JSON.stringify(pods));
    const ips = pods.map((p) => p.ip).join(' ');
    for (const p of pods) {
      const out = kubectl([
        'exec',
        p.name,
        '--',
        'sh',
        '-c',
        `${HTTP_GET}; for ip in ${ips}; do get $ip 8080 || echo "FAIL $ip"; done`,
      ]);
      assert.deepEqual(
        out.trim().split('\n').sort(),
        pods.map((q) => q.name).sort(),
        `from ${p.name} on ${p.node}:\n${out}`,
      );
    }
  });

  test("a Service answers from every node and from pods on every node, with backends on all three; a NodePort answers on every node's IP", async () => {
    kubectl(['expose', 'deployment', 'spread', '--port=80', '--target-port=8080', '--type=NodePort']);
    const ip = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.clusterIP}']);
    const nodePort = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.ports[0].nodePort}']);
    const pods = podsByNode();
    const nodeOf = new Map(pods.map((p) => [p.name, p.node]));
    const backendsFrom = async (get: () => string): Promise<Set<string>> => {
      const seen = new Set<string>();
      await waitFor(
        () => {
          const name = get().trim();
          if (nodeOf.has(name)) seen.add(nodeOf.get(name)!);
          return seen.size === 3;
        },
        60_000,
        50,
        'answers from pods on all three nodes',
      ).catch((e: Error) => {
        throw new Error(`${e.message}; saw ${[...seen].join(', ')}`);
      });
      return seen;
    };
    for (const vm of [vm1, vm2, vm3]) {
      assert.equal((await backendsFrom(() => vm.httpGet(`http://${ip}/`))).size, 3, `ClusterIP from ${vm.name}`);
      assert.equal(
        (await backendsFrom(() => vm1.httpGet(`http://${vm.ip}:${nodePort}/`))).size,
        3,
        `NodePort on ${vm.ip}`,
      );
    }
    for (const node of ['vm-1', 'vm-2', 'vm-3']) {
      const client = pods.find((p) => p.node === node)!;
      const out = kubectl([
        'exec',
        client.name,
        '--',
        'sh',
        '-c',
        `${HTTP_GET}; for i in $(seq 30); do get ${ip} 80; done`,
      ]);
      const seen = new Set(
        out
          .trim()
          .split('\n')
          .map((n) => nodeOf.get(n)),
      );
      assert.deepEqual([...seen].sort(), ['vm-1', 'vm-2', 'vm-3'], `from a pod on ${node}:\n${out}`);
    }
  });

  test("pods on the joined nodes resolve Services by name through the first node's cluster DNS (kube-dns via kube-proxy)", () => {
    const ip = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.clusterIP}']);
    const pods = podsByNode();
    for (const node of ['vm-2', 'vm-3']) {
      const client = pods.find((p) => p.node === node)!;
      const out = kubectl([
        'exec',
        client.name,
        '--',
        'sh',
        '-c',
        `cat /etc/resolv.conf; nslookup spread.default.svc.cluster.local 2>&1; ${HTTP_GET}; get spread 80; true`,
      ]);
      assert.match(out, /^nameserver 10\.96\.0\.10$/m, `${node}:\n${out}`);
      assert.match(
        out,
        new RegExp(`Name:\\s+spread\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${ip.replace(/\./g, '\\.')}`),
        `${node}:\n${out}`,
      );
      assert.ok(
        pods.some((p) => out.trim().endsWith(p.name)),
        `HTTP by the short name from ${node}:\n${out}`,
      );
    }
  });

  test('kubectl logs, exec and port-forward reach pods on joined nodes', async () => {
    for (const p of podsByNode()
      .filter((x) => x.node !== 'vm-1')
      .slice(0, 2)) {
      assert.equal(kubectl(['exec', p.name, '--', 'hostname']).trim(), p.name);
      kubectl(['logs', p.name]);
      const out = path.join(vm1.dir, `pf-${p.name}.out`);
      const pf = start(
        'nsenter',
        [
          `--net=/run/netns/${vm1.netns}`,
          'kubectl',
          `--kubeconfig=${vm1.dir}/pki/admin.kubeconfig`,
          'port-forward',
          `pod/${p.name}`,
          '18090:8080',
        ],
        out,
      );
      try {
        await waitFor(
          () => /Forwarding from 127\.0\.0\.1:18090/.test(fs.readFileSync(out, 'utf8')),
          15_000,
          100,
          'port-forward listening',
        );
        assert.equal(vm1.httpGet('http://127.0.0.1:18090/').trim(), p.name);
      } finally {
        await stopPid(pf.pid, 2000);
      }
    }
  });

  test('node 3 stopped: NotReady, its pods replaced on nodes 1-2; joined again: Ready, routes in place both ways', async () => {
    assert.equal(await vm3.stop(), 0);
    await waitFor(
      () =>
        / (False|Unknown) /.test(
          kubectl([
            'get',
            'node',
            'vm-3',
            '-o',
            'jsonpath={.metadata.name} {.status.conditions[?(@.type=="Ready")].status} x',
          ]),
        ),
      90_000,
      1000,
      'vm-3 NotReady',
    );
    await waitFor(
      () => {
        const p = podsByNode();
        return p.length === 6 && p.every((x) => x.node !== 'vm-3');
      },
      120_000,
      1000,
      'six pods Running on vm-1 and vm-2',
    );
    // Join again: the node reuses its credentials (no token needed).
    await vm3.run(joinArgs(join), /This node has joined the cluster/);
    assert.match(vm3.log(), /using the credentials in /);
    const cidr = kubectl(['get', 'node', 'vm-3', '-o', 'jsonpath={.spec.podCIDR}']);
    assert.ok(vm1.exec('ip', ['route', 'show', 'proto', '77']).includes(`${cidr} via 192.0.2.3`));
    await waitFor(
      () =>
        vm3
          .exec('ip', ['route', 'show', 'proto', '77'])
          .split('\n')
          .filter((l) => / via 192\.0\.2\.[12] /.test(l)).length === 2,
      30_000,
      500,
      'vm-3 routes to vm-1 and vm-2',
    );
    // A new pod pinned to vm-3 is reachable from vm-1 again.
    kubectl(['run', 'back', '--image=127.0.0.1:5000/tskube/app:1', '--overrides={"spec":{"nodeName":"vm-3"}}']);
    const ip = await waitFor(
      () => kubectl(['get', 'pod', 'back', '-o', 'jsonpath={.status.podIP}']),
      60_000,
      1000,
      'pod on vm-3 has an IP',
    );
    assert.equal(
      await waitFor(() => vm1.httpGet(`http://${ip}:8080/`), 30_000, 500, 'vm-1 reaches the new pod on vm-3'),
      'hello from tskube\n',
    );
  });
});
