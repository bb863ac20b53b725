// e2e: clients nobody here wrote, against `tskube apiserver` in its
// own namespace: the official Python client (Debian python3-kubernetes)
// watching with watch=True and dry-running writes, and kubectl's server-side
// dry run, diff and get -o yaml | apply round trip.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { waitFor } from '../testing/wait.js';
import { ApiServerNode } from './apiserver-node.js';
import { pythonClientSkip } from './cluster.js';
import { e2eSkipReason, REPO } from './harness.js';
import { sh } from './proc.js';

describe(
  'real clients against tskube apiserver',
  { skip: pythonClientSkip(e2eSkipReason()), timeout: 5 * 60_000 },
  () => {
    const as = new ApiServerNode();
    before(() => as.start(['--authorization-mode=Node,RBAC']));
    after(() => as.cleanup());

    test('Python client: a watch=True watch from a resource_version sees a new object; a quiet watch ends on its timeout; dry_run="All" stores and deletes nothing; paged lists read one snapshot', () => {
      const out = sh('/usr/bin/python3', [path.join(REPO, 'e2e/clients/watch_dryrun.py'), as.kubeconfig], {
        netns: as.netns,
        timeoutMs: 60_000,
      });
      assert.match(out, /^watch: .*ADDED:py-watched$/m);
      assert.match(out, /^quiet: 0 events in [2-4] s$/m);
      assert.match(out, /^dry-create: py-dry answered, read is 404$/m);
      assert.match(out, /^dry-delete: still there: py-watched$/m);
      // Pages after the first read the first page's snapshot: pg-3, deleted in between, is there; pg-9, made since, is not.
      assert.match(
        out,
        /^paged: pg-0 pg-1 pg-2 pg-3 pg-4 at 1 resourceVersion\(s\); remaining counts: \[None, None, None\]$/m,
      );
    });

    test('kubectl taint removes a taint; apply switches a Deployment to Recreate and puts a new init container first; rollout history shows the change-cause', async () => {
      as.kubectl(
        ['create', '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'taint-me' } }),
      );
      as.kubectl(['taint', 'node', 'taint-me', 'k=v:NoSchedule', 'k=v:NoExecute']);
      assert.match(as.kubectl(['taint', 'node', 'taint-me', 'k=v:NoSchedule-']), /untainted/);
      // (The node lifecycle controller adds its own not-ready taints to this kubelet-less Node.)
      assert.equal(
        as.kubectl(['get', 'node', 'taint-me', '-o', 'jsonpath={.spec.taints[?(@.key=="k")].effect}']),
        'NoExecute',
      );
      const deploy = (strategy: object, init: string[]) =>
        JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'smp', namespace: 'default' },
          spec: {
            replicas: 0,
            strategy,
            selector: { matchLabels: { app: 'smp' } },
            template: {
              metadata: { labels: { app: 'smp' } },
              spec: {
                initContainers: init.map((name) => ({ name, image: 'busybox' })),
                containers: [{ name: 'c', image: 'busybox' }],
              },
            },
          },
        });
      as.kubectl(['apply', '-f', '-'], deploy({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, ['old']));
      as.kubectl(['apply', '-f', '-'], deploy({ type: 'Recreate' }, ['new', 'old']));
      assert.equal(as.kubectl(['get', 'deploy', 'smp', '-o', 'jsonpath={.spec.strategy}']), '{"type":"Recreate"}');
      assert.equal(
        as.kubectl(['get', 'deploy', 'smp', '-o', 'jsonpath={.spec.template.spec.initContainers[*].name}']),
        'new old',
      );
      assert.match(as.kubectl(['apply', '-f', '-'], deploy({ type: 'Recreate' }, ['new', 'old'])), /unchanged/);
      as.kubectl(['annotate', 'deploy', 'smp', 'kubernetes.io/change-cause=init container first']);
      await waitFor(
        () => /^2\s+init container first$/m.test(as.kubectl(['rollout', 'history', 'deploy/smp'])),
        20_000,
        500,
        'the change-cause on the newest revision',
      );
    });

    test('kubectl --dry-run=server create, apply and delete change nothing; diff leaves the object as it was', () => {
      const cm = (v: string) =>
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'kd', namespace: 'default' },
          data: { v },
        });
      assert.match(
        as.kubectl(['create', '--dry-run=server', '-f', '-'], cm('1')),
        /configmap\/kd created \(server dry run\)/,
      );
      assert.match(
        sh('kubectl', [`--kubeconfig=${as.kubeconfig}`, 'get', 'cm', 'kd'], { netns: as.netns, allowFail: true }),
        /^$/,
      );
      as.kubectl(['apply', '-f', '-'], cm('1'));
      const rv = as.kubectl(['get', 'cm', 'kd', '-o', 'jsonpath={.metadata.resourceVersion}']);
      assert.match(
        as.kubectl(['apply', '--dry-run=server', '-f', '-'], cm('2')),
        /configmap\/kd configured \(server dry run\)/,
      );
      const diff = sh('sh', ['-c', `kubectl --kubeconfig=${as.kubeconfig} diff -f - ; echo "exit=$?"`], {
        netns: as.netns,
        input: cm('3'),
      });
      assert.match(diff, /^-\s+v: "1"$/m);
      assert.match(diff, /^\+\s+v: "3"$/m);
      assert.match(diff, /exit=1/);
      assert.match(as.kubectl(['delete', 'cm', 'kd', '--dry-run=server']), /configmap "kd" deleted \(server dry run\)/);
      assert.equal(as.kubectl(['get', 'cm', 'kd', '-o', 'jsonpath={.data.v}/{.metadata.resourceVersion}']), `1/${rv}`);
    });

    test('kubectl get -o yaml | kubectl apply round trip works, and a second identical apply is unchanged', () => {
      as.kubectl(['create', 'configmap', 'rt', '--from-literal=a=1']);
      const yaml = as.kubectl(['get', 'cm', 'rt', '-o', 'yaml']);
      assert.match(as.kubectl(['apply', '-f', '-'], yaml), /configmap\/rt (configured|unchanged)/);
      const doc = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'rt2', namespace: 'default' },
        data: { a: '1' },
      });
      assert.match(as.kubectl(['apply', '-f', '-'], doc), /configmap\/rt2 created/);
      assert.match(as.kubectl(['apply', '-f', '-'], doc), /configmap\/rt2 unchanged/);
    });

    test('kubectl create role|clusterrole|rolebinding|clusterrolebinding (protobuf bodies), auth can-i, auth can-i --list and auth whoami', () => {
      assert.match(
        as.kubectl(['create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods']),
        /role\.rbac\.authorization\.k8s\.io\/pod-reader created/,
      );
      assert.match(
        as.kubectl(['create', 'rolebinding', 'alice-reads', '--role=pod-reader', '--user=alice']),
        /rolebinding\.rbac\.authorization\.k8s\.io\/alice-reads created/,
      );
      assert.match(
        as.kubectl(['create', 'clusterrole', 'node-reader', '--verb=get', '--resource=nodes']),
        /clusterrole\.rbac\.authorization\.k8s\.io\/node-reader created/,
      );
      assert.match(
        as.kubectl(['create', 'clusterrolebinding', 'alice-nodes', '--clusterrole=node-reader', '--user=alice']),
        /clusterrolebinding\.rbac\.authorization\.k8s\.io\/alice-nodes created/,
      );
      assert.equal(
        as.kubectl([
          'get',
          'rolebinding',
          'alice-reads',
          '-o',
          'jsonpath={.roleRef.kind}/{.roleRef.name}/{.subjects[0].name}',
        ]),
        'Role/pod-reader/alice',
      );
      assert.equal(as.kubectl(['auth', 'can-i', 'list', 'pods', '--as=alice']).trim(), 'yes');
      const list = as.kubectl(['auth', 'can-i', '--list', '--as=alice']);
      assert.match(list, /^pods\s+\[\]\s+\[\]\s+\[get list\]$/m);
      assert.match(list, /^nodes\s+\[\]\s+\[\]\s+\[get\]$/m);
      const who = as.kubectl(['auth', 'whoami']);
      assert.match(who, /Username\s+kubernetes-admin/);
      assert.match(who, /Groups\s+\[system:masters system:authenticated\]/);
      assert.match(
        as.kubectl(['auth', 'whoami', '--as=alice', '--as-group=devs']),
        /Username\s+alice\n\s*Groups\s+\[devs system:authenticated\]/,
      );
      // More kinds kubectl sends in protobuf, decoded by the generic decoder.
      assert.match(
        as.kubectl([
          'create',
          'secret',
          'docker-registry',
          'reg',
          '--docker-server=r.example',
          '--docker-username=u',
          '--docker-password=p',
        ]),
        /secret\/reg created/,
      );
      assert.equal(as.kubectl(['get', 'secret', 'reg', '-o', 'jsonpath={.type}']), 'kubernetes.io/dockerconfigjson');
      assert.match(
        Buffer.from(
          as.kubectl(['get', 'secret', 'reg', '-o', 'jsonpath={.data.\\.dockerconfigjson}']),
          'base64',
        ).toString(),
        /"r.example":\{"username":"u","password":"p"/,
      );
      assert.match(
        as.kubectl(['create', 'service', 'externalname', 'ext', '--external-name=db.example.com']),
        /service\/ext created/,
      );
      assert.equal(
        as.kubectl(['get', 'svc', 'ext', '-o', 'jsonpath={.spec.type}/{.spec.externalName}']),
        'ExternalName/db.example.com',
      );
    });

    test('kubectl explain reads the published schemas; --validate=strict refuses unknown fields, warn drops them; apply -f of a kind: List validates against /openapi/v2', () => {
      const explain = as.kubectl(['explain', 'pod.spec.containers']);
      assert.match(explain, /^FIELD: containers <\[\]Container>$/m);
      assert.match(explain, /^\s+name\t<string> -required-$/m);
      assert.match(as.kubectl(['explain', 'deployments.spec.strategy.rollingUpdate']), /maxSurge\t<IntOrString>/);
      const deploy = (extra: string) =>
        `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"typo","namespace":"default"},"spec":{${extra}"selector":{"matchLabels":{"app":"t"}},"template":{"metadata":{"labels":{"app":"t"}},"spec":{"containers":[{"name":"c","image":"x","nodeport":1}]}}}}`;
      const strict = sh(
        'sh',
        ['-c', `kubectl --kubeconfig=${as.kubeconfig} apply --validate=strict -f - 2>&1; echo "exit=$?"`],
        { netns: as.netns, input: deploy('"replicas":1,"foo":"bar",') },
      );
      assert.match(
        strict,
        /Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.foo", unknown field "spec.template.spec.containers\[0\].nodeport"/,
      );
      assert.match(strict, /exit=1/);
      const warn = sh('sh', ['-c', `kubectl --kubeconfig=${as.kubeconfig} apply --validate=warn -f - 2>&1`], {
        netns: as.netns,
        input: deploy('"foo":"bar",'),
      });
      assert.match(warn, /^Warning: unknown field "spec.foo"$/m);
      assert.match(warn, /deployment.apps\/typo created/);
      const stored = JSON.parse(as.kubectl(['get', 'deploy', 'typo', '-o', 'json'])) as {
        spec: Record<string, unknown> & { template: { spec: { containers: Record<string, unknown>[] } } };
      };
      assert.equal(stored.spec.foo, undefined);
      assert.equal(stored.spec.template.spec.containers[0]!.nodeport, undefined);
      assert.equal(stored.spec.template.spec.containers[0]!.image, 'x');
      const list = JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'l1', namespace: 'default' }, data: { a: '1' } },
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'l2', namespace: 'default' },
            spec: { ports: [{ port: 80 }], selector: { app: 'l' } },
          },
        ],
      });
      assert.match(as.kubectl(['apply', '-f', '-'], list), /configmap\/l1 created\nservice\/l2 created/);
      assert.match(as.kubectl(['apply', '-f', '-'], list), /configmap\/l1 unchanged\nservice\/l2 unchanged/);
      const badList = sh('sh', ['-c', `kubectl --kubeconfig=${as.kubeconfig} apply -f - 2>&1; echo "exit=$?"`], {
        netns: as.netns,
        input: list.replace('"data"', '"bogus":1,"data"'),
      });
      assert.match(badList, /ValidationError\(ConfigMap\): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap/);
    });

    test('server-side apply: kubectl apply --server-side, a conflict and --force-conflicts, migration from client-side apply; Python DynamicClient apply', () => {
      const doc = (replicas: number, image = 'busybox') =>
        JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'ssa', namespace: 'default' },
          spec: {
            replicas,
            selector: { matchLabels: { app: 'ssa' } },
            template: {
              metadata: { labels: { app: 'ssa' } },
              spec: { containers: [{ name: 'c', image, ports: [{ containerPort: 80 }] }] },
            },
          },
        });
      assert.match(
        as.kubectl(['apply', '--server-side', '-f', '-'], doc(1)),
        /deployment.apps\/ssa serverside-applied/,
      );
      const same = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ssa-same', namespace: 'default' },
        data: { a: '1' },
      });
      as.kubectl(['apply', '--server-side', '-f', '-'], same);
      const rv = as.kubectl(['get', 'cm', 'ssa-same', '-o', 'jsonpath={.metadata.resourceVersion}']);
      as.kubectl(['apply', '--server-side', '-f', '-'], same);
      assert.equal(
        as.kubectl(['get', 'cm', 'ssa-same', '-o', 'jsonpath={.metadata.resourceVersion}']),
        rv,
        'a repeated apply writes nothing',
      );
      const conflict = sh(
        'sh',
        [
          '-c',
          `kubectl --kubeconfig=${as.kubeconfig} apply --server-side --field-manager=ci -f - 2>&1; echo "exit=$?"`,
        ],
        { netns: as.netns, input: doc(3) },
      );
      assert.match(conflict, /Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas/);
      assert.match(conflict, /exit=1/);
      assert.match(
        as.kubectl(['apply', '--server-side', '--field-manager=ci', '--force-conflicts', '-f', '-'], doc(3)),
        /serverside-applied/,
      );
      const managers = JSON.parse(as.kubectl(['get', 'deploy', 'ssa', '-o', 'json', '--show-managed-fields'])) as {
        spec: { replicas: number; template: { spec: { containers: { ports: unknown[] }[] } } };
        metadata: {
          managedFields: { manager: string; operation: string; fieldsV1: Record<string, Record<string, unknown>> }[];
        };
      };
      assert.equal(managers.spec.replicas, 3);
      assert.deepEqual(managers.spec.template.spec.containers[0]!.ports, [{ containerPort: 80, protocol: 'TCP' }]);
      const owner = (m: string) =>
        managers.metadata.managedFields.find((e) => e.manager === m && e.operation === 'Apply')!.fieldsV1['f:spec']!;
      assert.ok('f:replicas' in owner('ci'));
      assert.ok(!('f:replicas' in owner('kubectl')));
      // Client-side apply first, then server-side with the same values: kubectl moves the fields to its apply manager.
      const cm = (v: string) =>
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'csa', namespace: 'default' },
          data: { v },
        });
      as.kubectl(['apply', '-f', '-'], cm('1'));
      assert.match(as.kubectl(['apply', '--server-side', '-f', '-'], cm('1')), /serverside-applied/);
      const mf = JSON.parse(as.kubectl(['get', 'cm', 'csa', '-o', 'jsonpath={.metadata.managedFields}'])) as {
        manager: string;
        operation: string;
      }[];
      assert.deepEqual(
        mf
          .filter((e) => e.manager.startsWith('kubectl'))
          .map((e) => `${e.manager}/${e.operation}`)
          .sort(),
        ['kubectl-last-applied/Apply', 'kubectl/Apply'],
      );
      assert.match(as.kubectl(['apply', '--server-side', '-f', '-'], cm('2')), /serverside-applied/);
      assert.equal(as.kubectl(['get', 'cm', 'csa', '-o', 'jsonpath={.data.v}']), '2');
      const out = sh('/usr/bin/python3', [path.join(REPO, 'e2e/clients/apply_dynamic.py'), as.kubeconfig], {
        netns: as.netns,
        timeoutMs: 60_000,
      });
      assert.match(out, /^created: 1 \['py-one\/Apply'\]$/m);
      assert.match(out, /^dry-run answered: nginx stored: busybox$/m);
      assert.match(out, /^conflict: 409 Apply failed with 1 conflict: conflict with "py-one": .spec.replicas$/m);
      assert.match(out, /^forced: 2$/m);
      assert.match(out, /^yaml body: E1 12:30:00$/m);
    });

    test('@kubernetes/client-node: Watch starts on a quiet collection, makeInformer start and restart, KubernetesObjectApi server-side apply', () => {
      const out = sh(
        process.execPath,
        ['--import', 'tsx', path.join(REPO, 'e2e/clients/client_node.ts'), as.kubeconfig, 'api'],
        { netns: as.netns, timeoutMs: 60_000 },
      );
      assert.match(out, /^watch started$/m);
      assert.match(out, /^watch: ADDED:js-watched$/m);
      assert.match(out, /^informer has js-watched: true$/m);
      assert.match(out, /^informer after restart has js-later: true$/m);
      assert.match(out, /^applied: 1 js-one\/Apply$/m);
      assert.match(out, /^conflict: 409$/m);
      assert.match(out, /^forced: 2$/m);
    });

    test('events.k8s.io/v1: an Event created there is a core Event; kubectl get, events and the Python client read both', () => {
      const ev = JSON.stringify({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'ev1', namespace: 'default' },
        eventTime: '2026-12-03T07:00:00.000000Z',
        reportingController: 'example.com/ctl',
        reportingInstance: 'ctl-1',
        action: 'Reconcile',
        reason: 'Synced',
        type: 'Normal',
        note: 'all good',
        regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
      });
      assert.match(as.kubectl(['create', '-f', '-'], ev), /event.events.k8s.io\/ev1 created/);
      assert.equal(
        as.kubectl(['get', 'events.v1.events.k8s.io', 'ev1', '-o', 'jsonpath={.note}/{.regarding.name}']),
        'all good/web',
      );
      assert.equal(
        as.kubectl([
          'get',
          'events.v1.',
          'ev1',
          '-o',
          'jsonpath={.message}/{.involvedObject.name}/{.reportingComponent}',
        ]),
        'all good/web/example.com/ctl',
      );
      assert.match(as.kubectl(['events']), /Normal\s+Synced\s+Pod\/web\s+all good/);
      const py = sh(
        '/usr/bin/python3',
        [
          '-c',
          `import sys\nfrom kubernetes import client, config\nconfig.load_kube_config(sys.argv[1])\nfor e in client.EventsV1Api().list_namespaced_event("default", field_selector="regarding.name=web").items: print("v1:", e.metadata.name, e.note, e.regarding.kind)`,
          as.kubeconfig,
        ],
        { netns: as.netns, timeoutMs: 60_000 },
      );
      assert.match(py, /^v1: ev1 all good Pod$/m);
    });

    test('bootstrap tokens and CSRs: tskube token create, a token that authenticates, kubectl certificate approve and get csr', () => {
      const token = sh(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(REPO, 'cli/tskube.ts'),
          'token',
          'create',
          '--kubeconfig',
          as.kubeconfig,
          '--ttl',
          '1h',
        ],
        { netns: as.netns },
      ).trim();
      assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
      // Only the token: no kubeconfig, so no client certificate.
      const server = as.kubectl(['config', 'view', '-o', 'jsonpath={.clusters[0].cluster.server}']);
      const who = sh(
        'kubectl',
        [
          '--kubeconfig=/dev/null',
          `--server=${server}`,
          '--insecure-skip-tls-verify',
          `--token=${token}`,
          'auth',
          'whoami',
          '-o',
          'jsonpath={.status.userInfo.username}',
        ],
        { netns: as.netns },
      );
      assert.equal(who, `system:bootstrap:${token.split('.')[0]}`);
      const req = sh('openssl', [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        '/dev/null',
        '-subj',
        '/O=system:nodes/CN=system:node:e2e',
        '-addext',
        'subjectAltName=DNS:e2e',
      ]);
      const csr = JSON.stringify({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name: 'e2e-serving' },
        spec: {
          request: Buffer.from(req).toString('base64'),
          signerName: 'kubernetes.io/kubelet-serving',
          usages: ['digital signature', 'server auth'],
        },
      });
      as.kubectl(['create', '-f', '-'], csr);
      assert.match(
        as.kubectl(['get', 'csr', 'e2e-serving']),
        /e2e-serving\s+\S+\s+kubernetes.io\/kubelet-serving\s+kubernetes-admin\s+<none>\s+Pending/,
      );
      assert.match(
        as.kubectl(['certificate', 'approve', 'e2e-serving']),
        /certificatesigningrequest.certificates.k8s.io\/e2e-serving approved/,
      );
      let cert = '';
      for (let i = 0; i < 50 && !cert; i++) {
        cert = as.kubectl(['get', 'csr', 'e2e-serving', '-o', 'jsonpath={.status.certificate}']);
        if (!cert) sh('sleep', ['0.1']);
      }
      assert.match(
        sh('openssl', ['x509', '-noout', '-subject'], { input: Buffer.from(cert, 'base64').toString() }),
        /CN = system:node:e2e/,
      );
      assert.match(as.kubectl(['get', 'csr', 'e2e-serving']), /Approved,Issued/);
    });
  },
);
