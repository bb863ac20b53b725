// e2e: a dual-stack pod network. Two VMs on a LAN with an IPv4 and
// an IPv6 subnet; VM a runs `tskube up` with a cluster CIDR and a Service range
// of each family and `--node-ip` of both, VM b joins with its pair. Every Node
// gets a podCIDR and an InternalIP of each family, every pod an address of
// each; pods reach each other's IPv6 addresses across nodes over host-gw
// routes; a RequireDualStack Service answers on its IPv6 cluster IP from both
// nodes and from pods; pod IPv6 egress to the LAN leaves with the node's address;
// the kubelet API answers on the IPv6 address.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip } from './cluster.js';
import { e2eSkipReason } from './harness.js';
import { type Proc, sh, start, stopPid, waitFor } from './proc.js';
import { HTTP_GET, Lan, type Vm, whoamiDeployment } from './vms.js';

const LAN_HOST6 = 'fd00:192::fe';

describe(
  'dual stack: two VMs, pods and Services of both families',
  { skip: clusterSkip(e2eSkipReason()), timeout: 10 * 60_000 },
  () => {
    const lan = new Lan();
    let a: Vm;
    let b: Vm;
    let echo: Proc | undefined;
    const kubectl = (args: string[], input?: string): string =>
      a.exec('kubectl', [`--kubeconfig=${a.dir}/pki/admin.kubeconfig`, ...args], { input });

    before(async () => {
      await lan.create();
      a = await lan.vm('vm-a', '192.0.2.1', undefined, 'fd00:192::1');
      b = await lan.vm('vm-b', '192.0.2.2', undefined, 'fd00:192::2');
      const out = await a.run(
        ['up', '--cluster-cidr=10.244.0.0/16,fd00:10:244::/56', '--service-cidr=10.96.0.0/12,fd00:10:96::/108'],
        /tskube join \S+ --token \S+ --discovery-token-ca-cert-hash \S+/,
      );
      const join = /tskube join .*$/m.exec(out)![0].trim().split(/\s+/).slice(1);
      await b.run(join, /This node has joined the cluster/);
    });
    after(async () => {
      if (echo) await stopPid(echo.pid, 2000, 'SIGKILL');
      await lan.cleanup();
    });

    test("each Node has a podCIDR and an InternalIP of each family, and each node routes the other's IPv6 podCIDR via its IPv6 address", async () => {
      const cidrs = new Map<string, string[]>();
      for (const vm of [a, b]) {
        const got = await waitFor(
          () => {
            const n = JSON.parse(kubectl(['get', 'node', vm.name, '-o', 'json']));
            return n.spec.podCIDRs?.length === 2 ? n : undefined;
          },
          60_000,
          500,
          `${vm.name}: two podCIDRs`,
        );
        assert.match(got.spec.podCIDRs[0], /^10\.244\.\d+\.0\/24$/);
        assert.match(got.spec.podCIDRs[1], /^fd00:10:244:[0-9a-f:]*\/64$/);
        const internal = got.status.addresses
          .filter((x: { type: string }) => x.type === 'InternalIP')
          .map((x: { address: string }) => x.address);
        assert.deepEqual(internal, [vm.ip, vm.ip6]);
        cidrs.set(vm.name, got.spec.podCIDRs);
      }
      for (const [vm, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const v6 = cidrs.get(other.name)![1]!;
        await waitFor(
          () => vm.exec('ip', ['-6', 'route', 'show', 'proto', '77']).includes(`${v6} via ${other.ip6}`),
          30_000,
          500,
          `${vm.name}: IPv6 route to ${v6}`,
        );
        assert.ok(
          vm.exec('ip', ['route', 'show', 'proto', '77']).includes(`${cidrs.get(other.name)![0]} via ${other.ip}`),
          `${vm.name}: IPv4 route too`,
        );
        // The kubelet API's wildcard address takes both families, as Go's does.
        assert.equal(
          vm.exec(
            'curl',
            ['-sk', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '5', `https://[${other.ip6}]:10250/healthz`],
            { allowFail: true },
          ),
          '401',
        );
      }
    });

    test('pods get an address of each family and reach each other over IPv6 across nodes; a dual-stack Service answers on its IPv6 cluster IP from both nodes and from pods', async () => {
      kubectl(['apply', '-f', '-'], whoamiDeployment('ds', 4));
      const pods = await waitFor(
        () => {
          const items = (
            JSON.parse(kubectl(['get', 'pods', '-l', 'app=ds', '-o', 'json'])).items as {
              metadata: { name: string };
              spec: { nodeName: string };
              status: { phase: string; podIPs?: { ip: string }[] };
            }[]
          ).filter((p) => p.status.phase === 'Running');
          return items.length === 4 && new Set(items.map((p) => p.spec.nodeName)).size === 2 ? items : undefined;
        },
        120_000,
        1000,
        'four pods Running on both nodes',
      );
      for (const p of pods) {
        const ips = (p.status.podIPs ?? []).map((x) => x.ip);
        assert.equal(ips.length, 2, `${p.metadata.name}: ${JSON.stringify(ips)}`);
        assert.match(ips[0]!, /^10\.244\./);
        assert.match(ips[1]!, /^fd00:10:244:/);
      }
      const v6 = pods.map((p) => p.status.podIPs![1]!.ip);
      // The kubelet's /etc/hosts names the pod by both of its addresses, as upstream's.
      const hosts = kubectl(['exec', pods[0]!.metadata.name, '--', 'cat', '/etc/hosts']);
      for (const x of pods[0]!.status.podIPs!)
        assert.match(hosts, new RegExp(`^${x.ip.replace(/\./g, '\\.')}\t${pods[0]!.metadata.name}$`, 'm'), hosts);
      for (const p of pods.slice(0, 2)) {
        const out = kubectl([
          'exec',
          p.metadata.name,
          '--',
          'sh',
          '-c',
          `${HTTP_GET}; for ip in ${v6.join(' ')}; do get $ip 8080 || echo "FAIL $ip"; done`,
        ]);
        assert.deepEqual(
          out.trim().split('\n').sort(),
          pods.map((x) => x.metadata.name).sort(),
          `from ${p.metadata.name}:\n${out}`,
        );
      }
      kubectl(
        ['apply', '-f', '-'],
        'apiVersion: v1\nkind: Service\nmetadata: {name: ds}\nspec:\n  ipFamilyPolicy: RequireDualStack\n  selector: {app: ds}\n  ports: [{port: 80, targetPort: 8080}]\n',
      );
      const ips = kubectl(['get', 'svc', 'ds', '-o', 'jsonpath={.spec.clusterIPs}']);
      const [svc4, svc6] = JSON.parse(ips) as string[];
      assert.match(svc4!, /^10\.(9[6-9]|10\d|11[01])\./);
      assert.match(svc6!, /^fd00:10:96::/);
      const nodeOf = new Map(pods.map((p) => [p.metadata.name, p.spec.nodeName]));
      for (const vm of [a, b]) {
        const seen = new Set<string>();
        await waitFor(
          () => {
            const n = nodeOf.get(vm.httpGet(`http://[${svc6}]/`).trim());
            if (n) seen.add(n);
            return seen.size === 2;
          },
          60_000,
          50,
          `IPv6 ClusterIP from ${vm.name} answered by pods on both nodes`,
        );
      }
      const out = kubectl([
        'exec',
        pods[0]!.metadata.name,
        '--',
        'sh',
        '-c',
        `${HTTP_GET}; for i in $(seq 20); do get ${svc6} 80; done`,
      ]);
      assert.equal(
        new Set(
          out
            .trim()
            .split('\n')
            .map((n) => nodeOf.get(n)),
        ).size,
        2,
        `from a pod over IPv6:\n${out}`,
      );
    });

    test("a pod's IPv6 traffic to an address outside the pod network leaves with its node's IPv6 address (masquerade)", async () => {
      // A host on the LAN with no route to any podCIDR: only a masqueraded request can be answered.
      sh('ip', ['-6', 'addr', 'add', `${LAN_HOST6}/64`, 'dev', 'br0', 'nodad'], { netns: lan.netns });
      const script = "require('http').createServer((q, r) => r.end(q.socket.remoteAddress + '\\n')).listen(8081, '::')";
      echo = start(process.execPath, ['-e', script], path.join(lan.dir, 'echo.out'), { netns: lan.netns });
      const onB = JSON.parse(
        kubectl(['get', 'pods', '-l', 'app=ds', '--field-selector=spec.nodeName=vm-b', '-o', 'json']),
      ).items[0].metadata.name as string;
      const seen = await waitFor(
        () =>
          kubectl(['exec', onB, '--', 'sh', '-c', `${HTTP_GET}; get ${LAN_HOST6} 8081 || true`]).trim() || undefined,
        30_000,
        500,
        'an answer from the LAN host',
      );
      assert.equal(seen, b.ip6);
    });
  },
);
