// e2e: CustomResourceDefinitions with the real kubectl and the
// official Python client against `tskube apiserver`: a definition becomes
// Established and served; its objects are defaulted, pruned and validated as
// upstream; printer columns, categories, short names, explain, scale and
// status, field selectors, server-side apply, a second version, watches; the
// garbage collector and namespace deletion reach custom resources; deleting
// the definition deletes its objects.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ApiServerNode } from './apiserver-node.js';
import { pythonClientSkip } from './cluster.js';
import { CRD, tab } from './crd-fixture.js';
import { e2eSkipReason, REPO } from './harness.js';
import { sh, waitFor } from './proc.js';

describe(
  'CustomResourceDefinitions with real clients',
  { skip: pythonClientSkip(e2eSkipReason()), timeout: 5 * 60_000 },
  () => {
    const as = new ApiServerNode();
    before(() => as.start(['--authorization-mode=Node,RBAC']));
    after(() => as.cleanup());
    /** kubectl with stderr and the exit status in its output. */
    const try_ = (args: string, input?: string) =>
      sh('sh', ['-c', `kubectl --kubeconfig=${as.kubeconfig} ${args} 2>&1; echo "exit=$?"`], {
        netns: as.netns,
        input,
      });

    test('a definition is Established and served; objects are defaulted, pruned and validated; columns, categories, short names and explain work', () => {
      assert.match(
        as.kubectl(['apply', '-f', '-'], CRD),
        /customresourcedefinition.apiextensions.k8s.io\/crontabs.stable.example.com created/,
      );
      assert.match(
        as.kubectl(['wait', '--for=condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']),
        /condition met/,
      );
      assert.match(as.kubectl(['get', 'crd']), /NAME\s+CREATED AT\ncrontabs.stable.example.com\s+\d{4}-/);
      // kubectl validates strictly by default: the server refuses an unknown field; with --validate=false it is pruned.
      const strict = try_('apply -f -', tab('a', '{cronSpec: "* * * * */5", bogus: 1}'));
      assert.match(strict, /strict decoding error: unknown field "spec.bogus"/);
      assert.match(strict, /exit=1/);
      assert.match(
        as.kubectl(
          ['apply', '--validate=false', '-f', '-'],
          tab('a', '{cronSpec: "* * * * */5", bogus: 1, color: red}'),
        ),
        /crontab.stable.example.com\/a created/,
      );
      const a = JSON.parse(as.kubectl(['get', 'ct', 'a', '-o', 'json'])) as {
        spec: Record<string, unknown>;
        metadata: { generation: number };
      };
      assert.deepEqual(a.spec, { cronSpec: '* * * * */5', color: 'red', image: 'busybox', replicas: 1 });
      const bad = try_('apply -f -', tab('bad', '{cronSpec: "nope", replicas: 20, color: blue}'));
      assert.match(bad, /The CronTab "bad" is invalid: /);
      assert.match(bad, /spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10/);
      assert.match(bad, /spec.color: Unsupported value: "blue": supported values: "red", "green"/);
      assert.match(bad, /spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match/);
      assert.match(
        as.kubectl(['get', 'crontabs']).trim(),
        /^NAME\s+SPEC\s+REPLICAS\s+AGE\na\s+\* \* \* \* \*\/5\s+1\s+\d+s$/,
      );
      assert.match(as.kubectl(['get', 'examples']), /^a\s+\* \* \* \* \*\/5/m);
      assert.match(as.kubectl(['get', 'all']), /crontab.stable.example.com\/a/);
      assert.match(
        as.kubectl(['api-resources', '--api-group=stable.example.com']),
        /crontabs\s+ct\s+stable.example.com\/v1\s+true\s+CronTab/,
      );
      const explain = as.kubectl(['explain', 'crontab.spec.cronSpec']);
      assert.match(explain, /FIELD: cronSpec <string>/);
      assert.match(explain, /When the job runs\./);
      assert.match(as.kubectl(['explain', 'crontab.spec']), /replicas\t<integer>/);
    });

    test('scale and status subresources, field selectors, merge patches, server-side apply, the second version, Python DynamicClient watch', () => {
      assert.match(as.kubectl(['scale', 'ct/a', '--replicas=3']), /crontab.stable.example.com\/a scaled/);
      assert.equal(as.kubectl(['get', 'ct', 'a', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}']), '3 2');
      assert.match(
        as.kubectl([
          'patch',
          'ct',
          'a',
          '--subresource=status',
          '--type=merge',
          '-p',
          '{"status":{"replicas":3,"selector":"app=a"},"spec":{"replicas":9}}',
        ]),
        /patched/,
      );
      assert.equal(
        as.kubectl(['get', 'ct', 'a', '-o', 'jsonpath={.status.replicas} {.spec.replicas} {.metadata.generation}']),
        '3 3 2',
        'status changes only status, generation stays',
      );
      assert.equal(
        JSON.parse(as.kubectl(['get', '--raw', '/apis/stable.example.com/v1/namespaces/default/crontabs/a/scale']))
          .status.selector,
        'app=a',
      );
      assert.match(
        as.kubectl(['apply', '--server-side', '-f', '-'], tab('b', '{cronSpec: "0 * * * *", color: green}')),
        /crontab.stable.example.com\/b serverside-applied/,
      );
      const conflict = try_(
        'apply --server-side --field-manager=other -f -',
        tab('b', '{cronSpec: "1 * * * *", color: green}'),
      );
      assert.match(conflict, /Apply failed with 1 conflict: conflict with "kubectl": .spec.cronSpec/);
      assert.equal(
        as.kubectl(['get', 'ct', '--field-selector=spec.color=green', '-o', 'name']).trim(),
        'crontab.stable.example.com/b',
      );
      assert.match(try_('get ct --field-selector=spec.image=busybox'), /field label not supported: spec.image/);
      assert.equal(
        as.kubectl([
          'get',
          'crontabs.v1beta1.stable.example.com',
          'a',
          '-o',
          'jsonpath={.apiVersion} {.spec.cronSpec}',
        ]),
        'stable.example.com/v1beta1 * * * * */5',
      );
      const out = sh('/usr/bin/python3', [path.join(REPO, 'e2e/clients/crd_watch.py'), as.kubeconfig], {
        netns: as.netns,
        timeoutMs: 60_000,
      });
      assert.match(out, /^resource: crontabs True \['ct'\]$/m);
      assert.match(out, /^created: py-tab busybox 1$/m);
      assert.match(out, /^watch: .*MODIFIED:py-tab:7$/m);
      assert.match(out, /^green: \['b', 'py-tab'\]$/m);
    });

    test('the garbage collector deletes what a custom resource owns; a namespace and a definition take their custom resources with them', async () => {
      const uid = as.kubectl(['get', 'ct', 'a', '-o', 'jsonpath={.metadata.uid}']);
      as.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: 'owned',
            namespace: 'default',
            ownerReferences: [{ apiVersion: 'stable.example.com/v1', kind: 'CronTab', name: 'a', uid }],
          },
          data: { x: '1' },
        }),
      );
      as.kubectl(['delete', 'ct', 'a']);
      await waitFor(
        () => /NotFound/.test(try_('get cm owned')),
        20_000,
        300,
        'the ConfigMap its CronTab owned collected',
      );
      // A custom resource as the dependent, and a foreground deletion of a custom resource owner.
      const svcUid = as.kubectl([
        'create',
        'service',
        'clusterip',
        'owner',
        '--tcp=80',
        '-o',
        'jsonpath={.metadata.uid}',
      ]);
      as.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'stable.example.com/v1',
          kind: 'CronTab',
          metadata: {
            name: 'child',
            namespace: 'default',
            ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'owner', uid: svcUid }],
          },
          spec: { cronSpec: '* * * * *' },
        }),
      );
      const childUid = as.kubectl(['get', 'ct', 'child', '-o', 'jsonpath={.metadata.uid}']);
      as.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: 'grandchild',
            namespace: 'default',
            ownerReferences: [
              {
                apiVersion: 'stable.example.com/v1',
                kind: 'CronTab',
                name: 'child',
                uid: childUid,
                blockOwnerDeletion: true,
              },
            ],
          },
        }),
      );
      assert.match(as.kubectl(['delete', 'ct', 'child', '--cascade=foreground', '--timeout=30s']), /deleted/);
      assert.match(try_('get secret grandchild'), /NotFound/, 'the foreground deletion waited for its dependent');
      as.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'stable.example.com/v1',
          kind: 'CronTab',
          metadata: {
            name: 'child2',
            namespace: 'default',
            ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'owner', uid: svcUid }],
          },
          spec: { cronSpec: '* * * * *' },
        }),
      );
      as.kubectl(['delete', 'service', 'owner']);
      await waitFor(
        () => /NotFound/.test(try_('get ct child2')),
        45_000,
        500,
        'the CronTab its Service owned collected',
      );
      as.kubectl(['create', 'namespace', 'tabs']);
      as.kubectl(['apply', '-n', 'tabs', '-f', '-'], tab('c', '{cronSpec: "* * * * *"}'));
      as.kubectl(['delete', 'namespace', 'tabs', '--wait=false']);
      await waitFor(
        () => /NotFound/.test(try_('get namespace tabs')),
        60_000,
        500,
        'the namespace and its CronTab gone',
      );
      assert.match(as.kubectl(['delete', 'crd', 'crontabs.stable.example.com', '--timeout=30s']), /deleted/);
      // kubectl may still map "ct" from its discovery cache (as against any apiserver); the resource itself is gone.
      assert.match(
        try_('get ct'),
        /the server doesn't have a resource type "ct"|the server could not find the requested resource/,
      );
      assert.match(try_('get --raw /apis/stable.example.com/v1'), /NotFound|could not find/);
      assert.match(try_('get crd'), /No resources found/);
    });
  },
);
