// e2e (issues 14, 19): the vxlan pod network for nodes on different subnets,
// dual-stack. Two LANs joined by a router namespace that routes both families:
// VM a (192.0.2.0/24, fd00:192::/64) runs `tskube up --pod-network=vxlan` with
// a cluster CIDR and a Service range of each family, VM b (198.51.100.0/24,
// fd00:198::/64) joins with the same backend. host-gw could not route here
// (the other node is not on the link); over flannel.1 and flannel-v6.1 every
// pod reaches every other pod by each of its addresses, and a dual-stack
// Service answers on both cluster IPs from both nodes' pods, from both nodes
// and from pods.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { clusterSkip } from './cluster.js';
import { e2eSkipReason } from './harness.js';
import { waitFor } from './proc.js';
import { HTTP_GET, Lan, type Vm, whoamiDeployment } from './vms.js';

describe('vxlan pod network across two subnets', { skip: clusterSkip(e2eSkipReason()), timeout: 10 * 60_000 }, () => {
  const lanA = new Lan();
  const lanB = new Lan();
  let a: Vm;
  let b: Vm;
  const kubectl = (args: string[], input?: string): string =>
    a.exec('kubectl', [`--kubeconfig=${a.dir}/pki/admin.kubeconfig`, ...args], { input });

  before(async () => {
    await lanA.create();
    await lanB.create(false);
    lanA.router(lanB, '192.0.2.254', '198.51.100.254', 'fd00:192::fe', 'fd00:198::fe');
    a = await lanA.vm('vm-a', '192.0.2.1', '192.0.2.254', 'fd00:192::1', 'fd00:192::fe');
    b = await lanB.vm('vm-b', '198.51.100.2', '198.51.100.254', 'fd00:198::2', 'fd00:198::fe');
    const out = await a.run(
      [
        'up',
        '--pod-network=vxlan',
        '--cluster-cidr=10.244.0.0/16,fd00:10:244::/56',
        '--service-cidr=10.96.0.0/12,fd00:10:96::/108',
      ],
      /tskube join \S+ --token \S+ --discovery-token-ca-cert-hash \S+/,
    );
    const join = /tskube join .*$/m.exec(out)![0].trim().split(/\s+/).slice(1);
    await b.run([...join, '--pod-network=vxlan'], /This node has joined the cluster/);
  });
  after(async () => {
    await lanB.cleanup();
    await lanA.cleanup();
  });

  test("each node has flannel.1 and flannel-v6.1 with their VTEP MACs on its Node, and routes the other's podCIDRs over them", async () => {
    for (const [vm, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const ann = (key: string) => `jsonpath={.metadata.annotations.flannel\\.alpha\\.coreos\\.com/${key}}`;
      for (const [dev, key, publicKey, ip] of [
        ['flannel.1', 'backend-data', 'public-ip', vm.ip],
        ['flannel-v6.1', 'backend-v6-data', 'public-ipv6', vm.ip6],
      ] as const) {
        const mac = await waitFor(
          () => JSON.parse(vm.exec('ip', ['-j', 'link', 'show', dev], { allowFail: true }) || '[]')[0]?.address,
          30_000,
          500,
          `${vm.name}: ${dev}`,
        );
        const data = await waitFor(() => kubectl(['get', 'node', vm.name, '-o', ann(key)]), 30_000, 500, key);
        assert.deepEqual(JSON.parse(data), { VNI: 1, VtepMAC: mac });
        assert.equal(kubectl(['get', 'node', vm.name, '-o', ann(publicKey)]), ip);
      }
      const [cidr, cidr6] = JSON.parse(
        kubectl(['get', 'node', other.name, '-o', 'jsonpath={.spec.podCIDRs}']),
      ) as string[];
      await waitFor(
        () =>
          vm
            .exec('ip', ['route', 'show', 'proto', '77'])
            .includes(`${cidr} via ${cidr!.split('/')[0]} dev flannel.1 onlink`),
        30_000,
        500,
        `${vm.name}: route to ${cidr} over flannel.1`,
      );
      // IPv6 routes print their metric before the flags: `… dev flannel-v6.1 metric 1024 onlink pref medium`.
      await waitFor(
        () =>
          vm
            .exec('ip', ['-6', 'route', 'show', 'proto', '77'])
            .split('\n')
            .some((l) => l.startsWith(`${cidr6} via ${cidr6!.split('/')[0]} dev flannel-v6.1 `) && / onlink/.test(l)),
        30_000,
        500,
        `${vm.name}: route to ${cidr6} over flannel-v6.1`,
      );
    }
  });

  test("pods on both nodes reach each other by each of their IPs, and a dual-stack Service answers on both cluster IPs from both nodes' pods, from both nodes and from pods", async () => {
    kubectl(['apply', '-f', '-'], whoamiDeployment('vx', 4));
    const pods = await waitFor(
      () => {
        const rows = kubectl([
          'get',
          'pods',
          '-l',
          'app=vx',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.status.podIPs[0].ip} {.status.podIPs[1].ip} {.spec.nodeName} {.status.phase}{"\\n"}{end}',
        ])
          .trim()
          .split('\n')
          .filter((l) => l.endsWith(' Running'))
          .map((l) => l.split(' '));
        return rows.length === 4 && new Set(rows.map((r) => r[3])).size === 2 ? rows : undefined;
      },
      120_000,
      1000,
      'four pods Running on both nodes',
    );
    for (const p of pods)
      assert.ok(
        p[1]!.startsWith('10.244.') && p[2]!.startsWith('fd00:10:244:'),
        `${p[0]}: an address of each family, got ${p[1]} ${p[2]}`,
      );
    const ips = pods.flatMap((p) => [p[1], p[2]]).join(' ');
    for (const [name] of pods) {
      const out = kubectl([
        'exec',
        name!,
        '--',
        'sh',
        '-c',
        `${HTTP_GET}; for ip in ${ips}; do get $ip 8080 || echo "FAIL $ip"; done`,
      ]);
      assert.deepEqual(
        out.trim().split('\n').sort(),
        pods.flatMap((p) => [p[0], p[0]]).sort(),
        `from ${name}:\n${out}`,
      );
    }
    kubectl(
      ['apply', '-f', '-'],
      'apiVersion: v1\nkind: Service\nmetadata: {name: vx}\nspec:\n  ipFamilyPolicy: RequireDualStack\n  selector: {app: vx}\n  ports: [{port: 80, targetPort: 8080}]\n',
    );
    const svcs = JSON.parse(kubectl(['get', 'svc', 'vx', '-o', 'jsonpath={.spec.clusterIPs}'])) as string[];
    assert.equal(svcs.length, 2);
    const nodeOf = new Map(pods.map((p) => [p[0]!, p[3]!]));
    for (const svc of svcs) {
      const host = svc.includes(':') ? `[${svc}]` : svc;
      for (const vm of [a, b]) {
        const seen = new Set<string>();
        await waitFor(
          () => {
            const n = nodeOf.get(vm.httpGet(`http://${host}/`).trim());
            if (n) seen.add(n);
            return seen.size === 2;
          },
          60_000,
          50,
          `ClusterIP ${svc} from ${vm.name} answered by pods on both nodes`,
        );
      }
      for (const [name] of pods.slice(0, 2)) {
        const out = kubectl([
          'exec',
          name!,
          '--',
          'sh',
          '-c',
          `${HTTP_GET}; for i in $(seq 20); do get ${svc} 80; done`,
        ]);
        assert.equal(
          new Set(
            out
              .trim()
              .split('\n')
              .map((n) => nodeOf.get(n)),
          ).size,
          2,
          `${svc} from ${name}:\n${out}`,
        );
      }
    }
  });
});
