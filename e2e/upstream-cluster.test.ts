// e2e: tskube's agents on the real control plane. VM 1 runs upstream's
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler (v1.37, built from
// their Go modules) with kubeadm's flags, and the image registry joined nodes pull
// from; VMs 2 and 3 run the `tskube join` line `tskube token create` prints against
// it. TLS bootstrap goes through the real CSR approver and signer, podCIDRs come from
// the real node IPAM, NodeRestriction is upstream's, and nothing tskube's agents ask
// for may be refused (the apiserver's audit log is read for refusals).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip } from './cluster.js';
import { e2eSkipReason } from './harness.js';
import { start, stopPid, waitFor } from './proc.js';
import { joinArgs, joinLine, startUpstreamControlPlane, tokenCreate } from './upstream-cluster.js';
import { upstreamBin, UpstreamControlPlane, upstreamSkip } from './upstream-control-plane.js';
import { HTTP_GET, Lan, runningPods, type Vm, whoamiDeployment } from './vms.js';

const skip = clusterSkip(e2eSkipReason()) ?? upstreamSkip();

describe('the upstream control plane with two tskube nodes joined to it', { skip, timeout: 20 * 60_000 }, () => {
  const lan = new Lan();
  let vm1: Vm;
  let vm2: Vm;
  let vm3: Vm;
  let cp: UpstreamControlPlane;
  let join = '';
  const kubectl = (args: string[], input?: string): string => cp.kubectl(args, input);
  before(async () => {
    await lan.create();
    ({ vm: vm1, cp } = await startUpstreamControlPlane(lan));
    vm2 = await lan.vm('vm-2', '192.0.2.2');
    vm3 = await lan.vm('vm-3', '192.0.2.3');
  });
  after(() => lan.cleanup());

  test('the control plane is upstream v1.37.2; tskube token create adds what join needs and prints the join line', () => {
    assert.match(kubectl(['version', '-o', 'json']), /"gitVersion": "v1\.37\.2"/);
    const out = tokenCreate(cp);
    assert.match(out, /created ConfigMap kube-public\/cluster-info, as kubeadm init does for joining nodes/);
    assert.match(out, /created ClusterRoleBinding tskube:node-proxier/);
    join = joinLine(out);
    assert.match(
      join,
      /^tskube join https:\/\/192\.0\.2\.1:6443 --token [a-z0-9]{6}\.[a-z0-9]{16} --discovery-token-ca-cert-hash sha256:[0-9a-f]{64}$/,
    );
  });

  test('two nodes join: TLS bootstrap through the real CSR controllers, Ready with podCIDRs from the real node IPAM', async () => {
    await Promise.all([
      vm2.run(joinArgs(join), /This node has joined the cluster/),
      vm3.run(joinArgs(join), /This node has joined the cluster/),
    ]);
    const csrs = kubectl([
      'get',
      'csr',
      '-o',
      'jsonpath={range .items[*]}{.spec.username} {.spec.signerName} {.status.conditions[0].type}{"\\n"}{end}',
    ]);
    assert.match(csrs, /system:bootstrap:\w+ kubernetes\.io\/kube-apiserver-client-kubelet Approved/);
    const nodes = await waitFor(
      () => {
        const o = kubectl([
          'get',
          'nodes',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status} {.spec.podCIDR} {.status.nodeInfo.kubeletVersion}{"\\n"}{end}',
        ]);
        return o.split('\n').filter((l) => / True 10\.244\.\d+\.0\/24 /.test(l)).length === 2 ? o : undefined;
      },
      120_000,
      1000,
      'two Ready nodes with podCIDRs',
    );
    const cidrs = nodes
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[2]);
    assert.equal(new Set(cidrs).size, 2, nodes);
    for (const v of nodes
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[3]!))
      assert.match(v, /^v1\.3[4-7]\.\d+/, `a kubelet version within 1.37's skew: ${nodes}`);
    const routes = vm2.exec('ip', ['route', 'show', 'proto', '77']);
    assert.match(routes, /via 192\.0\.2\.3 dev eth0/);
  });

  const podsByNode = () => runningPods((args) => kubectl(args), 'spread');

  test('a 4-replica Deployment spreads over both nodes; every pod reaches every other by IP', async () => {
    kubectl(
      ['apply', '-f', '-'],
      whoamiDeployment(
        'spread',
        4,
        `      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
`,
      ),
    );
    const pods = await waitFor(
      () => {
        const p = podsByNode();
        return p.length === 4 ? p : undefined;
      },
      180_000,
      1000,
      'four pods Running',
    );
    assert.deepEqual([...new Set(pods.map((p) => p.node))].sort(), ['vm-2', 'vm-3'], JSON.stringify(pods));
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

  test("ClusterIP and NodePort through tskube's kube-proxy on both nodes, with the real Service and EndpointSlice controllers", async () => {
    kubectl(['expose', 'deployment', 'spread', '--port=80', '--target-port=8080', '--type=NodePort']);
    const ip = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.clusterIP}']);
    const nodePort = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.ports[0].nodePort}']);
    const nodeOf = new Map(podsByNode().map((p) => [p.name, p.node]));
    for (const vm of [vm2, vm3]) {
      for (const url of [`http://${ip}/`, `http://${vm.ip}:${nodePort}/`]) {
        const seen = new Set<string>();
        await waitFor(
          () => {
            const name = vm.httpGet(url).trim();
            if (nodeOf.has(name)) seen.add(nodeOf.get(name)!);
            return seen.size === 2;
          },
          60_000,
          50,
          `${url} from ${vm.name} reaches pods on both nodes`,
        );
      }
    }
  });

  test("pods on both nodes resolve Services by name through tskube's cluster DNS, run beside the real control plane", async () => {
    const ip = kubectl(['get', 'svc', 'spread', '-o', 'jsonpath={.spec.clusterIP}']);
    await waitFor(
      () =>
        /192\.0\.2\.1/.test(
          kubectl([
            'get',
            'endpointslices',
            '-n',
            'kube-system',
            '-l',
            'kubernetes.io/service-name=kube-dns',
            '-o',
            'jsonpath={.items[*].endpoints[*].addresses}',
          ]),
        ),
      60_000,
      500,
      'tskube dns published as kube-dns',
    );
    const pods = podsByNode();
    for (const node of ['vm-2', 'vm-3']) {
      const client = pods.find((p) => p.node === node)!;
      const out = await waitFor(
        () => {
          const o = kubectl([
            'exec',
            client.name,
            '--',
            'sh',
            '-c',
            'nslookup spread.default.svc.cluster.local 2>&1; true',
          ]);
          return o.includes(ip) ? o : undefined;
        },
        30_000,
        1000,
        `a Service name resolved from ${node}`,
      );
      assert.match(
        out,
        new RegExp(`Name:\\s+spread\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${ip.replace(/\./g, '\\.')}`),
        `${node}:\n${out}`,
      );
    }
  });

  test("kubectl logs, exec and port-forward go through the real apiserver to tskube's kubelet API", async () => {
    for (const p of podsByNode().slice(0, 2)) {
      assert.equal(kubectl(['exec', p.name, '--', 'hostname']).trim(), p.name);
      kubectl(['logs', p.name]);
      const out = path.join(vm1.dir, `pf-${p.name}.out`);
      const pf = start(
        upstreamBin('kubectl'),
        [`--kubeconfig=${cp.adminConf}`, 'port-forward', `pod/${p.name}`, '18090:8080'],
        out,
        { netns: vm1.netns },
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

  test('kubectl run -i --rm shows the output of a container that exits before the attach (kubectl falls back to its logs)', () => {
    for (const name of ['quick-1', 'quick-2']) {
      const out = kubectl([
        'run',
        '-i',
        '--rm',
        name,
        '--image=127.0.0.1:5000/tskube/app:1',
        '--restart=Never',
        '--',
        'sh',
        '-c',
        'echo hi from $HOSTNAME',
      ]);
      assert.match(out, new RegExp(`^hi from ${name}$`, 'm'), out);
    }
  });

  test('a static pod on a joined node gets its mirror pod; the node Lease is renewed', async () => {
    fs.mkdirSync(path.join(vm2.dir, 'manifests'), { recursive: true });
    fs.writeFileSync(
      path.join(vm2.dir, 'manifests', 'static.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: static}\nspec:\n  containers:\n  - {name: c, image: 127.0.0.1:5000/tskube/app:1, command: [sleep, "3600"]}\n',
    );
    await waitFor(
      () => /static-vm-2\s+1\/1\s+Running/.test(kubectl(['get', 'pods', '-n', 'default'])),
      120_000,
      1000,
      'mirror pod Running',
    );
    const renew = () => kubectl(['get', 'lease', 'vm-2', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.renewTime}']);
    const first = renew();
    await waitFor(() => renew() !== first, 30_000, 1000, 'the Lease renewed');
  });

  test("nothing tskube's agents asked the real apiserver for was refused (NodeRestriction and the Node authorizer are upstream's)", () => {
    const refused = cp.refusals(
      (u) => u.startsWith('system:node:') || u.startsWith('system:bootstrap:') || u === 'system:coredns',
    );
    assert.deepEqual(refused, []);
  });

  test("kubectl drain evicts node 2's pods through the real eviction API; they run on node 3; uncordon", async () => {
    const out = kubectl(['drain', 'vm-2', '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=120s']);
    assert.match(out, /node\/vm-2 drained/);
    await waitFor(
      () => {
        const p = podsByNode();
        return p.length === 4 && p.every((x) => x.node === 'vm-3');
      },
      180_000,
      1000,
      'four pods Running on vm-3',
    );
    assert.match(
      kubectl(['get', 'pods', 'static-vm-2']),
      /Running/,
      'the mirror pod stays: drain leaves static pods to their node',
    );
    kubectl(['uncordon', 'vm-2']);
  });

  test('node 3 stopped: NotReady, its pods replaced on node 2', async () => {
    const code = await vm3.stop();
    const log = vm3.log();
    assert.equal(
      code,
      0,
      `join on vm-3 stopped by Ctrl-C:\n${log.slice(log.lastIndexOf('SIGINT')).slice(0, 3000)}\nkubelet log:\n${vm3.componentLog('kubelet').slice(-3000)}`,
    );
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
      120_000,
      1000,
      'vm-3 NotReady',
    );
    await waitFor(
      () => {
        const p = podsByNode();
        return p.length === 4 && p.every((x) => x.node === 'vm-2');
      },
      180_000,
      1000,
      'four pods Running on vm-2',
    );
  });
});
