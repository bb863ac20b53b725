// e2e (issue 14): the vxlan pod network for nodes on different subnets. Two
// LANs joined by a router namespace: VM a (192.0.2.0/24) runs `tskube up
// --pod-network=vxlan`, VM b (198.51.100.0/24) joins with the same backend.
// host-gw could not route here (the other node is not on the link); over
// flannel.1 every pod reaches every other pod, and a Service answers from both
// nodes' pods, from both nodes and from pods.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eSkipReason } from './harness.js';
import { waitFor } from './proc.js';
import { clusterSkip } from './cluster.js';
import { HTTP_GET, Lan, whoamiDeployment, type Vm } from './vms.js';


describe('vxlan pod network across two subnets', { skip: clusterSkip(e2eSkipReason()), timeout: 10 * 60_000 }, () => {
  const lanA = new Lan();
  const lanB = new Lan();
  let a: Vm;
  let b: Vm;
  const kubectl = (args: string[], input?: string): string => a.exec('kubectl', [`--kubeconfig=${a.dir}/pki/admin.kubeconfig`, ...args], { input });

  before(async () => {
    await lanA.create();
    await lanB.create(false);
    lanA.router(lanB, '192.0.2.254', '198.51.100.254');
    a = await lanA.vm('vm-a', '192.0.2.1', '192.0.2.254');
    b = await lanB.vm('vm-b', '198.51.100.2', '198.51.100.254');
    const out = await a.run(['up', '--pod-network=vxlan'], /tskube join \S+ --token \S+ --discovery-token-ca-cert-hash \S+/);
    const join = /tskube join .*$/m.exec(out)![0].trim().split(/\s+/).slice(1);
    await b.run([...join, '--pod-network=vxlan'], /This node has joined the cluster/);
  });
  after(async () => {
    await lanB.cleanup();
    await lanA.cleanup();
  });

  test('each node has flannel.1 with its VTEP MAC on its Node, and routes the other podCIDR over it', async () => {
    for (const [vm, other] of [[a, 'vm-b'], [b, 'vm-a']] as const) {
      const mac = JSON.parse(vm.exec('ip', ['-j', 'link', 'show', 'flannel.1']))[0].address;
      const data = await waitFor(() => kubectl(['get', 'node', vm.name, '-o', 'jsonpath={.metadata.annotations.flannel\\.alpha\\.coreos\\.com/backend-data}']), 30_000, 500, 'backend-data');
      assert.deepEqual(JSON.parse(data), { VNI: 1, VtepMAC: mac });
      const cidr = kubectl(['get', 'node', other, '-o', 'jsonpath={.spec.podCIDR}']);
      await waitFor(() => vm.exec('ip', ['route', 'show', 'proto', '77']).includes(`${cidr} via ${cidr.split('/')[0]} dev flannel.1 onlink`), 30_000, 500, `${vm.name}: route to ${cidr} over flannel.1`);
    }
  });

  test('pods on both nodes reach each other by IP, and a Service answers from both nodes\' pods, from both nodes and from pods', async () => {
    kubectl(['apply', '-f', '-'], whoamiDeployment('vx', 4));
    const pods = await waitFor(() => {
      const rows = kubectl(['get', 'pods', '-l', 'app=vx', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.podIP} {.spec.nodeName} {.status.phase}{"\\n"}{end}']).trim().split('\n').filter((l) => l.endsWith(' Running')).map((l) => l.split(' '));
      return rows.length === 4 && new Set(rows.map((r) => r[2])).size === 2 ? rows : undefined;
    }, 120_000, 1000, 'four pods Running on both nodes');
    const ips = pods.map((p) => p[1]).join(' ');
    for (const [name] of pods) {
      const out = kubectl(['exec', name!, '--', 'sh', '-c', `${HTTP_GET}; for ip in ${ips}; do get $ip 8080 || echo "FAIL $ip"; done`]);
      assert.deepEqual(out.trim().split('\n').sort(), pods.map((p) => p[0]).sort(), `from ${name}:\n${out}`);
    }
    kubectl(['expose', 'deployment', 'vx', '--port=80', '--target-port=8080']);
    const svc = kubectl(['get', 'svc', 'vx', '-o', 'jsonpath={.spec.clusterIP}']);
    const nodeOf = new Map(pods.map((p) => [p[0]!, p[2]!]));
    for (const vm of [a, b]) {
      const seen = new Set<string>();
      await waitFor(() => {
        const n = nodeOf.get(vm.httpGet(`http://${svc}/`).trim());
        if (n) seen.add(n);
        return seen.size === 2;
      }, 60_000, 50, `ClusterIP from ${vm.name} answered by pods on both nodes`);
    }
    for (const [name] of pods.slice(0, 2)) {
      const out = kubectl(['exec', name!, '--', 'sh', '-c', `${HTTP_GET}; for i in $(seq 20); do get ${svc} 80; done`]);
      assert.equal(new Set(out.trim().split('\n').map((n) => nodeOf.get(n))).size, 2, `from ${name}:\n${out}`);
    }
  });
});
