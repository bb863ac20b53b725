// e2e: the real kubectl against `tskube apiserver`, with the generated admin kubeconfig.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ApiServerNode } from './apiserver-node.js';
import { e2eSkipReason } from './harness.js';
import { sh, stopPid, waitFor } from './proc.js';

function kubectlSkip(): string | undefined {
  const base = e2eSkipReason();
  if (base) return base;
  if (!sh('sh', ['-c', 'command -v kubectl'], { allowFail: true }).trim()) {
    const msg = 'e2e prerequisite missing: kubectl (scripts/install-deps.sh installs kubernetes-client)';
    if (process.env.TSKUBE_E2E_SKIP === '1') return msg;
    throw new Error(msg);
  }
  return undefined;
}

const skip = kubectlSkip();

const MANIFESTS = `apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: node-a
  terminationGracePeriodSeconds: 30
  containers: [{name: httpd, image: "127.0.0.1:5000/tskube/app:1"}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web-d}}
  template:
    metadata: {labels: {app: web-d}}
    spec: {containers: [{name: httpd, image: "127.0.0.1:5000/tskube/app:1"}]}
`;

describe('the real kubectl against tskube apiserver', { skip, timeout: 5 * 60_000 }, () => {
  let as: ApiServerNode;
  let file: string;

  before(async () => {
    as = new ApiServerNode();
    await as.start();
    file = path.join(as.dir, 'app.yaml');
    fs.writeFileSync(file, MANIFESTS);
  });
  after(async () => {
    await as?.cleanup();
  });

  test('apply -f creates a pod, a service and a deployment; re-apply is unchanged; an edit is configured', () => {
    assert.deepEqual(as.kubectl(['apply', '-f', file]).trim().split('\n'), [
      'pod/web created',
      'service/web created',
      'deployment.apps/web created',
    ]);
    assert.deepEqual(as.kubectl(['apply', '-f', file]).trim().split('\n'), [
      'pod/web unchanged',
      'service/web unchanged',
      'deployment.apps/web unchanged',
    ]);
    fs.writeFileSync(file, MANIFESTS.replace('replicas: 2', 'replicas: 3'));
    assert.match(as.kubectl(['apply', '-f', file]), /deployment\.apps\/web configured/);
    assert.equal(
      as.kubectl(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}']),
      '3 2',
    );
    const svc = as
      .kubectl(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP} {.spec.ports[0].nodePort}'])
      .split(' ');
    assert.match(svc[0]!, /^10\.(9[6-9]|1[01]\d)\.\d+\.\d+$/);
    assert.ok(Number(svc[1]) >= 30000 && Number(svc[1]) <= 32767);
  });

  test('get pods -o wide, field selectors, get deployments and services print upstream columns', async () => {
    const wide = as.kubectl(['get', 'pods', '-o', 'wide']).split('\n');
    assert.match(wide[0]!, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
    assert.match(wide[1]!, /^web\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+node-a\s+<none>\s+<none>$/);
    assert.match(as.kubectl(['get', 'pods', '--field-selector', 'spec.nodeName=node-a', '-o', 'name']), /^pod\/web$/m);
    assert.match(as.kubectl(['get', 'pods', '--field-selector', 'spec.nodeName=x']) + 'none', /none/);
    assert.equal(as.kubectl(['get', 'pods', '--field-selector', 'spec.nodeName=x', '-o', 'name']).trim(), '');
    // The deployment controller has made a ReplicaSet with 3 pods; no kubelet runs them.
    await waitFor(
      () => /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+0\/3\s+3\s+0\s+/.test(as.kubectl(['get', 'deploy'])),
      10_000,
      200,
      'deployment with 3 up-to-date replicas',
    );
    assert.match(
      as.kubectl(['get', 'svc', 'web']),
      /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\nweb\s+NodePort\s+10\.\S+\s+<none>\s+80:3\d{4}\/TCP\s+/,
    );
  });

  test('describe pod shows its events', () => {
    const uid = as.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.metadata.uid}']);
    const ev = (n: number, reason: string, msg: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `web.${n}`, namespace: 'default' },
        involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web', uid },
        reason,
        message: msg,
        type: 'Normal',
        source: { component: 'kubelet', host: 'node-a' },
        firstTimestamp: new Date(Date.now() - (10 - n) * 1000).toISOString().replace(/\.\d+Z/, 'Z'),
        lastTimestamp: new Date(Date.now() - (10 - n) * 1000).toISOString().replace(/\.\d+Z/, 'Z'),
        count: 1,
      });
    as.kubectl(
      ['create', '-f', '-'],
      ev(1, 'Pulled', 'Container image "127.0.0.1:5000/tskube/app:1" already present on machine'),
    );
    as.kubectl(['create', '-f', '-'], ev(2, 'Created', 'Created container: httpd'));
    const d = as.kubectl(['describe', 'pod', 'web']);
    assert.match(
      d,
      /Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n\s+----.*\n\s+Normal\s+Pulled\s+\S+\s+kubelet\s+Container image .* already present on machine\n\s+Normal\s+Created\s+\S+\s+kubelet\s+Created container: httpd/,
    );
    assert.match(as.kubectl(['get', 'events']), /Normal\s+Created\s+pod\/web\s+Created container: httpd/);
  });

  test('get pods -w sees later changes', async () => {
    const log = path.join(as.dir, 'watch.log');
    const w = as.spawnKubectl(['get', 'pods', '-w', '--output-watch-events'], log);
    try {
      await waitFor(
        () => fs.existsSync(log) && /web/.test(fs.readFileSync(log, 'utf8')),
        15_000,
        200,
        'initial watch output',
      );
      as.kubectl(
        ['create', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'later' },
          spec: { containers: [{ name: 'c', image: 'x:1' }] },
        }),
      );
      as.kubectl(['label', 'pod', 'later', 'seen=yes']);
      await waitFor(
        () => (fs.readFileSync(log, 'utf8').match(/later/g) ?? []).length >= 2,
        15_000,
        200,
        'watch shows ADDED and MODIFIED for later',
      );
      const out = fs.readFileSync(log, 'utf8');
      assert.match(out, /ADDED\s+later\s+0\/1\s+Pending/);
      assert.match(out, /MODIFIED\s+later\s+0\/1\s+Pending/);
    } finally {
      await stopPid(w.pid, 2000);
    }
  });

  test('delete pod is graceful: a bound pod stays Terminating until deleted with grace 0', () => {
    assert.match(as.kubectl(['delete', 'pod', 'web', '--wait=false']), /pod "web" deleted/);
    assert.match(as.kubectl(['get', 'pod', 'web']), /web\s+0\/1\s+Terminating/);
    assert.equal(as.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.metadata.deletionGracePeriodSeconds}']), '30');
    as.kubectl(['delete', 'pod', 'web', '--grace-period=0', '--force']);
    assert.throws(() => as.kubectl(['get', 'pod', 'web']), /pods "web" not found/);
    // A pod never bound to a node goes at once.
    assert.match(as.kubectl(['delete', 'pod', 'later']), /pod "later" deleted/);
    assert.throws(() => as.kubectl(['get', 'pod', 'later']), /not found/);
  });

  test('get nodes, get endpointslices, api-resources, create namespace', () => {
    as.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a' } },
        status: {
          conditions: [
            { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
          ],
          nodeInfo: { kubeletVersion: 'v1.32.0-tskube' },
        },
      }),
    );
    assert.match(
      as.kubectl(['get', 'nodes']),
      /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\nnode-a\s+Ready\s+<none>\s+\d+s\s+v1\.32\.0-tskube/,
    );
    as.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        ports: [{ name: '', port: 8080, protocol: 'TCP' }],
        endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true } }],
      }),
    );
    // The Service web also has the controller's slice (empty: its pod never ran), as upstream.
    const slices = as.kubectl(['get', 'endpointslices']);
    assert.match(slices, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\n/);
    assert.match(slices, /\nweb-abc\s+IPv4\s+8080\s+10\.244\.0\.5\s+/);
    assert.match(slices, /\nweb-[a-z0-9]{5}\s+IPv4\s+<unset>\s+<none>\s+/);
    const res = as.kubectl(['api-resources']);
    for (const line of [
      /^pods\s+po\s+v1\s+true\s+Pod$/m,
      /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m,
      /^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m,
      /^endpointslices\s+discovery\.k8s\.io\/v1\s+true\s+EndpointSlice$/m,
      /^nodes\s+no\s+v1\s+false\s+Node$/m,
    ])
      assert.match(res, line);
    assert.match(as.kubectl(['create', 'namespace', 'demo']), /namespace\/demo created/);
    assert.match(as.kubectl(['get', 'ns', 'demo']), /demo\s+Active/);
    assert.match(
      as.kubectl(['get', 'serviceaccount', 'default', '-n', 'demo', '-o', 'name']),
      /serviceaccount\/default/,
    );
  });
});
