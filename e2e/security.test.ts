// e2e: a security replay on a `tskube up` node, with the real
// kubectl and curl as an attacker would use them. Each probe asserts the
// upstream outcome; the probes that already held are kept so they cannot regress.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { parse as parseYaml, stringify as toYaml } from 'yaml';

import { clusterSkip } from './cluster.js';
import { e2eSkipReason } from './harness.js';
import { sh, waitFor } from './proc.js';
import { UpNode } from './up-node.js';

const skip = clusterSkip(e2eSkipReason());
const APP = '127.0.0.1:5000/tskube/app:1';

describe('security replay on a tskube up node', { skip, timeout: 15 * 60_000 }, () => {
  const n = new UpNode();
  const kc = (name: string): string => path.join(n.dir, `${name}.kubeconfig`);

  /** A kubeconfig for a bearer token (no client certificate: the token is who we are). */
  function tokenKubeconfig(name: string, token: string): string {
    const admin = parseYaml(fs.readFileSync(n.kubeconfig, 'utf8'));
    const cluster = admin.clusters[0];
    fs.writeFileSync(
      kc(name),
      toYaml({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [cluster],
        users: [{ name, user: { token } }],
        contexts: [{ name, context: { cluster: cluster.name, user: name } }],
        'current-context': name,
      }),
      { mode: 0o600 },
    );
    return kc(name);
  }

  /** A ServiceAccount's kubeconfig, its token from `kubectl create token`. */
  function saKubeconfig(ns: string, sa: string): string {
    n.kubectl(['create', 'serviceaccount', sa, '-n', ns]);
    return tokenKubeconfig(`${ns}-${sa}`, n.kubectl(['create', 'token', sa, '-n', ns]).trim());
  }

  const curl = (args: string[]): string =>
    sh('curl', ['-sS', '--max-time', '10', ...args], { netns: n.netns, allowFail: true, timeoutMs: 20_000 });
  const adminCurl = (args: string[]): string =>
    curl([
      '--cacert',
      path.join(n.pki, 'pki', 'ca.crt'),
      '--cert',
      path.join(n.pki, 'pki', 'admin.crt'),
      '--key',
      path.join(n.pki, 'pki', 'admin.key'),
      ...args,
    ]);

  before(async () => {
    await n.create();
    await n.run();
    n.kubectl(['create', 'namespace', 'team']);
  });
  after(() => n.stop());

  /** A CSR object for `kubectl create -f -`, its request made by openssl with the given subject. */
  function csrManifest(
    name: string,
    subj: string,
    o: { signer?: string; usages?: string[]; multiValued?: boolean; sans?: string } = {},
  ): string {
    const key = path.join(n.dir, `${name}.key`);
    sh('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
    const req = sh('openssl', [
      'req',
      '-new',
      '-key',
      key,
      '-subj',
      subj,
      ...(o.multiValued ? ['-multivalue-rdn'] : []),
      ...(o.sans ? ['-addext', `subjectAltName=${o.sans}`] : []),
    ]);
    const spec = {
      request: Buffer.from(req).toString('base64'),
      signerName: o.signer ?? 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: o.usages ?? ['digital signature', 'client auth'],
    };
    return JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec,
    });
  }
  const csrState = (name: string): { conditions: string; certificate: boolean } => {
    const o = JSON.parse(n.kubectl(['get', 'csr', name, '-o', 'json']));
    return {
      conditions: ((o.status?.conditions ?? []) as { type: string; reason?: string; message?: string }[])
        .map((c) => `${c.type}/${c.reason}: ${c.message}`)
        .join(', '),
      certificate: !!o.status?.certificate,
    };
  };

  test('a node or the join token cannot get a system:masters certificate through a multi-valued subject', async () => {
    n.kubectl([
      '-n',
      'kube-system',
      'create',
      'secret',
      'generic',
      'bootstrap-token-att4ck',
      '--type=bootstrap.kubernetes.io/token',
      '--from-literal=token-id=att4ck',
      '--from-literal=token-secret=0123456789abcdef',
      '--from-literal=usage-bootstrap-authentication=true',
      '--from-literal=usage-bootstrap-signing=true',
      '--from-literal=auth-extra-groups=system:bootstrappers:kubeadm:default-node-token',
    ]);
    const attackers = [
      {
        who: 'node',
        kubeconfig: path.join(n.pki, `node-${n.name}.kubeconfig`),
        own: `/O=system:nodes/CN=system:node:${n.name}`,
        crafted: `/O=system:nodes/OU=x+O=system:masters/CN=system:node:${n.name}`,
      },
      {
        who: 'token',
        kubeconfig: tokenKubeconfig('bootstrap', 'att4ck.0123456789abcdef'),
        own: '/O=system:nodes/CN=system:node:newcomer',
        crafted: '/O=system:nodes/CN=system:node:mv+O=system:masters',
      },
    ];
    for (const a of attackers) {
      n.kubectl(['create', '-f', '-'], {
        kubeconfig: a.kubeconfig,
        input: csrManifest(`crafted-${a.who}`, a.crafted, { multiValued: true }),
      });
      n.kubectl(['create', '-f', '-'], { kubeconfig: a.kubeconfig, input: csrManifest(`honest-${a.who}`, a.own) });
    }
    // The honest requests, made after the crafted ones, are approved and signed: the approver has seen both.
    for (const a of attackers)
      await waitFor(() => csrState(`honest-${a.who}`).certificate, 60_000, 300, `honest-${a.who} signed`);
    for (const a of attackers)
      assert.deepEqual(csrState(`crafted-${a.who}`), { conditions: '', certificate: false }, `crafted-${a.who}`);
  });

  test('CSR admission and signers: no system:masters for kube-apiserver-client; approving needs the signer; signers check subjects', async () => {
    n.kubectl([
      'create',
      'clusterrole',
      'csr-maker',
      '--verb=create,get,list',
      '--resource=certificatesigningrequests.certificates.k8s.io',
    ]);
    n.kubectl(['create', 'clusterrolebinding', 'csr-maker', '--clusterrole=csr-maker', '--serviceaccount=team:maker']);
    const maker = saKubeconfig('team', 'maker');
    const masters = n.kubectlFails(['create', '-f', '-'], {
      kubeconfig: maker,
      input: csrManifest('maker-masters', '/O=system:masters/CN=maker', {
        signer: 'kubernetes.io/kube-apiserver-client',
      }),
    });
    assert.match(
      masters,
      /use of kubernetes\.io\/kube-apiserver-client signer with system:masters group is not allowed/,
    );
    // An approver of kubelet-serving requests only.
    n.kubectl([
      'create',
      'clusterrole',
      'csr-approver',
      '--verb=get,list,update',
      '--resource=certificatesigningrequests.certificates.k8s.io,certificatesigningrequests.certificates.k8s.io/approval',
    ]);
    n.kubectl([
      'create',
      'clusterrolebinding',
      'csr-approver',
      '--clusterrole=csr-approver',
      '--serviceaccount=team:approver',
    ]);
    n.kubectl([
      'create',
      'clusterrolebinding',
      'csr-approver-serving',
      '--clusterrole=system:certificates.k8s.io:kubelet-serving-approver',
      '--serviceaccount=team:approver',
    ]);
    const approver = saKubeconfig('team', 'approver');
    n.kubectl(['create', '-f', '-'], {
      kubeconfig: maker,
      input: csrManifest('maker-client', '/O=team/CN=maker', { signer: 'kubernetes.io/kube-apiserver-client' }),
    });
    assert.match(
      n.kubectlFails(['certificate', 'approve', 'maker-client'], { kubeconfig: approver }),
      /user not permitted to approve requests with signerName "kubernetes\.io\/kube-apiserver-client"/,
    );
    // A serving request asking for system:masters and client auth: approvable by that approver, refused by the signer.
    n.kubectl(['create', '-f', '-'], {
      kubeconfig: maker,
      input: csrManifest('maker-serving', `/O=system:masters/CN=system:node:${n.name}`, {
        signer: 'kubernetes.io/kubelet-serving',
        usages: ['digital signature', 'server auth', 'client auth'],
        sans: `DNS:${n.name}`,
      }),
    });
    n.kubectl(['certificate', 'approve', 'maker-serving'], { kubeconfig: approver });
    await waitFor(() => csrState('maker-serving').conditions.includes('Failed/'), 60_000, 300, 'maker-serving failed');
    assert.deepEqual(csrState('maker-serving'), {
      conditions:
        'Approved/KubectlApprove: This CSR was approved by kubectl certificate approve., Failed/SignerValidationFailure: subject organization is not system:nodes',
      certificate: false,
    });
  });

  test("the node's registry takes no push on the node's address (what the LAN reaches); pulls work there, pushes only on loopback", () => {
    const copy = (dest: string): string =>
      sh(
        'skopeo',
        ['copy', '--src-tls-verify=false', '--dest-tls-verify=false', `docker://${APP}`, `docker://${dest}`],
        { netns: n.netns, allowFail: true, timeoutMs: 60_000 },
      );
    const viaLan = sh(
      'sh',
      [
        '-c',
        `skopeo copy --src-tls-verify=false --dest-tls-verify=false docker://${APP} docker://${n.nodeIP}:5000/evil/app:1 2>&1; echo "exit $?"`,
      ],
      { netns: n.netns, timeoutMs: 60_000 },
    );
    assert.doesNotMatch(viaLan, /exit 0$/m, viaLan);
    assert.match(viaLan, /405|Method Not Allowed|method not allowed/i);
    assert.equal(
      sh('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://${n.nodeIP}:5000/v2/evil/app/manifests/1`], {
        netns: n.netns,
      }),
      '404',
      'nothing landed',
    );
    assert.equal(
      sh(
        'curl',
        [
          '-s',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-H',
          'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
          `http://${n.nodeIP}:5000/v2/tskube/app/manifests/1`,
        ],
        { netns: n.netns },
      ),
      '200',
      'pulls work on the node address',
    );
    copy('127.0.0.1:5000/mine/app:1');
    assert.equal(
      sh(
        'curl',
        [
          '-s',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-H',
          'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
          'http://127.0.0.1:5000/v2/mine/app/manifests/1',
        ],
        { netns: n.netns },
      ),
      '200',
      'a push on loopback lands',
    );
  });

  test('Pod Security: a restricted namespace refuses a privileged hostPID pod with hostPath /; workloads and a raised level warn', async () => {
    n.kubectl(['create', 'namespace', 'locked']);
    n.kubectl(['label', 'namespace', 'locked', 'pod-security.kubernetes.io/enforce=restricted']);
    const rootSpec = {
      hostPID: true,
      containers: [
        {
          name: 'sh',
          image: APP,
          command: ['sleep', '3600'],
          securityContext: { privileged: true },
          volumeMounts: [{ name: 'host', mountPath: '/host' }],
        },
      ],
      volumes: [{ name: 'host', hostPath: { path: '/' } }],
    };
    const refused = n.kubectlFails(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'root', namespace: 'locked' },
        spec: rootSpec,
      }),
    });
    assert.match(
      refused,
      /pods "root" is forbidden: violates PodSecurity "restricted:latest": host namespaces \(hostPID=true\), privileged \(container "sh" must not set securityContext\.privileged=true\), .*restricted volume types \(volume "host" uses restricted volume type "hostPath"\)/,
    );
    assert.equal(n.kubectl(['get', 'pods', '-n', 'locked', '-o', 'name']), '', 'nothing was created');
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'rooter', namespace: 'locked' },
      spec: {
        selector: { matchLabels: { app: 'rooter' } },
        template: { metadata: { labels: { app: 'rooter' } }, spec: rootSpec },
      },
    };
    const applied = n.kubectlWarnings(['apply', '-f', '-'], { input: JSON.stringify(deployment) });
    assert.match(applied.out, /deployment.apps\/rooter created/);
    assert.match(
      applied.warnings,
      /^Warning: would violate PodSecurity "restricted:latest": host namespaces \(hostPID=true\)/m,
    );
    await waitFor(
      () =>
        /FailedCreate.*pods "rooter-[a-z0-9-]+" is forbidden: violates PodSecurity "restricted:latest"/.test(
          n.kubectl(['get', 'events', '-n', 'locked']),
        ),
      60_000,
      500,
      "the ReplicaSet's pods refused",
    );
    assert.equal(n.kubectl(['get', 'pods', '-n', 'locked', '-o', 'name']), '', 'the Deployment ran nothing');
    // A pod already in a namespace that is then held to baseline: the label goes on, with a warning naming it.
    n.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'netadmin', namespace: 'team' },
        spec: {
          containers: [
            {
              name: 'c',
              image: APP,
              command: ['sleep', '3600'],
              securityContext: { capabilities: { add: ['NET_ADMIN'] } },
            },
          ],
        },
      }),
    });
    const raised = n.kubectlWarnings(['label', 'namespace', 'team', 'pod-security.kubernetes.io/enforce=baseline']);
    assert.match(
      raised.warnings,
      /Warning: existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"\nWarning: netadmin: non-default capabilities/,
    );
    assert.match(
      n.kubectlFails(['label', 'namespace', 'team', 'pod-security.kubernetes.io/warn=strict']),
      /metadata\.labels\[pod-security\.kubernetes\.io\/warn\]: Invalid value: "strict": must be one of privileged, baseline, restricted/,
    );
    n.kubectl(['delete', 'pod', 'netadmin', '-n', 'team', '--wait=false']);
    n.kubectl(['label', 'namespace', 'team', 'pod-security.kubernetes.io/enforce-']);
  });

  test('node credentials cannot mint a token for any ServiceAccount: not through a mirror pod, not for a pod running as another', async () => {
    fs.writeFileSync(
      path.join(n.manifests, 'static.yaml'),
      `apiVersion: v1\nkind: Pod\nmetadata: {name: static}\nspec:\n  containers: [{name: c, image: ${APP}, command: [sleep, '3600']}]\n`,
    );
    await waitFor(
      () => n.kubectl(['get', 'pod', `static-${n.name}`, '-n', 'default', '--ignore-not-found', '-o', 'name']).trim(),
      120_000,
      500,
      'mirror pod',
    );
    const uid = n.kubectl(['get', 'pod', `static-${n.name}`, '-o', 'jsonpath={.metadata.uid}']);
    n.kubectl(['create', 'serviceaccount', 'powerful', '-n', 'default']);
    n.kubectl([
      'create',
      'clusterrolebinding',
      'powerful-admin',
      '--clusterrole=cluster-admin',
      '--serviceaccount=default:powerful',
    ]);
    const nodeKc = path.join(n.pki, `node-${n.name}.kubeconfig`);
    const err = n.kubectlFails(
      [
        'create',
        'token',
        'powerful',
        '--bound-object-kind=Pod',
        `--bound-object-name=static-${n.name}`,
        `--bound-object-uid=${uid}`,
      ],
      { kubeconfig: nodeKc },
    );
    assert.match(
      err,
      /cannot bind token for serviceaccount "powerful" to pod running with different serviceaccount name\./,
    );
    // Without a pod binding, NodeRestriction refuses tokens to nodes altogether.
    assert.match(
      n.kubectlFails(['create', 'token', 'powerful'], { kubeconfig: nodeKc }),
      /node requested token not bound to a pod/,
    );
  });

  test('RBAC escalation: a namespace admin cannot bind cluster-admin or write * on *; a ClusterRoleBinding writer cannot bind itself; roleRef is immutable', () => {
    n.kubectl([
      'create',
      'rolebinding',
      'boss-admin',
      '--clusterrole=admin',
      '--serviceaccount=team:boss',
      '-n',
      'team',
    ]);
    const boss = saKubeconfig('team', 'boss');
    const grab = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'grab', namespace: 'team' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
    };
    assert.match(
      n.kubectlFails(['apply', '-f', '-'], { kubeconfig: boss, input: JSON.stringify(grab) }),
      /rolebindings\.rbac\.authorization\.k8s\.io "grab" is forbidden: user "system:serviceaccount:team:boss" \(groups=\["system:serviceaccounts" "system:serviceaccounts:team" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\["\*"\], Resources:\["\*"\], Verbs:\["\*"\]\}/,
    );
    const all = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'all', namespace: 'team' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    };
    assert.match(
      n.kubectlFails(['apply', '-f', '-'], { kubeconfig: boss, input: JSON.stringify(all) }),
      /roles\.rbac\.authorization\.k8s\.io "all" is forbidden: .* is attempting to grant RBAC permissions not currently held/,
    );
    // What it holds it may still grant.
    n.kubectl(['apply', '-f', '-'], {
      kubeconfig: boss,
      input: JSON.stringify({
        ...grab,
        metadata: { name: 'dev-view', namespace: 'team' },
        roleRef: { ...grab.roleRef, name: 'view' },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'dev' }],
      }),
    });

    n.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'crb-writer' },
        rules: [
          {
            apiGroups: ['rbac.authorization.k8s.io'],
            resources: ['clusterrolebindings'],
            verbs: ['create', 'get', 'patch', 'update'],
          },
        ],
      }),
    });
    n.kubectl([
      'create',
      'clusterrolebinding',
      'crb-writer',
      '--clusterrole=crb-writer',
      '--serviceaccount=default:binder',
    ]);
    const binder = saKubeconfig('default', 'binder');
    const self = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'binder-root' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'binder', namespace: 'default' }],
    };
    assert.match(
      n.kubectlFails(['apply', '-f', '-'], { kubeconfig: binder, input: JSON.stringify(self) }),
      /clusterrolebindings\.rbac\.authorization\.k8s\.io "binder-root" is forbidden: user "system:serviceaccount:default:binder" .* is attempting to grant RBAC permissions not currently held/,
    );
    assert.match(
      n.kubectlFails(
        ['patch', 'clusterrolebinding', 'crb-writer', '--type=merge', '-p', '{"roleRef":{"name":"cluster-admin"}}'],
        { kubeconfig: binder },
      ),
      /The ClusterRoleBinding "crb-writer" is invalid: roleRef: Invalid value: rbac\.RoleRef\{APIGroup:"rbac\.authorization\.k8s\.io", Kind:"ClusterRole", Name:"cluster-admin"\}: cannot change roleRef/,
    );
    assert.match(
      n.kubectl(['get', 'clusterrolebinding', 'crb-writer', '-o', 'jsonpath={.roleRef.name}']),
      /^crb-writer$/,
    );
    // `auth can-i` answers "no" with exit status 1 (it sends a SelfSubjectAccessReview in protobuf).
    assert.match(
      sh(
        'sh',
        [
          '-c',
          `kubectl --kubeconfig=${n.kubeconfig} auth can-i list secrets -A --as=system:serviceaccount:default:binder; echo "exit=$?"`,
        ],
        { netns: n.netns },
      ),
      /^no\nexit=1\n$/,
    );
    assert.match(
      sh(
        'sh',
        [
          '-c',
          `kubectl --kubeconfig=${n.kubeconfig} auth can-i create clusterrolebindings --as=system:serviceaccount:default:binder; echo "exit=$?"`,
        ],
        { netns: n.netns },
      ),
      /^yes\nexit=0\n$/,
    );
  });

  test('subPath: .. is refused by the API; a symlink planted by an init container never mounts the host', async () => {
    const pod = (name: string, subPath: string, init?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'team' },
      spec: {
        volumes: [{ name: 'data', emptyDir: {} }],
        ...(init
          ? {
              initContainers: [
                {
                  name: 'plant',
                  image: APP,
                  command: ['sh', '-c', init],
                  volumeMounts: [{ name: 'data', mountPath: '/data' }],
                },
              ],
            }
          : {}),
        containers: [
          {
            name: 'c',
            image: APP,
            command: ['sh', '-c', 'ls /host; sleep 3600'],
            volumeMounts: [{ name: 'data', mountPath: '/host', subPath }],
          },
        ],
      },
    });
    assert.match(
      n.kubectlFails(['apply', '-f', '-'], { input: JSON.stringify(pod('dotdot', '../../../../etc')) }),
      /Pod "dotdot" is invalid: spec\.containers\[0\]\.volumeMounts\[0\]\.subPath: Invalid value: "\.\.\/\.\.\/\.\.\/\.\.\/etc": must not contain '\.\.'/,
    );
    n.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pod('planted', 'etc', 'ln -s /etc /data/etc')) });
    await waitFor(
      () => /CreateContainerConfigError/.test(n.kubectl(['get', 'pod', 'planted', '-n', 'team'])),
      120_000,
      500,
      'CreateContainerConfigError',
    );
    const events = n.kubectl(['get', 'events', '-n', 'team', '--field-selector', 'involvedObject.name=planted']);
    assert.match(events, /failed to prepare subPath for volumeMount "data" of container "c"/);
    assert.equal(
      sh('findmnt', ['-rn', '-o', 'TARGET'])
        .split('\n')
        .filter((t) => t.startsWith(n.rootDir) && t.includes('volume-subpaths')).length,
      0,
      'nothing bind-mounted',
    );
    // A subPath that stays inside the volume works.
    n.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify(pod('inside', 'sub', 'mkdir -p /data/sub && echo hi > /data/sub/file')),
    });
    await waitFor(
      () => /inside\s+1\/1\s+Running/.test(n.kubectl(['get', 'pod', 'inside', '-n', 'team'])),
      120_000,
      500,
      'inside running',
    );
    assert.match(n.kubectl(['logs', 'inside', '-n', 'team']), /^file$/m);
  });

  test('a static pod whose uid is ../.. or . is refused naming the file and field; nothing outside --root-dir or of other pods is touched', async () => {
    const canary = path.join(n.dir, 'canary');
    fs.mkdirSync(canary, { recursive: true });
    fs.writeFileSync(path.join(canary, 'keep'), 'x');
    const good = n.kubectl([
      'get',
      'pod',
      `static-${n.name}`,
      '-o',
      'jsonpath={.status.containerStatuses[0].containerID}',
    ]);
    for (const [file, uid] of [
      ['escape.yaml', '../../canary'],
      ['dot.yaml', '.'],
    ] as const) {
      fs.writeFileSync(
        path.join(n.manifests, file),
        `apiVersion: v1\nkind: Pod\nmetadata: {name: ${file.split('.')[0]}, uid: "${uid}"}\nspec:\n  volumes: [{name: v, emptyDir: {}}]\n  containers: [{name: c, image: ${APP}, command: [sleep, '3600'], volumeMounts: [{name: v, mountPath: /v}]}]\n`,
      );
      await waitFor(
        () =>
          n
            .componentLog('kubelet')
            .includes(
              `${path.join(n.manifests, file)}: Pod "${file.split('.')[0]}": metadata.uid: Invalid value: ${JSON.stringify(uid)}`,
            ),
        30_000,
        200,
        `error for ${file}`,
      );
      fs.rmSync(path.join(n.manifests, file));
    }
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(fs.readFileSync(path.join(canary, 'keep'), 'utf8'), 'x');
    assert.ok(fs.existsSync(path.join(n.rootDir, 'pods')), 'the pods directory is still there');
    assert.equal(
      n.kubectl(['get', 'pod', `static-${n.name}`, '-o', 'jsonpath={.status.containerStatuses[0].containerID}']),
      good,
      'the good static pod was not restarted',
    );
  });

  test('impersonation: kubectl --as is refused without impersonate, and acts as the user with it', () => {
    const boss = kc('team-boss');
    assert.match(
      n.kubectlFails(['get', 'pods', '-n', 'team', '--as=kubernetes-admin'], { kubeconfig: boss }),
      /users "kubernetes-admin" is forbidden: User "system:serviceaccount:team:boss" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    n.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'be-dev' },
        rules: [{ apiGroups: [''], resources: ['users'], verbs: ['impersonate'], resourceNames: ['dev'] }],
      }),
    });
    n.kubectl(['create', 'clusterrolebinding', 'boss-be-dev', '--clusterrole=be-dev', '--serviceaccount=team:boss']);
    assert.match(n.kubectl(['get', 'pods', '-n', 'team', '--as=dev'], { kubeconfig: boss }), /planted|inside/);
    assert.match(
      n.kubectlFails(['delete', 'pod', 'inside', '-n', 'team', '--as=dev'], { kubeconfig: boss }),
      /pods "inside" is forbidden: User "dev" cannot delete resource "pods"/,
    );
    assert.match(
      n.kubectlFails(['get', 'nodes', '--as=dev', '--as-group=system:masters'], { kubeconfig: boss }),
      /groups "system:masters" is forbidden: User "system:serviceaccount:team:boss" cannot impersonate resource "groups"/,
    );
  });

  test('another host user cannot read a pod volume: pod and volume directories are 0750', () => {
    const uid = n.kubectl(['get', 'pod', 'inside', '-n', 'team', '-o', 'jsonpath={.metadata.uid}']);
    const vols = path.join(n.rootDir, 'pods', uid, 'volumes', 'kubernetes.io~projected');
    const token = path.join(
      vols,
      fs.readdirSync(vols).find((d) => d.startsWith('kube-api-access-'))!,
      'token',
    );
    assert.ok(fs.readFileSync(token, 'utf8').split('.').length === 3, 'root reads the token');
    for (const d of [path.join(n.rootDir, 'pods', uid), path.join(n.rootDir, 'pods', uid, 'volumes'), vols])
      assert.equal(fs.statSync(d).mode & 0o777, 0o750, d);
    let out: string;
    try {
      out = sh('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', token]);
    } catch (e) {
      out = (e as Error).message;
    }
    assert.match(out, /Permission denied/);
  });

  test('a deeply nested object is refused with 400 and every list keeps working; oversized objects are refused', () => {
    let nested = '1';
    for (let i = 0; i < 2000; i++) nested = `{"a":${nested}}`;
    const body = path.join(n.dir, 'deep.json');
    fs.writeFileSync(body, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${nested}}`);
    const deep = adminCurl([
      '-X',
      'POST',
      '-H',
      'Content-Type: application/json',
      '--data-binary',
      `@${body}`,
      `${n.server}/api/v1/namespaces/default/configmaps`,
    ]);
    assert.match(deep, /"code":\s*400/);
    assert.match(deep, /too deeply nested/);
    assert.match(n.kubectl(['get', 'cm', '-A']), /kube-root-ca\.crt/);
    const big = path.join(n.dir, 'big.json');
    fs.writeFileSync(
      big,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'big' },
        data: { blob: 'x'.repeat(2_900_000) },
      }),
    );
    const tooBig = adminCurl([
      '-X',
      'POST',
      '-H',
      'Content-Type: application/json',
      '--data-binary',
      `@${big}`,
      `${n.server}/api/v1/namespaces/default/configmaps`,
    ]);
    assert.match(tooBig, /"code":\s*422/);
    assert.match(tooBig, /ConfigMap \\"big\\" is invalid: \[\]: Too long: may not be more than 1048576 bytes/);
    assert.match(
      n.kubectlFails(['label', 'cm', 'kube-root-ca.crt', `big=${'x'.repeat(100)}`]),
      /must be no more than 63 characters/,
    );
  });

  test('what held before still holds: anonymous, bogus tokens, forged certificates, the kubelet API mapping and paths, node-to-node writes, NodeRestriction labels, no old TLS or weak suites', () => {
    // `up` turns anonymous auth on, as kubeadm does (joining nodes read cluster-info): anonymous is refused by RBAC.
    const anon = curl(['-k', `${n.server}/api/v1/namespaces/default/secrets`]);
    assert.match(anon, /"code":\s*403/);
    assert.match(anon, /User \\"system:anonymous\\" cannot list resource \\"secrets\\"/);
    assert.match(
      curl(['-k', `${n.server}/api/v1/namespaces/kube-public/configmaps/cluster-info`]),
      /"name":\s*"cluster-info"/,
    );
    // A certificate claiming system:masters from a CA the apiserver does not trust.
    const forged = path.join(n.dir, 'forged');
    fs.mkdirSync(forged, { recursive: true });
    sh('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/O=system:masters/CN=kubernetes-admin',
      '-keyout',
      path.join(forged, 'k.pem'),
      '-out',
      path.join(forged, 'c.pem'),
    ]);
    assert.match(
      curl([
        '-k',
        '--cert',
        path.join(forged, 'c.pem'),
        '--key',
        path.join(forged, 'k.pem'),
        `${n.server}/api/v1/secrets`,
      ]),
      /"code":\s*401/,
    );
    // The kube-proxy's identity may not read pods through the kubelet API.
    const proxyKc = parseYaml(fs.readFileSync(path.join(n.pki, 'kube-proxy.kubeconfig'), 'utf8'));
    const proxyUser = proxyKc.users[0].user;
    const cert = path.join(n.dir, 'proxy.crt');
    const key = path.join(n.dir, 'proxy.key');
    fs.writeFileSync(
      cert,
      proxyUser['client-certificate-data']
        ? Buffer.from(proxyUser['client-certificate-data'], 'base64')
        : fs.readFileSync(proxyUser['client-certificate']),
    );
    fs.writeFileSync(
      key,
      proxyUser['client-key-data']
        ? Buffer.from(proxyUser['client-key-data'], 'base64')
        : fs.readFileSync(proxyUser['client-key']),
    );
    assert.match(curl(['-k', '--cert', cert, '--key', key, `https://${n.nodeIP}:10250/pods`]), /Forbidden|forbidden/);
    // A node may not give itself a restricted label.
    assert.match(
      n.kubectlFails(['label', 'node', n.name, 'node-role.kubernetes.io/control-plane='], {
        kubeconfig: path.join(n.pki, `node-${n.name}.kubeconfig`),
      }),
      /is not allowed to modify labels: node-role\.kubernetes\.io\/control-plane/,
    );
    // A bogus bearer token is 401, not anonymous.
    assert.match(
      curl(['-k', '-H', 'Authorization: Bearer not-a-token', `${n.server}/api/v1/namespaces/default/pods`]),
      /"code":\s*401/,
    );
    // Path traversal on the kubelet API, as the cluster admin: never a host file.
    const traversal = curl([
      '-k',
      '--path-as-is',
      '--cert',
      path.join(n.pki, 'pki', 'admin.crt'),
      '--key',
      path.join(n.pki, 'pki', 'admin.key'),
      `https://${n.nodeIP}:10250/containerLogs/default/x/../../../../../../etc/passwd`,
    ]);
    assert.doesNotMatch(traversal, /root:x:0:0/);
    // A node may not write another node.
    n.kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'other-node' } }),
    });
    assert.match(
      n.kubectlFails(['label', 'node', 'other-node', 'x=y'], {
        kubeconfig: path.join(n.pki, `node-${n.name}.kubeconfig`),
      }),
      /node "up-node" is not allowed to modify node "other-node"/,
    );
    // No TLS older than 1.2, and no suite without forward secrecy, on :6443 or :10250.
    for (const port of [6443, 10250]) {
      const weak = sh('openssl', ['s_client', '-connect', `${n.nodeIP}:${port}`, '-tls1_2', '-cipher', 'AES128-SHA'], {
        netns: n.netns,
        allowFail: true,
        input: '',
      });
      assert.doesNotMatch(weak, /Cipher is AES128-SHA/, `port ${port}`);
      const old = sh(
        'openssl',
        ['s_client', '-connect', `${n.nodeIP}:${port}`, '-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'],
        { netns: n.netns, allowFail: true, input: '' },
      );
      assert.doesNotMatch(old, /Protocol\s*:\s*TLSv1\.1/, `port ${port}`);
    }
  });
});
