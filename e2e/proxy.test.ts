// e2e: kube-proxy in iptables and in nftables mode in the node namespace, with real pods behind a
// Service made by the real kubectl: the ClusterIP spreads requests over all ready pods, the NodePort
// answers on the node, a pod failing readiness drops out and comes back, a Service without endpoints
// refuses at once, restarting kube-proxy loses no request, UDP conntrack entries follow endpoints,
// ClientIP affinity sticks, Local policy keeps to this node; switching modes leaves nothing stale.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { svcChain } from '../proxy/iptables/chains.js';
import { servicePortBase } from '../proxy/nftables/names.js';
import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eSkipReason } from './harness.js';
import { sh, waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());

type Mode = 'iptables' | 'nftables';

function proxySuite(mode: Mode): void {
  describe(`kube-proxy (${mode})`, { skip, timeout: 8 * 60_000 }, () => {
    // Dual-stack Service ranges: the same proxy programs IPv4 and IPv6 rules.
    const cluster = new TestCluster({ apiserverFlags: ['--service-cluster-ip-range=10.96.0.0/12,fd00:10:96::/108'] });
    const proxyArgs = (m: Mode = mode): string[] => [
      `--kubeconfig=${path.join(cluster.as.dir, 'pki', 'kube-proxy.kubeconfig')}`,
      '--cluster-cidr=10.244.0.0/16,fd00:10:244::/64',
      '--healthz-bind-address=127.0.0.1:10256',
      '--metrics-bind-address=127.0.0.1:10249',
      `--proxy-mode=${m}`,
      '--v=4',
    ];
    const iptablesNat = (): string => cluster.node.exec('iptables-save', ['-t', 'nat']);
    const nftTable = (): string =>
      sh('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: cluster.node.netns, allowFail: true });
    /** The proxy's rules as text, in the mode's own listing. */
    const rules = (): string => (mode === 'iptables' ? iptablesNat() : nftTable());
    /** How the rules name an IPv4 endpoint: a DNAT target, or (nftables) the value of an endpoint slot range. */
    const dnatTo = (ip: string, port: number): string =>
      mode === 'iptables' ? `--to-destination ${ip}:${port}` : `: ${ip} . ${port}`;
    // nftables: the ranges of the service chains' endpoint slots (one per endpoint).
    const dnatCount = (): number =>
      (
        rules().match(
          mode === 'iptables'
            ? /-j DNAT --to-destination 10\.244\.\d+\.\d+:8080/g
            : /\d+-\d+ : 10\.244\.\d+\.\d+ \. 8080/g,
        ) ?? []
      ).length;
    let clusterIP = '';
    let nodePort = 0;
    let bridgeIP = '';

    const inPod = async (pod: string, script: string, timeoutSec = 120): Promise<string> => {
      const id = cluster
        .kubectl(['get', 'pod', pod, '-o', 'jsonpath={.status.containerStatuses[0].containerID}'])
        .replace('containerd://', '');
      const r = await cluster.node.cri.execSync(id, ['/bin/sh', '-c', script], timeoutSec);
      return Buffer.from(r.stdout ?? '').toString('utf8') + Buffer.from(r.stderr ?? '').toString('utf8');
    };
    /** n requests to the ClusterIP from the client pod: the answering pod names (or FAIL). */
    const requests = async (n: number, url = `http://${clusterIP}/`): Promise<string[]> =>
      // busybox wget's -T segfaults in this static build; `timeout` bounds each request instead.
      (await inPod('client', `for i in $(seq ${n}); do timeout 2 wget -q -O - ${url} 2>/dev/null || echo FAIL; done`))
        .trim()
        .split('\n');
    const counts = (answers: string[]): Record<string, number> =>
      answers.reduce<Record<string, number>>((m, a) => ((m[a] = (m[a] ?? 0) + 1), m), {});

    before(async () => {
      await cluster.start();
      cluster.node.startProxy(proxyArgs());
      for (const i of [0, 1, 2]) {
        cluster.apply({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `web-${i}`, labels: { app: 'web' } },
          spec: {
            terminationGracePeriodSeconds: 2,
            containers: [
              {
                name: 'web',
                image: APP_IMAGE,
                command: ['/bin/sh', '-c', 'hostname > /www/index.html; exec httpd -f -p 8080 -h /www'],
                ports: [{ name: 'http', containerPort: 8080 }],
                readinessProbe: {
                  exec: { command: ['/bin/sh', '-c', 'test ! -e /tmp/unready'] },
                  periodSeconds: 1,
                  failureThreshold: 1,
                },
              },
            ],
          },
        });
      }
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'client' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: APP_IMAGE, command: ['/bin/sleep', '3600'] }],
        },
      });
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { type: 'NodePort', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] },
      });
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'empty' },
        spec: { selector: { app: 'nothing' }, ports: [{ port: 80, targetPort: 8080 }] },
      });
      await waitFor(
        () => (cluster.kubectl(['get', 'pods']).match(/1\/1\s+Running/g) ?? []).length === 4,
        90_000,
        500,
        'all pods ready',
      );
      clusterIP = cluster.kubectl(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}']);
      nodePort = Number(cluster.kubectl(['get', 'svc', 'web', '-o', 'jsonpath={.spec.ports[0].nodePort}']));
      bridgeIP = cluster.node.podSubnet.replace(/\.0\/24$/, '.1');
      // The slice lists three ready endpoints, and the proxy has synced all three (a sync may lag the slice by minSyncPeriod).
      await waitFor(
        () =>
          (
            cluster
              .kubectl([
                'get',
                'endpointslices',
                '-l',
                'kubernetes.io/service-name=web',
                '-o',
                'jsonpath={.items[0].endpoints[*].conditions.ready}',
              ])
              .match(/true/g) ?? []
          ).length === 3 && dnatCount() === 3,
        30_000,
        500,
        'rules for the three web endpoints',
      );
    });
    after(() => cluster.cleanup());

    test('the EndpointSlice controller lists the three pods, and the rules use upstream names', () => {
      const slice = JSON.parse(
        cluster.kubectl(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'json']),
      ).items[0];
      assert.deepEqual(slice.ports, [{ name: '', port: 8080, protocol: 'TCP' }]);
      assert.deepEqual(slice.endpoints.map((e: any) => e.targetRef.name).sort(), ['web-0', 'web-1', 'web-2']);
      assert.ok(slice.endpoints.every((e: any) => e.nodeName === 'node-a'));
      if (mode === 'iptables') {
        const nat = iptablesNat();
        assert.match(
          nat,
          new RegExp(
            `-A KUBE-SERVICES -d ${clusterIP.replace(/\./g, '\\.')}/32 -p tcp -m comment --comment "default/web cluster IP" -m tcp --dport 80 -j ${svcChain('default/web', 'tcp')}`,
          ),
        );
        assert.match(nat, /-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES/);
        assert.doesNotMatch(cluster.node.exec('nft', ['list', 'tables']), /kube-proxy/);
      } else {
        const t = nftTable();
        const chain = `service-${servicePortBase('default/web', 'tcp')}`;
        assert.match(
          t,
          new RegExp(
            `elements = \\{[^}]*${clusterIP.replace(/\./g, '\\.')} \\. tcp \\. 80 : goto ${chain.replace(/[/.]/g, '\\$&')}`,
          ),
        );
        assert.match(
          t,
          /chain nat-prerouting \{\n\s+type nat hook prerouting priority dstnat; policy accept;\n\s+jump services/,
        );
        const chainText = new RegExp(`chain ${chain.replace(/[/.]/g, '\\$&')} \\{([^}]*)\\}`).exec(t)?.[1] ?? '';
        const slots =
          /meta l4proto tcp dnat ip to numgen random mod 4096 offset (\d+) map @(endpoint-slots-tcp-\d+)\n/.exec(
            chainText,
          );
        assert.ok(slots, `the service chain DNATs through its block of endpoint slots: ${chainText}`);
        const lo = Number(slots[1]);
        const map = new RegExp(`map ${slots[2]} \\{[^}]*elements = \\{([^}]*)\\}`).exec(t)?.[1] ?? '';
        // Three near-equal shares of the block's 4096 keys, one per endpoint.
        assert.match(
          map.replace(/\s+/g, ' '),
          new RegExp(
            `${lo}-${lo + 1364} : 10\\.244\\.\\d+\\.\\d+ \\. 8080, ${lo + 1365}-${lo + 2729} : 10\\.244\\.\\d+\\.\\d+ \\. 8080, ${lo + 2730}-${lo + 4095} : 10\\.244\\.\\d+\\.\\d+ \\. 8080`,
          ),
        );
        assert.match(t, /set hairpin-endpoints \{[^}]*\b(10\.244\.\d+\.\d+) \. \1\b/);
        assert.doesNotMatch(iptablesNat(), /KUBE-SERVICES/, 'no iptables-mode rules');
      }
      assert.equal(dnatCount(), 3);
      assert.match(
        cluster.kubectl(['get', 'endpoints', 'web']),
        /web\s+10\.244\.\d+\.\d+:8080,10\.244\.\d+\.\d+:8080,10\.244\.\d+\.\d+:8080/,
      );
    });

    test('300 requests to the ClusterIP from another pod reach all three pods, each at least 15%', async () => {
      const c = counts(await requests(300));
      assert.equal(c.FAIL, undefined, `no failed request: ${JSON.stringify(c)}`);
      assert.deepEqual(Object.keys(c).sort(), ['web-0', 'web-1', 'web-2']);
      for (const [pod, n] of Object.entries(c)) assert.ok(n >= 45, `${pod} answered ${n} of 300: ${JSON.stringify(c)}`);
    });

    test('hairpin: a pod reaching its own Service gets answers from itself too (masqueraded), none lost', async () => {
      const out = (
        await inPod(
          'web-0',
          `for i in $(seq 30); do timeout 2 wget -q -O - http://${clusterIP}/ 2>/dev/null || echo FAIL; done`,
        )
      )
        .trim()
        .split('\n');
      const c = counts(out);
      assert.equal(c.FAIL, undefined, JSON.stringify(c));
      assert.ok((c['web-0'] ?? 0) > 0, `web-0 reached itself: ${JSON.stringify(c)}`);
    });

    test(
      mode === 'iptables'
        ? 'the NodePort answers from the node namespace, on every local address and on localhost'
        : 'the NodePort answers on the node IP (nodePortAddresses "primary"), not on other local addresses nor localhost',
      async () => {
        // In nftables mode the node IP comes from the Node object, whose address may reach the proxy after its first sync.
        await waitFor(
          () => /^web-[012]\n$/.test(cluster.node.httpGet(`http://${cluster.node.nodeIP}:${nodePort}/`, 2)),
          15_000,
          200,
          'the NodePort on the node IP',
        ).catch((e: Error) => {
          throw new Error(
            `${e.message}; node IP ${cluster.node.nodeIP}; the proxy's log:\n${cluster.node.proxyLog().split('\n').slice(-40).join('\n')}`,
          );
        });
        if (mode === 'iptables') {
          assert.match(cluster.node.httpGet(`http://${bridgeIP}:${nodePort}/`), /^web-[012]\n$/);
          assert.match(cluster.node.httpGet(`http://127.0.0.1:${nodePort}/`), /^web-[012]\n$/);
        } else {
          assert.equal(cluster.node.httpGet(`http://${bridgeIP}:${nodePort}/`, 2), '');
          assert.equal(cluster.node.httpGet(`http://127.0.0.1:${nodePort}/`, 2), '');
        }
      },
    );

    test('a pod whose readiness probe fails stops getting traffic within about 2 s, and gets it back when ready', async () => {
      await inPod('web-1', 'touch /tmp/unready');
      const t0 = Date.now();
      await waitFor(async () => !(await requests(20)).includes('web-1'), 15_000, 100, 'web-1 out of rotation');
      const took = Date.now() - t0;
      assert.ok(took < 6000, `took ${took} ms (probe period 1 s, then status, EndpointSlice and rules)`);
      const c = counts(await requests(60));
      assert.equal(c['web-1'], undefined);
      assert.equal(c.FAIL, undefined);
      assert.equal(
        cluster.kubectl(['get', 'pod', 'web-1', '-o', 'jsonpath={.status.containerStatuses[0].restartCount}']),
        '0',
        'readiness never restarts',
      );
      await inPod('web-1', 'rm /tmp/unready');
      await waitFor(async () => (await requests(30)).includes('web-1'), 15_000, 200, 'web-1 back in rotation');
      process.stdout.write(`# readiness failure to out of rotation: ${took} ms\n`);
      // In nftables mode these partial syncs went straight to the kernel over netlink, not through nft.
      if (mode === 'nftables')
        assert.match(
          cluster.node.proxyLog(),
          /synced nftables IPv4 \(partial, \d+ service\(s\)\): .* [1-9]\d* over netlink/,
        );
    });

    test('a Service with no endpoints refuses connections at once instead of hanging', async () => {
      const ip = cluster.kubectl(['get', 'svc', 'empty', '-o', 'jsonpath={.spec.clusterIP}']);
      const t0 = Date.now();
      const out = await inPod('client', `timeout 10 wget -q -O - http://${ip}/ 2>&1; echo rc=$?`);
      const took = Date.now() - t0;
      assert.match(out, /Connection refused/);
      assert.match(out, /rc=1/);
      assert.ok(took < 3000, `refused in ${took} ms, not after the 10 s timeout`);
    });

    test('restarting kube-proxy during a request loop loses no request; /healthz and /metrics answer', async () => {
      const health = JSON.parse(cluster.node.httpGet('http://127.0.0.1:10256/healthz'));
      assert.equal(health.nodeEligible, true);
      assert.match(health.lastUpdated, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC$/);
      const metrics = cluster.node.httpGet('http://127.0.0.1:10249/metrics');
      if (mode === 'iptables') assert.match(metrics, /kubeproxy_sync_proxy_rules_iptables_total\{table="nat"\} \d+/);
      else assert.match(metrics, /kubeproxy_sync_proxy_rules_nftables_sync_failures_total 0/);
      assert.match(metrics, /kubeproxy_network_programming_duration_seconds_count [1-9]/);
      const loop = requests(150);
      await new Promise((r) => setTimeout(r, 500));
      await cluster.node.stopProxy();
      assert.ok(
        rules().includes(mode === 'iptables' ? svcChain('default/web', 'tcp') : servicePortBase('default/web', 'tcp')),
        'the rules stay while kube-proxy is down',
      );
      await new Promise((r) => setTimeout(r, 1000));
      cluster.node.startProxy(proxyArgs());
      const c = counts(await loop);
      assert.equal(c.FAIL, undefined, `no request lost across the restart: ${JSON.stringify(c)}`);
      assert.equal(
        Object.values(c).reduce((a, b) => a + b, 0),
        150,
      );
      await waitFor(
        () =>
          /services and endpoint slices synced/.test(cluster.node.proxyLog().split('starting kube-proxy').pop() ?? ''),
        30_000,
        200,
        'restarted proxy synced',
      );
      assert.equal(
        sh('sh', [
          '-c',
          `grep -c "failed to execute iptables-restore\\|nftables sync failed" ${path.join(cluster.node.dir, 'proxy.log')} || true`,
        ]).trim(),
        '0',
      );
    });

    test('UDP: when an endpoint goes away, conntrack entries that still point at it are deleted', async () => {
      for (const name of ['dns-a', 'dns-b'])
        cluster.apply({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, labels: { app: name === 'dns-a' ? 'dns' : 'dns-later' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image: APP_IMAGE, command: ['/bin/sleep', '3600'] }],
          },
        });
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'dns' },
        spec: { selector: { app: 'dns' }, ports: [{ port: 53, protocol: 'UDP' }] },
      });
      await waitFor(
        () =>
          /dns-a\s+1\/1\s+Running/.test(cluster.kubectl(['get', 'pods'])) &&
          /dns-b\s+1\/1\s+Running/.test(cluster.kubectl(['get', 'pods'])),
        60_000,
        500,
        'udp pods',
      );
      const svcIP = cluster.kubectl(['get', 'svc', 'dns', '-o', 'jsonpath={.spec.clusterIP}']);
      const aIP = cluster.kubectl(['get', 'pod', 'dns-a', '-o', 'jsonpath={.status.podIP}']);
      await waitFor(() => rules().includes(dnatTo(aIP, 53)), 20_000, 300, 'UDP rules');
      if (mode === 'nftables') {
        // A plain ClusterIP Service has no chain of its own: its dispatch element goes to a shared group chain, where
        // its rule matches its cluster IP and port and DNATs through its block of endpoint slots.
        const t = nftTable();
        const ipRe = svcIP.replace(/\./g, '\\.');
        const group = new RegExp(`${ipRe} \\. udp \\. 53 : goto (clusterip-group/\\d+)`).exec(t)?.[1];
        assert.ok(group, `dispatch to a group chain: ${t}`);
        assert.match(
          t,
          new RegExp(
            `chain ${group} \\{[^}]*ip daddr ${ipRe} udp dport 53 dnat ip to numgen random mod 4096 offset \\d+ map @endpoint-slots-udp-\\d+\n`,
          ),
        );
        assert.doesNotMatch(
          t,
          new RegExp(`chain service-${servicePortBase('default/dns', 'udp').replace(/[/.]/g, '\\$&')} `),
        );
      }
      // A UDP "flow" from the node, always from the same source port, as a resolver would keep one.
      const send = (): void =>
        void sh(
          process.execPath,
          [
            '-e',
            `const s=require('dgram').createSocket('udp4');s.bind(40053,()=>s.send('x',53,'${svcIP}',()=>s.close()))`,
          ],
          { netns: cluster.node.netns },
        );
      const entries = (): string => cluster.node.exec('conntrack', ['-L', '-p', 'udp', '--orig-dst', svcIP]);
      send();
      assert.match(
        entries(),
        new RegExp(`dst=${svcIP.replace(/\./g, '\\.')} sport=40053 dport=53 .*src=${aIP.replace(/\./g, '\\.')}`),
        'the flow is DNATed to dns-a',
      );
      // dns-a leaves the Service, dns-b joins: the old entry must go, or this flow would keep going to dns-a.
      cluster.kubectl(['label', 'pod', 'dns-a', 'app=gone', '--overwrite']);
      cluster.kubectl(['label', 'pod', 'dns-b', 'app=dns', '--overwrite']);
      await waitFor(() => !entries().includes(`src=${aIP} `), 20_000, 300, 'stale entry deleted');
      assert.match(cluster.node.proxyLog(), /deleted \d+ stale UDP conntrack entr/);
      const bIP = cluster.kubectl(['get', 'pod', 'dns-b', '-o', 'jsonpath={.status.podIP}']);
      await waitFor(() => rules().includes(dnatTo(bIP, 53)), 20_000, 300, 'dns-b in the rules');
      send();
      assert.match(entries(), new RegExp(`src=${bIP.replace(/\./g, '\\.')} `), 'the same flow now reaches dns-b');
    });

    test("externalTrafficPolicy Local LoadBalancer: a health check node port is allocated and answers 200 with this node's endpoints, 503 without", async () => {
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'lb-local' },
        spec: {
          type: 'LoadBalancer',
          externalTrafficPolicy: 'Local',
          selector: { app: 'web' },
          ports: [{ port: 80, targetPort: 'http' }],
        },
      });
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'lb-empty' },
        spec: {
          type: 'LoadBalancer',
          externalTrafficPolicy: 'Local',
          selector: { app: 'nothing' },
          ports: [{ port: 80, targetPort: 8080 }],
        },
      });
      const hc = (svc: string): number =>
        Number(cluster.kubectl(['get', 'svc', svc, '-o', 'jsonpath={.spec.healthCheckNodePort}']));
      assert.ok(hc('lb-local') >= 30000 && hc('lb-local') <= 32767 && hc('lb-local') !== hc('lb-empty'));
      const get = (port: number): string =>
        sh(
          process.execPath,
          [
            '-e',
            `fetch('http://${cluster.node.nodeIP}:${port}/').then(async (r) => console.log(r.status, JSON.stringify(JSON.parse(await r.text()))))`,
          ],
          { netns: cluster.node.netns, allowFail: true },
        );
      await waitFor(() => /^200 /.test(get(hc('lb-local'))), 20_000, 300, 'health check port serving');
      assert.equal(
        get(hc('lb-local')).trim(),
        '200 {"service":{"namespace":"default","name":"lb-local"},"localEndpoints":3,"serviceProxyHealthy":true}',
      );
      await waitFor(
        () => /^503 /.test(get(hc('lb-empty'))),
        20_000,
        300,
        'health check port of the Service without endpoints',
      );
      assert.equal(
        get(hc('lb-empty')).trim(),
        '503 {"service":{"namespace":"default","name":"lb-empty"},"localEndpoints":0,"serviceProxyHealthy":true}',
      );
      // Dual stack: the port listens in both families.
      const get6 = sh(
        process.execPath,
        ['-e', `fetch('http://[::1]:${hc('lb-local')}/').then((r) => console.log(r.status))`],
        { netns: cluster.node.netns, allowFail: true },
      );
      assert.equal(get6.trim(), '200');
    });

    test('ClientIP session affinity: every request from one client reaches the same pod', async () => {
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'sticky' },
        spec: { selector: { app: 'web' }, sessionAffinity: 'ClientIP', ports: [{ port: 80, targetPort: 'http' }] },
      });
      const ip = cluster.kubectl(['get', 'svc', 'sticky', '-o', 'jsonpath={.spec.clusterIP}']);
      await waitFor(
        async () => !(await requests(1, `http://${ip}/`)).includes('FAIL'),
        20_000,
        300,
        'sticky service programmed',
      );
      const c = counts(await requests(40, `http://${ip}/`));
      assert.equal(Object.keys(c).length, 1, `one pod answers all: ${JSON.stringify(c)}`);
      assert.match(Object.keys(c)[0]!, /^web-[012]$/);
    });

    test("internalTrafficPolicy Local: only this node's endpoints get traffic; with none here, traffic is dropped, not sent away", async () => {
      // A selector-less Service with a hand-made slice: web-0 on this node, web-1's IP claimed by another node.
      const podIP = (p: string): string => cluster.kubectl(['get', 'pod', p, '-o', 'jsonpath={.status.podIP}']);
      const local = (name: string, eps: [string, string][]): void => {
        cluster.apply({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name },
          spec: { internalTrafficPolicy: 'Local', ports: [{ port: 80, targetPort: 8080 }] },
        });
        cluster.apply({
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: { name: `${name}-1`, labels: { 'kubernetes.io/service-name': name } },
          addressType: 'IPv4',
          ports: [{ name: '', port: 8080, protocol: 'TCP' }],
          endpoints: eps.map(([ip, nodeName]) => ({ addresses: [ip], nodeName, conditions: { ready: true } })),
        });
      };
      local('local-one', [
        [podIP('web-0'), 'node-a'],
        [podIP('web-1'), 'node-b'],
      ]);
      local('local-none', [[podIP('web-2'), 'node-b']]);
      const one = cluster.kubectl(['get', 'svc', 'local-one', '-o', 'jsonpath={.spec.clusterIP}']);
      const none = cluster.kubectl(['get', 'svc', 'local-none', '-o', 'jsonpath={.spec.clusterIP}']);
      await waitFor(
        async () => !(await requests(1, `http://${one}/`)).includes('FAIL'),
        20_000,
        300,
        'local service programmed',
      );
      assert.deepEqual(counts(await requests(20, `http://${one}/`)), { 'web-0': 20 });
      const t0 = Date.now();
      const out = await inPod('client', `timeout 3 wget -q -O - http://${none}/ 2>&1; echo rc=$?`);
      assert.doesNotMatch(out, /web-2/);
      assert.doesNotMatch(out, /Connection refused/, 'dropped (no local endpoint), not rejected (no endpoint at all)');
      assert.ok(Date.now() - t0 >= 2500, 'the request hangs until the timeout');
    });

    test('dual stack: a RequireDualStack Service answers on its IPv6 cluster IP and NodePort, balanced over its IPv6 endpoints, and on its IPv4 one', async () => {
      // The pod network hands out IPv4 only: these pods give themselves IPv6 addresses (NET_ADMIN) on the node's bridge,
      // which gets the router address, and the Service's slices are written by hand (no selector).
      const bridge = cluster.node
        .exec('ip', ['-o', '-4', 'addr', 'show'])
        .split('\n')
        .find((l) => l.includes(` ${bridgeIP}/`))!
        .split(/\s+/)[1]!;
      cluster.node.exec('ip', ['-6', 'addr', 'replace', 'fd00:10:244::1/64', 'dev', bridge, 'nodad']);
      cluster.node.exec('sysctl', ['-qw', 'net.ipv6.conf.all.forwarding=1']);
      const v6pod = (name: string, addr: string, main: string) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'c',
              image: APP_IMAGE,
              securityContext: { capabilities: { add: ['NET_ADMIN'] } },
              command: [
                '/bin/sh',
                '-c',
                `ip -6 addr add ${addr}/64 dev eth0 && ip -6 route add default via fd00:10:244::1 && ${main}`,
              ],
            },
          ],
        },
      });
      for (const i of [1, 2])
        cluster.apply(
          v6pod(`six-${i}`, `fd00:10:244::1${i}`, `echo six-${i} > /www/index.html; exec httpd -f -p 8080 -h /www`),
        );
      cluster.apply(v6pod('client6', 'fd00:10:244::20', 'exec sleep 3600'));
      await waitFor(
        () =>
          ['six-1', 'six-2', 'client6'].every((p) =>
            /Running/.test(cluster.kubectl(['get', 'pod', p, '--no-headers'])),
          ),
        60_000,
        500,
        'IPv6 pods running',
      );
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'six' },
        spec: { type: 'NodePort', ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 80, targetPort: 8080 }] },
      });
      const svc = JSON.parse(cluster.kubectl(['get', 'svc', 'six', '-o', 'json']));
      assert.deepEqual(svc.spec.ipFamilies, ['IPv4', 'IPv6']);
      const [ip4, ip6] = svc.spec.clusterIPs as [string, string];
      assert.match(ip6, /^fd00:10:96::/);
      const sixNodePort = svc.spec.ports[0].nodePort as number;
      const podIP = (p: string): string => cluster.kubectl(['get', 'pod', p, '-o', 'jsonpath={.status.podIP}']);
      const endpointSlice = (family: 'IPv4' | 'IPv6', addrs: string[]) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: `six-${family.toLowerCase()}`,
          labels: { 'kubernetes.io/service-name': 'six', 'endpointslice.kubernetes.io/managed-by': 'e2e.tskube.dev' },
        },
        addressType: family,
        ports: [{ name: '', port: 8080, protocol: 'TCP' }],
        endpoints: addrs.map((a) => ({ addresses: [a], conditions: { ready: true }, nodeName: cluster.node.name })),
      });
      cluster.apply(endpointSlice('IPv6', ['fd00:10:244::11', 'fd00:10:244::12']));
      cluster.apply(endpointSlice('IPv4', [podIP('six-1'), podIP('six-2')]));
      const v6rules = (): string =>
        mode === 'iptables'
          ? cluster.node.exec('ip6tables-save', ['-t', 'nat'])
          : sh('nft', ['list', 'table', 'ip6', 'kube-proxy'], { netns: cluster.node.netns, allowFail: true });
      // Both endpoints start with this (fd00:10:244::11 and ::12).
      const dnat6 = mode === 'iptables' ? '--to-destination [fd00:10:244::1' : ': fd00:10:244::1';
      await waitFor(
        () => v6rules().split(dnat6).length - 1 === 2 && rules().includes(ip4),
        30_000,
        200,
        'IPv6 rules for both endpoints, and the IPv4 cluster IP',
      );
      assert.ok(v6rules().includes(ip6), 'the IPv6 cluster IP is in the IPv6 rules');
      assert.ok(!rules().includes(ip6) && rules().includes(ip4), 'the IPv4 rules have only the IPv4 cluster IP');
      // From a pod: the IPv6 cluster IP spreads over both endpoints (DAD may hold the new addresses for a second: retried).
      const fetch6 = (url: string, n: number): Promise<string[]> =>
        inPod(
          'client6',
          `for i in $(seq ${n}); do timeout 2 wget -q -O - '${url}' 2>/dev/null || echo FAIL; done`,
        ).then((o) => o.trim().split('\n'));
      await waitFor(
        async () => !(await fetch6(`http://[${ip6}]/`, 1)).includes('FAIL'),
        30_000,
        500,
        'IPv6 cluster IP answers',
      );
      const answers = counts(await fetch6(`http://[${ip6}]/`, 30));
      assert.equal(answers.FAIL, undefined, JSON.stringify(answers));
      assert.ok(
        answers['six-1']! > 0 && answers['six-2']! > 0,
        `both IPv6 endpoints answer: ${JSON.stringify(answers)}`,
      );
      // The NodePort on a local IPv6 address: iptables mode takes every local address; nftables mode only the node's
      // primary IPs (upstream's default --nodeport-addresses=primary), and this Node has no IPv6 InternalIP.
      const nodePort6 = (await fetch6(`http://[fd00:10:244::1]:${sixNodePort}/`, 1))[0]!;
      if (mode === 'iptables') assert.match(nodePort6, /^six-[12]$/);
      else assert.equal(nodePort6, 'FAIL');
      // The IPv4 cluster IP of the same Service.
      assert.match((await requests(1, `http://${ip4}/`))[0]!, /^six-[12]$/);
      // An endpoint removed from the IPv6 slice stops getting traffic; the IPv4 side is untouched.
      cluster.apply(endpointSlice('IPv6', ['fd00:10:244::12']));
      await waitFor(() => v6rules().split(dnat6).length - 1 === 1, 30_000, 200, 'IPv6 rules for one endpoint');
      assert.deepEqual(Object.keys(counts(await fetch6(`http://[${ip6}]/`, 10))), ['six-2']);
      // An IPv6-primary node (upstream: --bind-address overrides the node's IP, and so the primary family): the IPv6 side
      // comes first, and "primary" nodePortAddresses (nftables mode) take the override as the node's IPv6 address.
      const runs = (): string[] => cluster.node.proxyLog().split('starting kube-proxy');
      const thisRun = (): string => runs().pop() ?? '';
      assert.match(thisRun(), /kube-proxy running in dual-stack mode \(primary ipFamily IPv4\)/);
      const runsBefore = runs().length;
      await cluster.node.stopProxy();
      cluster.node.startProxy([...proxyArgs(), '--bind-address=fd00:10:244::1']);
      await waitFor(
        () => runs().length > runsBefore && /services and endpoint slices synced/.test(thisRun()),
        30_000,
        200,
        'IPv6-primary proxy synced',
      );
      assert.match(thisRun(), /kube-proxy running in dual-stack mode \(primary ipFamily IPv6\)/);
      await waitFor(
        async () => (await fetch6(`http://[fd00:10:244::1]:${sixNodePort}/`, 1))[0] === 'six-2',
        30_000,
        500,
        'the NodePort on the IPv6 node IP',
      );
      assert.match((await requests(1, `http://${ip4}/`))[0]!, /^six-[12]$/, 'the IPv4 side still answers');
      await cluster.node.stopProxy();
      cluster.node.startProxy(proxyArgs());
      await waitFor(
        () => runs().length > runsBefore + 1 && /services and endpoint slices synced/.test(thisRun()),
        30_000,
        200,
        'proxy synced again',
      );
      for (const o of [
        'svc/six',
        'endpointslice/six-ipv4',
        'endpointslice/six-ipv6',
        'pod/six-1',
        'pod/six-2',
        'pod/client6',
      ])
        cluster.kubectl(['delete', o, '--wait=false']);
    });

    if (mode === 'nftables') {
      test('switching modes: iptables → nftables → iptables leaves no stale rules, traffic flows in each; --cleanup removes both', async () => {
        const switchTo = async (m: Mode): Promise<void> => {
          await cluster.node.stopProxy();
          const runs = cluster.node.proxyLog().split('starting kube-proxy').length;
          cluster.node.startProxy(proxyArgs(m));
          const thisRun = (): string => {
            const parts = cluster.node.proxyLog().split('starting kube-proxy');
            return parts.length > runs ? parts.at(-1)! : '';
          };
          await waitFor(() => /services and endpoint slices synced/.test(thisRun()), 30_000, 200, `${m} proxy synced`);
          // That line comes before the first sync: wait for its rules (bounded), as a loaded machine may take a while.
          await waitFor(
            () =>
              m === 'iptables'
                ? /KUBE-SVC-/.test(iptablesNat())
                : /chain service-/.test(
                    sh('nft', ['list', 'table', 'ip', 'kube-proxy'], { netns: cluster.node.netns, allowFail: true }),
                  ),
            30_000,
            100,
            `${m} rules`,
          );
          // The IPv6 side syncs after the IPv4 one.
          await waitFor(
            () =>
              m === 'iptables'
                ? /-A KUBE-SERVICES/.test(cluster.node.exec('ip6tables-save', ['-t', 'nat']))
                : /table ip6 kube-proxy/.test(cluster.node.exec('nft', ['list', 'tables'])),
            30_000,
            100,
            `${m} IPv6 rules`,
          );
          assert.doesNotMatch(thisRun(), /sync failed|failed to execute/);
        };
        const nftHas = (): boolean => {
          const tables = cluster.node.exec('nft', ['list', 'tables']);
          // Both families' tables come and go together.
          assert.equal(/table ip6 kube-proxy/.test(tables), /table ip kube-proxy/.test(tables), tables);
          return /table ip kube-proxy/.test(tables);
        };
        const ip6Stale = (): void => {
          assert.doesNotMatch(
            cluster.node.exec('ip6tables-save', ['-t', 'nat']),
            /KUBE-(SVC|SEP|SERVICES|NODEPORTS|POSTROUTING)/,
            'no ip6tables-mode chain or jump left',
          );
          assert.doesNotMatch(
            cluster.node.exec('ip6tables-save', ['-t', 'filter']),
            /KUBE-(SERVICES|EXTERNAL-SERVICES|FORWARD|NODEPORTS|PROXY-FIREWALL)/,
          );
        };
        await switchTo('iptables');
        assert.equal(nftHas(), false, 'the nftables table is gone');
        assert.match(iptablesNat(), /KUBE-SVC-/);
        assert.equal(counts(await requests(10)).FAIL, undefined);
        await switchTo('nftables');
        assert.equal(nftHas(), true);
        const nat = iptablesNat();
        assert.doesNotMatch(
          nat,
          /KUBE-(SVC|SEP|SERVICES|NODEPORTS|POSTROUTING)/,
          'no iptables-mode chain or jump left',
        );
        assert.doesNotMatch(
          cluster.node.exec('iptables-save', ['-t', 'filter']),
          /KUBE-(SERVICES|EXTERNAL-SERVICES|FORWARD|NODEPORTS|PROXY-FIREWALL)/,
        );
        ip6Stale();
        assert.equal(counts(await requests(10)).FAIL, undefined);
        await switchTo('iptables');
        assert.equal(nftHas(), false);
        await cluster.node.stopProxy();
        cluster.node.exec(
          process.execPath,
          ['--import', 'tsx', path.resolve('cli/tskube.ts'), 'proxy', '--cleanup=true'],
          30_000,
        );
        assert.equal(nftHas(), false);
        assert.doesNotMatch(iptablesNat(), /KUBE-(SVC|SEP|SERVICES|NODEPORTS|POSTROUTING)/);
        ip6Stale();
        cluster.node.startProxy(proxyArgs());
      });
    }
  });
}

proxySuite('iptables');
proxySuite('nftables');
