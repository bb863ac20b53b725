// e2e: cluster DNS on a `tskube up` node. A second namespace on the
// LAN runs Debian's dnsmasq as the upstream resolver (answering example.test).
// From inside pods, busybox nslookup resolves Services by FQDN and short name,
// headless Services (an endpoint turning unready drops out), SRV, PTR,
// ExternalName and NXDOMAIN, and forwards other names; from the node, dig
// (bind9-dnsutils) asks the kube-dns ClusterIP over UDP and TCP; /etc/hosts,
// dnsPolicy None and a hostNetwork pod with ClusterFirstWithHostNet.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip } from './cluster.js';
import { e2eSkipReason } from './harness.js';
import { start, waitFor } from './proc.js';
import { sh } from './proc.js';
import { HTTP_GET, Lan, type Vm, whoamiDeployment } from './vms.js';

const base = clusterSkip(e2eSkipReason());
const skip =
  base ??
  (['dnsmasq', 'dig'].find((c) => !sh('sh', ['-c', `command -v ${c}`], { allowFail: true }).trim())
    ? 'dnsmasq or dig missing (scripts/install-deps.sh installs dnsmasq-base and bind9-dnsutils)'
    : undefined);

const IMAGE = '127.0.0.1:5000/tskube/app:1';
const RESOLVER = '192.0.2.53';

describe('cluster DNS on a tskube up node', { skip, timeout: 10 * 60_000 }, () => {
  const lan = new Lan();
  let vm: Vm;
  let resolver: Vm;
  const kubectl = (args: string[], input?: string): string =>
    vm.exec('kubectl', [`--kubeconfig=${vm.dir}/pki/admin.kubeconfig`, ...args], { input, timeoutMs: 60_000 });
  // Output and errors both: busybox nslookup exits 1 when any search-path candidate fails, even after an answer.
  const inPod = (pod: string, script: string): string =>
    vm.exec(
      'kubectl',
      [`--kubeconfig=${vm.dir}/pki/admin.kubeconfig`, 'exec', pod, '--', 'sh', '-c', `${script} 2>&1; true`],
      { timeoutMs: 60_000 },
    );
  const dig = (args: string): string =>
    vm.exec('dig', ['@10.96.0.10', '+time=2', '+tries=2', ...args.split(' ')], { allowFail: true });

  before(async () => {
    await lan.create();
    resolver = await lan.vm('resolver', RESOLVER);
    // The upstream resolver: answers example.test, refuses the rest (nothing leaves the machine).
    resolver.proc = start(
      'dnsmasq',
      [
        '--keep-in-foreground',
        '--no-resolv',
        '--no-hosts',
        '--conf-file=/dev/null',
        `--listen-address=${RESOLVER}`,
        '--bind-interfaces',
        '--address=/example.test/192.0.2.200',
        '--user=root',
        '--group=root',
        `--pid-file=${path.join(resolver.dir, 'dnsmasq.pid')}`,
        '--log-facility=-',
      ],
      path.join(resolver.dir, 'dnsmasq.log'),
      { netns: resolver.netns },
    );
    resolver.record();
    vm = await lan.vm('dns-1', '192.0.2.1');
    await vm.run(['up', `--dns-upstream=${RESOLVER}`], /tskube is up/);
    kubectl(
      ['apply', '-f', '-'],
      `
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  terminationGracePeriodSeconds: 1
  hostAliases: [{ip: 192.0.2.99, hostnames: [alias.test, other.alias.test]}]
  containers: [{name: c, image: ${IMAGE}, command: [sleep, '3600']}]
---
apiVersion: v1
kind: Pod
metadata: {name: custom}
spec:
  terminationGracePeriodSeconds: 1
  dnsPolicy: None
  dnsConfig: {nameservers: [10.96.0.10], searches: [default.svc.cluster.local], options: [{name: ndots, value: '2'}, {name: timeout, value: '1'}]}
  containers: [{name: c, image: ${IMAGE}, command: [sleep, '3600']}]
---
apiVersion: v1
kind: Pod
metadata: {name: hostnet}
spec:
  terminationGracePeriodSeconds: 1
  hostNetwork: true
  dnsPolicy: ClusterFirstWithHostNet
  containers: [{name: c, image: ${IMAGE}, command: [sleep, '3600']}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: pg, port: 5432, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: ext}
spec: {type: ExternalName, externalName: www.example.test}
---
apiVersion: v1
kind: Service
metadata: {name: many}
spec:
  clusterIP: None
  ports: [{name: p, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: many-1, labels: {kubernetes.io/service-name: many}}
addressType: IPv4
ports: [{name: p, port: 80, protocol: TCP}]
endpoints:
${Array.from({ length: 100 }, (_, i) => `- {addresses: [10.250.0.${i + 1}], conditions: {ready: true}}`).join('\n')}
`,
    );
    kubectl(['apply', '-f', '-'], whoamiDeployment('web', 1));
    for (const i of [0, 1, 2]) {
      kubectl(
        ['apply', '-f', '-'],
        `
apiVersion: v1
kind: Pod
metadata: {name: db-${i}, labels: {app: db}}
spec:
  terminationGracePeriodSeconds: 1
  hostname: db-${i}
  subdomain: db
  containers:
  - name: c
    image: ${IMAGE}
    command: [sleep, '3600']
    readinessProbe: {exec: {command: [sh, -c, 'test ! -e /tmp/unready']}, periodSeconds: 1, failureThreshold: 1}
`,
      );
    }
    kubectl([
      'wait',
      '--for=condition=Ready',
      'pod/client',
      'pod/custom',
      'pod/hostnet',
      'pod/db-0',
      'pod/db-1',
      'pod/db-2',
      '--timeout=120s',
    ]);
    kubectl(['rollout', 'status', 'deployment/web', '--timeout=120s']);
  });
  after(() => lan.cleanup());

  test('kube-dns is 10.96.0.10 with this node as its ready endpoint; pods get it as nameserver with the cluster search path', () => {
    assert.equal(
      kubectl(['-n', 'kube-system', 'get', 'svc', 'kube-dns', '-o', 'jsonpath={.spec.clusterIP}']),
      '10.96.0.10',
    );
    assert.match(
      kubectl([
        '-n',
        'kube-system',
        'get',
        'endpointslices',
        '-l',
        'kubernetes.io/service-name=kube-dns',
        '-o',
        'jsonpath={.items[0].endpoints[0].addresses[0]} {.items[0].endpoints[0].conditions.ready}',
      ]),
      /^192\.0\.2\.1 true$/,
    );
    const conf = inPod('client', 'cat /etc/resolv.conf');
    assert.match(conf, /^nameserver 10\.96\.0\.10$/m);
    assert.match(conf, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local/m);
    assert.match(conf, /^options ndots:5$/m);
  });

  test('from a pod: a Service by FQDN and by short name (nslookup, and HTTP by name), kubernetes.default through the search path, ExternalName, NXDOMAIN, and example.test through the upstream', () => {
    const webIP = kubectl(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}']);
    assert.match(
      inPod('client', 'nslookup web.default.svc.cluster.local'),
      new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${webIP.replace(/\./g, '\\.')}`),
    );
    assert.match(
      inPod('client', 'nslookup web'),
      new RegExp(`Name:\\s+web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s+${webIP.replace(/\./g, '\\.')}`),
    );
    const webPod = kubectl(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}']);
    assert.equal(inPod('client', `${HTTP_GET}; get web 80`).trim(), webPod, 'HTTP to the short name');
    // busybox nslookup only searches names without a dot; the C library (ping here) follows ndots:5 as every program does.
    assert.match(inPod('client', 'ping -c1 -W1 kubernetes.default'), /^PING kubernetes\.default \(10\.96\.0\.1\)/m);
    assert.match(
      inPod('client', 'nslookup -type=cname ext.default.svc.cluster.local'),
      /canonical name = www\.example\.test/,
    );
    assert.match(inPod('client', 'nslookup nope.default.svc.cluster.local'), /NXDOMAIN/);
    assert.match(inPod('client', 'nslookup www.example.test'), /Address:\s+192\.0\.2\.200/);
    assert.match(inPod('client', 'nslookup -type=txt dns-version.cluster.local'), /"?1\.1\.0"?/);
  });

  test('a headless Service answers with its ready pods; one turning unready drops out; SRV for its named port; PTR for a pod IP', async () => {
    const ips = kubectl(['get', 'pods', '-l', 'app=db', '-o', 'jsonpath={.items[*].status.podIP}']).split(' ').sort();
    assert.equal(ips.length, 3);
    const answered = (out: string): string[] =>
      [...out.matchAll(/Address:\s+(10\.\d+\.\d+\.\d+)$/gm)].map((m) => m[1]!).sort();
    assert.deepEqual(answered(inPod('client', 'nslookup db.default.svc.cluster.local')), ips);
    const db1 = kubectl(['get', 'pod', 'db-1', '-o', 'jsonpath={.status.podIP}']);
    assert.match(
      inPod('client', 'nslookup db-1.db.default.svc.cluster.local'),
      new RegExp(`Address:\\s+${db1.replace(/\./g, '\\.')}$`, 'm'),
    );
    inPod('db-1', 'touch /tmp/unready');
    await waitFor(
      () => answered(inPod('client', 'nslookup db.default.svc.cluster.local')).length === 2,
      30_000,
      500,
      'db-1 to drop out of the answer',
    );
    assert.ok(!answered(inPod('client', 'nslookup db.default.svc.cluster.local')).includes(db1));
    const srv = inPod('client', 'nslookup -type=srv _pg._tcp.db.default.svc.cluster.local');
    assert.match(srv, /service = 0 \d+ 8080 db-0\.db\.default\.svc\.cluster\.local/);
    assert.match(srv, /service = 0 \d+ 8080 db-2\.db\.default\.svc\.cluster\.local/);
    const db0 = kubectl(['get', 'pod', 'db-0', '-o', 'jsonpath={.status.podIP}']);
    assert.match(inPod('client', `nslookup ${db0}`), /name = db-0\.db\.default\.svc\.cluster\.local/);
    assert.match(
      inPod('client', `nslookup -type=srv _http._tcp.web.default.svc.cluster.local`),
      /service = 0 100 80 web\.default\.svc\.cluster\.local/,
    );
  });

  test('dig on the node through the ClusterIP: UDP answers are authoritative with TTL 5; 100 headless endpoints come truncated over UDP and whole over TCP; NXDOMAIN carries the SOA', () => {
    const a = dig('web.default.svc.cluster.local A');
    assert.match(a, /flags: qr aa rd ra;/);
    assert.match(a, /^web\.default\.svc\.cluster\.local\.\s+5\s+IN\s+A\s+10\.\d+\.\d+\.\d+$/m);
    const udp = dig('+ignore +bufsize=512 many.default.svc.cluster.local A');
    assert.match(udp, /flags: qr aa tc rd ra;/);
    const tcp = dig('+tcp many.default.svc.cluster.local A');
    assert.match(tcp, /ANSWER: 100,/);
    const nx = dig('nope.default.svc.cluster.local A');
    assert.match(nx, /status: NXDOMAIN/);
    assert.match(
      nx,
      /^cluster\.local\.\s+5\s+IN\s+SOA\s+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 5$/m,
    );
    assert.match(dig('+short www.example.test'), /^192\.0\.2\.200$/m);
    const metrics = vm.httpGet('http://192.0.2.1:9153/metrics');
    assert.match(
      metrics,
      /coredns_dns_requests_total\{server="dns:\/\/:53",zone="\.",view="",proto="tcp",family="1",type="A"\} [1-9]/,
    );
    assert.match(metrics, /coredns_cache_misses_total/);
    assert.equal(vm.httpGet('http://127.0.0.1:8181/ready').trim(), 'OK');
    assert.equal(vm.httpGet('http://127.0.0.1:8080/health').trim(), 'OK');
  });

  test("a LAN host outside the cluster's ranges is refused: no recursion, no Services by PTR (the node and its pods still resolve)", () => {
    const fromLan = (args: string[]): string =>
      resolver.exec('dig', ['@192.0.2.1', '+time=2', '+tries=1', ...args], { allowFail: true });
    assert.match(fromLan(['example.test']), /status: REFUSED/);
    assert.match(fromLan(['-x', '10.96.0.1']), /status: REFUSED/);
    assert.match(fromLan(['+tcp', 'kubernetes.default.svc.cluster.local']), /status: REFUSED/);
    assert.match(dig('kubernetes.default.svc.cluster.local'), /status: NOERROR/);
    assert.match(inPod('client', 'nslookup www.example.test'), /Address:\s+192\.0\.2\.200/);
  });

  test("/etc/hosts has the pod's own line and its hostAliases; dnsPolicy None uses its dnsConfig; a hostNetwork pod with ClusterFirstWithHostNet resolves cluster names", () => {
    const ip = kubectl(['get', 'pod', 'client', '-o', 'jsonpath={.status.podIP}']);
    const hosts = inPod('client', 'cat /etc/hosts');
    assert.match(hosts, new RegExp(`^${ip.replace(/\./g, '\\.')}\\s+client$`, 'm'));
    assert.match(hosts, /^192\.0\.2\.99\s+alias\.test\s+other\.alias\.test$/m);
    const conf = inPod('custom', 'cat /etc/resolv.conf');
    assert.match(conf, /^search default\.svc\.cluster\.local$/m);
    assert.match(conf, /^options ndots:2 timeout:1$/m);
    assert.match(inPod('custom', 'nslookup web'), /Name:\s+web\.default\.svc\.cluster\.local/);
    assert.match(inPod('hostnet', 'cat /etc/resolv.conf'), /^nameserver 10\.96\.0\.10$/m);
    assert.match(inPod('hostnet', 'nslookup kubernetes.default.svc.cluster.local'), /Address:\s+10\.96\.0\.1\b/);
  });
});
