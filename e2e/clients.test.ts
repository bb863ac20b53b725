// e2e (issue 13): clients nobody here wrote, against `tskube apiserver` in its
// own namespace: the official Python client (Debian python3-kubernetes)
// watching with watch=True and dry-running writes, and kubectl's server-side
// dry run, diff and get -o yaml | apply round trip.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { e2eSkipReason, REPO } from './harness.js';
import { ApiServerNode } from './apiserver-node.js';
import { sh } from './proc.js';
import { clusterSkip } from './cluster.js';

function pythonSkip(): string | undefined {
  const base = clusterSkip(e2eSkipReason());
  if (base) return base;
  if (sh('/usr/bin/python3', ['-c', 'import kubernetes; print(1)'], { allowFail: true, timeoutMs: 20_000 }).trim() !== '1') {
    const msg = 'e2e prerequisite missing: python3-kubernetes (scripts/install-deps.sh installs it)';
    if (process.env.TSKUBE_E2E_SKIP === '1') return msg;
    throw new Error(msg);
  }
  return undefined;
}

describe('real clients against tskube apiserver', { skip: pythonSkip(), timeout: 5 * 60_000 }, () => {
  const as = new ApiServerNode();
  before(() => as.start(['--authorization-mode=Node,RBAC']));
  after(() => as.cleanup());

  test('Python client: a watch=True watch from a resource_version sees a new object; a quiet watch ends on its timeout; dry_run="All" stores and deletes nothing', () => {
    const out = sh('/usr/bin/python3', [path.join(REPO, 'e2e/clients/watch_dryrun.py'), as.kubeconfig], { netns: as.netns, timeoutMs: 60_000 });
    assert.match(out, /^watch: .*ADDED:py-watched$/m);
    assert.match(out, /^quiet: 0 events in [2-4] s$/m);
    assert.match(out, /^dry-create: py-dry answered, read is 404$/m);
    assert.match(out, /^dry-delete: still there: py-watched$/m);
  });

  test('kubectl --dry-run=server create, apply and delete change nothing; diff leaves the object as it was', () => {
    const cm = (v: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kd', namespace: 'default' }, data: { v } });
    assert.match(as.kubectl(['create', '--dry-run=server', '-f', '-'], cm('1')), /configmap\/kd created \(server dry run\)/);
    assert.match(sh('kubectl', [`--kubeconfig=${as.kubeconfig}`, 'get', 'cm', 'kd'], { netns: as.netns, allowFail: true }), /^$/);
    as.kubectl(['apply', '-f', '-'], cm('1'));
    const rv = as.kubectl(['get', 'cm', 'kd', '-o', 'jsonpath={.metadata.resourceVersion}']);
    assert.match(as.kubectl(['apply', '--dry-run=server', '-f', '-'], cm('2')), /configmap\/kd configured \(server dry run\)/);
    const diff = sh('sh', ['-c', `kubectl --kubeconfig=${as.kubeconfig} diff -f - ; echo "exit=$?"`], { netns: as.netns, input: cm('3') });
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
    const doc = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'rt2', namespace: 'default' }, data: { a: '1' } });
    assert.match(as.kubectl(['apply', '-f', '-'], doc), /configmap\/rt2 created/);
    assert.match(as.kubectl(['apply', '-f', '-'], doc), /configmap\/rt2 unchanged/);
  });

  test('kubectl create role|clusterrole|rolebinding|clusterrolebinding (protobuf bodies), auth can-i, auth can-i --list and auth whoami', () => {
    assert.match(as.kubectl(['create', 'role', 'pod-reader', '--verb=get,list', '--resource=pods']), /role\.rbac\.authorization\.k8s\.io\/pod-reader created/);
    assert.match(as.kubectl(['create', 'rolebinding', 'alice-reads', '--role=pod-reader', '--user=alice']), /rolebinding\.rbac\.authorization\.k8s\.io\/alice-reads created/);
    assert.match(as.kubectl(['create', 'clusterrole', 'node-reader', '--verb=get', '--resource=nodes']), /clusterrole\.rbac\.authorization\.k8s\.io\/node-reader created/);
    assert.match(as.kubectl(['create', 'clusterrolebinding', 'alice-nodes', '--clusterrole=node-reader', '--user=alice']), /clusterrolebinding\.rbac\.authorization\.k8s\.io\/alice-nodes created/);
    assert.equal(as.kubectl(['get', 'rolebinding', 'alice-reads', '-o', 'jsonpath={.roleRef.kind}/{.roleRef.name}/{.subjects[0].name}']), 'Role/pod-reader/alice');
    assert.equal(as.kubectl(['auth', 'can-i', 'list', 'pods', '--as=alice']).trim(), 'yes');
    const list = as.kubectl(['auth', 'can-i', '--list', '--as=alice']);
    assert.match(list, /^pods\s+\[\]\s+\[\]\s+\[get list\]$/m);
    assert.match(list, /^nodes\s+\[\]\s+\[\]\s+\[get\]$/m);
    const who = as.kubectl(['auth', 'whoami']);
    assert.match(who, /Username\s+kubernetes-admin/);
    assert.match(who, /Groups\s+\[system:masters system:authenticated\]/);
    assert.match(as.kubectl(['auth', 'whoami', '--as=alice', '--as-group=devs']), /Username\s+alice\n\s*Groups\s+\[devs system:authenticated\]/);
  });
});
