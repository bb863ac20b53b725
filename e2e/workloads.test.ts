// e2e: the design notes' whole flow on one node with the real kubectl:
// create deployment -> ReplicaSet -> pods -> scheduler -> kubelet -> containerd,
// expose -> EndpointSlices -> kube-proxy; scale and set image (rolling update);
// ServiceAccount tokens in pods; ConfigMaps and Secrets in env and files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eSkipReason, REGISTRY } from './harness.js';
import { waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());
const APP2 = `${REGISTRY}/tskube/app:2`;

describe('workloads', { skip, timeout: 12 * 60_000 }, () => {
  const cluster = new TestCluster({
    apiserverFlags: ['--authorization-mode=Node,RBAC'],
    kubeletConfig: 'syncFrequency: 5s\n',
  });
  before(async () => {
    await cluster.start();
    cluster.node.startProxy([
      `--kubeconfig=${path.join(cluster.as.dir, 'pki', 'kube-proxy.kubeconfig')}`,
      '--cluster-cidr=10.244.0.0/16',
      '--healthz-bind-address=127.0.0.1:10256',
      '--metrics-bind-address=127.0.0.1:10249',
    ]);
    // A second tag of the app image, for `kubectl set image`.
    cluster.node.exec(
      'skopeo',
      [
        'copy',
        '--quiet',
        '--src-tls-verify=false',
        '--dest-tls-verify=false',
        `docker://${APP_IMAGE}`,
        `docker://${APP2}`,
      ],
      60_000,
    );
  });
  after(() => cluster.cleanup());

  const kubectl = (args: string[]) => cluster.kubectl(args);
  /** kubectl with its exit status (for exec). */
  const run = (args: string[], timeout = 30_000) =>
    spawnSync(
      'nsenter',
      [`--net=/run/netns/${cluster.node.netns}`, 'kubectl', `--kubeconfig=${cluster.as.kubeconfig}`, ...args],
      { encoding: 'utf8', timeout },
    );
  const webPods = () =>
    kubectl([
      'get',
      'pods',
      '-l',
      'app=web',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.conditions[?(@.type=="Ready")].status} {.spec.containers[0].image} {.metadata.deletionTimestamp}{"\\n"}{end}',
    ])
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' '))
      .map(([name, phase, ready, image, deleting]) => ({
        name: name!,
        phase: phase!,
        ready: ready === 'True',
        image: image!,
        deleting: !!deleting,
      }));
  const inClient = (cmd: string) => run(['exec', 'client', '--', 'sh', '-c', cmd]);

  test('kubectl create deployment --replicas=3 runs 3 pods through ReplicaSet, scheduler, kubelet and containerd', async () => {
    // Each replica serves its own hostname, so the Service's spread is visible.
    const out = kubectl([
      'create',
      'deployment',
      'web',
      `--image=${APP_IMAGE}`,
      '--replicas=3',
      '--port=8080',
      '--',
      '/bin/sh',
      '-c',
      "trap 'exit 0' TERM; hostname > /www/index.html; httpd -f -p 8080 -h /www & wait",
    ]);
    assert.match(out, /deployment\.apps\/web created/);
    const status = spawnSync(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        'kubectl',
        `--kubeconfig=${cluster.as.kubeconfig}`,
        'rollout',
        'status',
        'deployment/web',
        '--timeout=120s',
      ],
      { encoding: 'utf8', timeout: 130_000 },
    );
    assert.equal(status.status, 0, status.stderr);
    assert.match(status.stdout, /deployment "web" successfully rolled out/);
    const rs = kubectl(['get', 'rs', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}']);
    assert.match(rs, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    const pods = webPods();
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.match(p.name, new RegExp(`^${rs}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
      assert.equal(p.phase, 'Running');
    }
    assert.match(kubectl(['get', 'deploy', 'web']), /web\s+3\/3\s+3\s+3\s/);
  });

  test('kubectl expose, then a pod reaches every replica through the ClusterIP (kube-proxy), and finds it in its env', async () => {
    assert.match(kubectl(['expose', 'deployment', 'web', '--port=80', '--target-port=8080']), /service\/web exposed/);
    const ip = kubectl(['get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}']);
    await waitFor(
      () =>
        kubectl([
          'get',
          'endpointslices',
          '-l',
          'kubernetes.io/service-name=web',
          '-o',
          'jsonpath={.items[0].endpoints[*].addresses[0]}',
        ])
          .split(' ')
          .filter(Boolean).length === 3,
      30_000,
      300,
      'three endpoints',
    );
    kubectl(['run', 'client', `--image=${APP_IMAGE}`, '--', 'sleep', '3600']);
    await waitFor(() => /Running/.test(kubectl(['get', 'pod', 'client'])), 60_000, 300, 'client running');
    const names = new Set(webPods().map((p) => p.name));
    const seen = new Set<string>();
    await waitFor(
      () => {
        const r = inClient(`for i in 1 2 3 4 5 6 7 8 9 10; do timeout 2 wget -qO- http://${ip}/; done`);
        for (const l of r.stdout.split('\n').filter(Boolean)) seen.add(l.trim());
        return [...names].every((n) => seen.has(n));
      },
      60_000,
      500,
      'all three replicas answered',
    );
    assert.deepEqual(
      [...seen].filter((n) => !names.has(n)),
      [],
    );
    // The client started after the Service: it has the Service's variables.
    const env = inClient(
      'echo $WEB_SERVICE_HOST:$WEB_SERVICE_PORT $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT',
    ).stdout.trim();
    assert.equal(env, `${ip}:80 10.96.0.1:443`);
  });

  test('kubectl scale --replicas=5 gives 5 running pods', async () => {
    assert.match(kubectl(['scale', 'deployment', 'web', '--replicas=5']), /deployment\.apps\/web scaled/);
    await waitFor(
      () => webPods().filter((p) => p.phase === 'Running' && p.ready && !p.deleting).length === 5,
      90_000,
      300,
      '5 ready pods',
    );
    assert.equal(kubectl(['get', 'deploy', 'web', '-o', 'jsonpath={.status.availableReplicas}']), '5');
  });

  test('kubectl set image rolls the pods without ever dropping below replicas - maxUnavailable ready', async () => {
    // replicas 5, maxUnavailable 25% rounded down = 1: at least 4 ready at any time.
    // kubectl create deployment names the container after the image: app.
    kubectl(['set', 'image', 'deployment/web', `app=${APP2}`]);
    let minReady = Infinity;
    await waitFor(
      () => {
        const pods = webPods();
        minReady = Math.min(minReady, pods.filter((p) => p.ready && !p.deleting).length);
        const d = kubectl([
          'get',
          'deploy',
          'web',
          '-o',
          'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.updatedReplicas} {.status.replicas} {.status.availableReplicas}',
        ]).split(' ');
        return d[0] === d[1] && d.slice(2).every((n) => n === '5') && pods.every((p) => p.image === APP2);
      },
      180_000,
      150,
      'rollout to app:2',
    );
    assert.ok(minReady >= 4, `ready pods never below 4 (lowest seen: ${minReady})`);
    const r = run(['rollout', 'status', 'deployment/web', '--timeout=30s']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(kubectl(['rollout', 'history', 'deployment/web']), /1\s+<none>\n2\s+<none>/);
  });

  test('a rollout to an image that does not exist: rollout status fails on the progress deadline; rollout undo brings the last good pods back', async () => {
    kubectl(['patch', 'deployment', 'web', '-p', '{"spec":{"progressDeadlineSeconds":5}}']);
    kubectl(['set', 'image', 'deployment/web', `app=${REGISTRY}/tskube/nosuch:1`]);
    const failed = run(['rollout', 'status', 'deployment/web', '--timeout=90s'], 100_000);
    assert.notEqual(failed.status, 0, failed.stdout);
    assert.match(failed.stderr, /error: deployment "web" exceeded its progress deadline/);
    assert.equal(
      kubectl([
        'get',
        'deploy',
        'web',
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Progressing")].status} {.status.conditions[?(@.type=="Progressing")].reason}',
      ]),
      'False ProgressDeadlineExceeded',
    );
    // maxUnavailable 1: four of the old pods kept serving all along.
    assert.ok(
      webPods().filter((p) => p.ready && !p.deleting && p.image === APP2).length >= 4,
      JSON.stringify(webPods()),
    );
    assert.match(kubectl(['rollout', 'undo', 'deployment/web']), /deployment\.apps\/web rolled back/);
    const back = run(['rollout', 'status', 'deployment/web', '--timeout=120s'], 130_000);
    assert.equal(back.status, 0, back.stderr);
    assert.match(back.stdout, /deployment "web" successfully rolled out/);
    await waitFor(
      () => webPods().length === 5 && webPods().every((p) => p.image === APP2 && p.ready),
      60_000,
      300,
      'five app:2 pods again',
    );
    // The app:2 ReplicaSet became revision 4; describe shows the deployment at it.
    assert.match(kubectl(['rollout', 'history', 'deployment/web']), /\n1\s+<none>\n3\s+<none>\n4\s+<none>/);
    assert.match(kubectl(['describe', 'deployment', 'web']), /deployment\.kubernetes\.io\/revision: 4/);
  });

  test('a pod has its ServiceAccount token, and the apiserver accepts it through the kubernetes Service', async () => {
    const token = run(['exec', 'client', '--', 'cat', '/var/run/secrets/kubernetes.io/serviceaccount/token']).stdout;
    assert.equal(token.split('.').length, 3);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.sub, 'system:serviceaccount:default:default');
    assert.equal(claims['kubernetes.io'].pod.name, 'client');
    assert.equal(inClient('cat /var/run/secrets/kubernetes.io/serviceaccount/namespace').stdout, 'default');
    assert.match(
      inClient('cat /var/run/secrets/kubernetes.io/serviceaccount/ca.crt').stdout,
      /^-----BEGIN CERTIFICATE-----/,
    );
    // In-cluster client: the token and CA from the mounted volume, the address from the Service variables.
    // (busybox wget's own TLS offers only SHA-1 signatures, which OpenSSL 3 servers refuse, so the
    // client is node, mounted from the host.)
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'apiclient' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            volumeMounts: [
              { name: 'node', mountPath: '/usr/bin/node', readOnly: true },
              { name: 'lib', mountPath: '/lib/x86_64-linux-gnu', readOnly: true },
              { name: 'lib64', mountPath: '/lib64', readOnly: true },
            ],
          },
        ],
        volumes: [
          { name: 'node', hostPath: { path: process.execPath, type: 'File' } },
          { name: 'lib', hostPath: { path: '/lib/x86_64-linux-gnu', type: 'Directory' } },
          { name: 'lib64', hostPath: { path: '/lib64', type: 'Directory' } },
        ],
      },
    });
    await waitFor(() => /Running/.test(kubectl(['get', 'pod', 'apiclient'])), 60_000, 300, 'apiclient running');
    const get = (auth: boolean) =>
      run([
        'exec',
        'apiclient',
        '--',
        '/usr/bin/node',
        '-e',
        `
        const fs = require('fs'); const sa = '/var/run/secrets/kubernetes.io/serviceaccount/';
        const headers = ${auth} ? { Authorization: 'Bearer ' + fs.readFileSync(sa + 'token', 'utf8') } : {};
        require('https').get({ host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, path: '/api', ca: fs.readFileSync(sa + 'ca.crt'), headers }, (res) => {
          let b = ''; res.on('data', (d) => (b += d)); res.on('end', () => console.log(res.statusCode, b));
        }).on('error', (e) => console.log('error', e.message));`,
      ]).stdout;
    assert.match(
      get(true),
      /^200 \{"kind":"APIVersions"/,
      'the token is accepted, and the CA verifies the apiserver at the ClusterIP',
    );
    assert.match(get(false), /^401 /, 'without the token: 401');
  });

  test('ConfigMap and Secret values reach env and files; a ConfigMap update reaches the file', async () => {
    kubectl(['create', 'configmap', 'app-config', '--from-literal=greeting=hello', '--from-literal=level=debug']);
    kubectl(['create', 'secret', 'generic', 'app-secret', '--from-literal=password=s3cret']);
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'configured' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            env: [
              { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'greeting' } } },
              { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } },
              { name: 'MY_POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            ],
            envFrom: [{ configMapRef: { name: 'app-config' }, prefix: 'CFG_' }],
            volumeMounts: [
              { name: 'config', mountPath: '/etc/app' },
              { name: 'secret', mountPath: '/etc/secret' },
            ],
          },
        ],
        volumes: [
          { name: 'config', configMap: { name: 'app-config' } },
          { name: 'secret', secret: { secretName: 'app-secret', defaultMode: 0o400 } },
        ],
      },
    });
    await waitFor(() => /Running/.test(kubectl(['get', 'pod', 'configured'])), 60_000, 300, 'configured running');
    const sh = (cmd: string) => run(['exec', 'configured', '--', 'sh', '-c', cmd]).stdout;
    assert.equal(sh('echo $GREETING $PASSWORD $MY_POD $CFG_level'), 'hello s3cret configured debug\n');
    assert.equal(sh('cat /etc/app/greeting'), 'hello');
    assert.equal(sh('cat /etc/secret/password'), 's3cret');
    assert.equal(sh('stat -L -c %a /etc/secret/password'), '400\n');
    assert.match(sh('grep " /etc/secret " /proc/mounts'), /tmpfs/);
    kubectl(['patch', 'configmap', 'app-config', '--type=merge', '-p', '{"data":{"greeting":"bonjour"}}']);
    // syncFrequency is 5 s in this cluster; upstream's default minute is the contract.
    await waitFor(() => sh('cat /etc/app/greeting') === 'bonjour', 30_000, 500, 'file updated');
  });

  test('a pod whose ConfigMap is missing waits in ContainerCreating with FailedMount, and starts once it exists', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'waits' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'c', image: APP_IMAGE, command: ['sleep', '3600'], volumeMounts: [{ name: 'v', mountPath: '/v' }] },
        ],
        volumes: [{ name: 'v', configMap: { name: 'later' } }],
      },
    });
    await waitFor(() => /FailedMount/.test(kubectl(['describe', 'pod', 'waits'])), 30_000, 500, 'FailedMount');
    assert.match(
      kubectl(['describe', 'pod', 'waits']),
      /MountVolume\.SetUp failed for volume "v" : configmap "later" not found/,
    );
    assert.match(kubectl(['get', 'pod', 'waits']), /ContainerCreating/);
    kubectl(['create', 'configmap', 'later', '--from-literal=k=v']);
    await waitFor(
      () => /Running/.test(kubectl(['get', 'pod', 'waits'])),
      90_000,
      500,
      'running after the ConfigMap appeared',
    );
  });

  test('resources become cgroup limits; securityContext sets user, group, capabilities and a read-only root', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'limited' },
      spec: {
        terminationGracePeriodSeconds: 1,
        // Pod-level user and group; the second container overrides them (containerd refuses a group without a user).
        securityContext: { runAsUser: 1000, runAsGroup: 3000 },
        containers: [
          {
            name: 'user',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            resources: { limits: { cpu: '250m', memory: '64Mi' } },
            securityContext: { readOnlyRootFilesystem: true },
          },
          {
            name: 'caps',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            securityContext: {
              runAsUser: 0,
              runAsGroup: 0,
              capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
            },
          },
        ],
      },
    });
    await waitFor(() => /2\/2\s+Running/.test(kubectl(['get', 'pod', 'limited'])), 60_000, 300, 'limited running');
    const sh = (c: string, cmd: string) => run(['exec', 'limited', '-c', c, '--', 'sh', '-c', cmd]);
    assert.equal(sh('user', 'id -u; id -g').stdout, '1000\n3000\n');
    assert.match(sh('user', 'touch /probe 2>&1; echo rc=$?').stdout, /Read-only file system[^]*rc=1/);
    // cgroup v2 inside the container's cgroup namespace (v1 paths as a fallback).
    const mem = sh(
      'user',
      'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes',
    ).stdout.trim();
    assert.equal(mem, String(64 * 1024 * 1024));
    const cpu = sh(
      'user',
      'cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"',
    ).stdout.trim();
    assert.equal(cpu, '25000 100000');
    // Only CAP_NET_BIND_SERVICE (bit 10) is left in the bounding and effective sets.
    const caps = sh('caps', 'grep -E "^Cap(Eff|Bnd)" /proc/self/status').stdout;
    assert.match(caps, /CapEff:\s+0000000000000400/);
    assert.match(caps, /CapBnd:\s+0000000000000400/);
  });

  test('deleting the deployment deletes its ReplicaSets and pods', async () => {
    kubectl(['delete', 'deployment', 'web']);
    await waitFor(
      () => kubectl(['get', 'rs,pods', '-l', 'app=web', '-o', 'name']).trim() === '',
      60_000,
      500,
      'all gone',
    );
  });

  test('kubectl create job runs to Complete (kubectl wait --for=condition=complete); an Indexed Job gives each pod its JOB_COMPLETION_INDEX; a failing one stops at its backoffLimit', async () => {
    assert.match(
      kubectl(['create', 'job', 'hello', `--image=${APP_IMAGE}`, '--', 'sh', '-c', 'echo hello from the job']),
      /job\.batch\/hello created/,
    );
    await waitFor(
      () =>
        kubectl(['get', 'job', 'hello', '-o', 'jsonpath={.status.conditions[?(@.type=="Complete")].status}']) ===
        'True',
      60_000,
      500,
      'job/hello Complete',
    );
    assert.match(
      cluster.kubectl(['wait', '--for=condition=complete', 'job/hello', '--timeout=20s']),
      /job\.batch\/hello condition met/,
    );
    assert.match(
      kubectl(['get', 'job', 'hello']),
      /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nhello\s+Complete\s+1\/1\s+\d+s\s+\d+s\n$/,
    );
    assert.equal(kubectl(['logs', 'job/hello']).trim(), 'hello from the job');
    assert.equal(
      kubectl([
        'get',
        'pods',
        '-l',
        'job-name=hello',
        '-o',
        'jsonpath={.items[*].status.phase} {.items[*].metadata.finalizers}',
      ]).trim(),
      'Succeeded',
      'counted: the tracking finalizer is gone',
    );
    cluster.apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'ix' },
      spec: {
        completions: 3,
        parallelism: 3,
        completionMode: 'Indexed',
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'c',
                image: APP_IMAGE,
                command: ['sh', '-c', 'echo index=$JOB_COMPLETION_INDEX host=$(hostname)'],
              },
            ],
          },
        },
      },
    });
    await waitFor(
      () => kubectl(['get', 'job', 'ix', '-o', 'jsonpath={.status.completedIndexes} {.status.succeeded}']) === '0-2 3',
      60_000,
      500,
      'the indexed job done',
    );
    const logs = kubectl(['get', 'pods', '-l', 'job-name=ix', '-o', 'name'])
      .trim()
      .split('\n')
      .map((p) => kubectl(['logs', p]).trim())
      .sort();
    assert.deepEqual(logs, ['index=0 host=ix-0', 'index=1 host=ix-1', 'index=2 host=ix-2']);
    cluster.apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'fails' },
      spec: {
        backoffLimit: 1,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'c', image: APP_IMAGE, command: ['sh', '-c', 'exit 3'] }],
          },
        },
      },
    });
    // Two failures (the first, and one retry after the 10 s backoff), then Failed.
    await waitFor(
      () =>
        kubectl([
          'get',
          'job',
          'fails',
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Failed")].reason} {.status.failed}',
        ]) === 'BackoffLimitExceeded 2',
      90_000,
      1000,
      'the failing job failed',
    );
    assert.match(
      kubectl(['get', 'events', '--field-selector', 'involvedObject.name=fails,reason=BackoffLimitExceeded']),
      /Job has reached the specified backoff limit/,
    );
    kubectl(['delete', 'job', 'hello', 'ix', 'fails']);
    await waitFor(
      () => kubectl(['get', 'pods', '-l', 'batch.kubernetes.io/controller-uid', '-o', 'name']).trim() === '',
      60_000,
      500,
      "the jobs' pods gone with them",
    );
  });

  test('kubectl create cronjob: a Job within the minute, Complete, listed in lastSuccessfulTime; kubectl create job --from=cronjob runs one now', async () => {
    assert.match(
      kubectl([
        'create',
        'cronjob',
        'tick',
        `--image=${APP_IMAGE}`,
        '--schedule=*/1 * * * *',
        '--',
        'sh',
        '-c',
        'echo tick',
      ]),
      /cronjob\.batch\/tick created/,
    );
    assert.match(
      kubectl(['get', 'cronjob', 'tick']),
      /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\ntick\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\d+s\n$/,
    );
    assert.match(kubectl(['create', 'job', 'now', '--from=cronjob/tick']), /job\.batch\/now created/);
    try {
      await waitFor(
        () =>
          kubectl(['get', 'job', 'now', '-o', 'jsonpath={.status.conditions[?(@.type=="Complete")].status}']) ===
          'True',
        60_000,
        500,
        'job/now Complete',
      );
    } catch (e) {
      throw new Error(
        `${(e as Error).message}\n${kubectl(['describe', 'job', 'now'])}\n${kubectl(['get', 'pods', '-o', 'wide'])}\n${kubectl(['get', 'events'])}`,
        { cause: e },
      );
    }
    assert.equal(kubectl(['logs', 'job/now']).trim(), 'tick');
    // The scheduled run: at the next minute boundary, then Complete and recorded as the last success.
    await waitFor(
      () => kubectl(['get', 'cronjob', 'tick', '-o', 'jsonpath={.status.lastSuccessfulTime}']) !== '',
      120_000,
      1000,
      'a scheduled job completed',
    );
    const scheduled = kubectl([
      'get',
      'jobs',
      '-o',
      'jsonpath={range .items[?(@.metadata.ownerReferences[0].kind=="CronJob")]}{.metadata.name} {end}',
    ])
      .trim()
      .split(' ');
    assert.ok(
      scheduled.some((n) => /^tick-\d+$/.test(n)),
      `a job named by its minute: ${scheduled.join(',')}`,
    );
    kubectl(['delete', 'cronjob', 'tick']);
    kubectl(['delete', 'job', 'now', '--ignore-not-found']);
    await waitFor(
      () => kubectl(['get', 'jobs', '-o', 'name']).trim() === '',
      60_000,
      500,
      "the cronjob's jobs gone with it",
    );
  });

  test('kubectl delete namespace: Terminating while its pods stop (no new content meanwhile), then gone with everything in it', async () => {
    kubectl(['create', 'namespace', 'doomed']);
    kubectl([
      '-n',
      'doomed',
      'create',
      'deployment',
      'app',
      `--image=${APP_IMAGE}`,
      '--',
      'sh',
      '-c',
      "trap 'sleep 3; exit 0' TERM; sleep 3600 & wait",
    ]);
    kubectl(['-n', 'doomed', 'create', 'configmap', 'cfg', '--from-literal=a=b']);
    await waitFor(
      () => kubectl(['-n', 'doomed', 'get', 'pods', '-o', 'jsonpath={.items[*].status.phase}']) === 'Running',
      60_000,
      500,
      'the pod running',
    );
    kubectl(['delete', 'namespace', 'doomed', '--wait=false']);
    assert.match(kubectl(['get', 'namespace', 'doomed']), /doomed\s+Terminating/);
    const refused = run(['-n', 'doomed', 'create', 'configmap', 'late', '--from-literal=a=b']);
    assert.match(
      refused.stderr,
      /configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated/,
    );
    await waitFor(
      () =>
        /NamespaceContentRemaining/.test(
          kubectl(['get', 'namespace', 'doomed', '-o', 'jsonpath={.status.conditions[*].type}']),
        ),
      30_000,
      300,
      'deletion conditions',
    );
    await waitFor(() => cluster.gone(['get', 'namespace', 'doomed']), 90_000, 500, 'the namespace gone');
    assert.match(
      run(['delete', 'namespace', 'default']).stderr,
      /namespaces "default" is forbidden: this namespace may not be deleted/,
    );
  });

  test('a DaemonSet: one pod on the node (node affinity, daemon tolerations), rollout status|history|undo through ControllerRevisions, kubectl drain needs --ignore-daemonsets', async () => {
    const node = cluster.node.name;
    const sleeper = ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"];
    // A node not yet Ready has the not-ready NoSchedule taint, which daemon pods do not tolerate (as upstream).
    await waitFor(
      () =>
        kubectl([
          'get',
          'node',
          node,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.taints}',
        ]).trim() === 'True',
      60_000,
      500,
      'node Ready and untainted',
    );
    cluster.apply({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'c', image: APP_IMAGE, command: sleeper }] },
        },
      },
    });
    assert.match(
      cluster.kubectl(['rollout', 'status', 'ds/agent', '--timeout=90s'], undefined, 100_000),
      /daemon set "agent" successfully rolled out/,
    );
    assert.match(
      kubectl(['get', 'ds', 'agent']),
      /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\nagent\s+1\s+1\s+1\s+1\s+1\s+<none>\s+\d+s\n$/,
    );
    const pod = JSON.parse(kubectl(['get', 'pods', '-l', 'app=agent', '-o', 'json'])).items[0];
    assert.equal(pod.spec.nodeName, node);
    assert.deepEqual(pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, [
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] },
    ]);
    assert.ok(
      pod.spec.tolerations.some(
        (t: { key?: string; effect?: string }) =>
          t.key === 'node.kubernetes.io/unschedulable' && t.effect === 'NoSchedule',
      ),
    );
    assert.equal(pod.metadata.labels['pod-template-generation'], '1');

    kubectl(['set', 'image', 'ds/agent', `c=${APP2}`]);
    assert.match(
      cluster.kubectl(['rollout', 'status', 'ds/agent', '--timeout=90s'], undefined, 100_000),
      /successfully rolled out/,
    );
    assert.equal(
      kubectl([
        'get',
        'pods',
        '-l',
        'app=agent',
        '--field-selector=status.phase=Running',
        '-o',
        'jsonpath={.items[*].spec.containers[0].image}',
      ]),
      APP2,
    );
    assert.match(kubectl(['rollout', 'history', 'ds/agent']), /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    assert.match(kubectl(['rollout', 'undo', 'ds/agent']), /daemonset\.apps\/agent rolled back/);
    assert.match(
      cluster.kubectl(['rollout', 'status', 'ds/agent', '--timeout=90s'], undefined, 100_000),
      /successfully rolled out/,
    );
    await waitFor(
      () =>
        kubectl(['get', 'pods', '-l', 'app=agent', '-o', 'jsonpath={.items[*].spec.containers[0].image}']) ===
        APP_IMAGE,
      60_000,
      500,
      'back on the first image',
    );
    assert.match(
      kubectl(['get', 'controllerrevisions']),
      /NAME\s+CONTROLLER\s+REVISION\s+AGE\nagent-\w+\s+daemonset\.apps\/agent\s+\d\s+\d+s\nagent-\w+\s+daemonset\.apps\/agent\s+\d\s+\d+s\n$/,
    );
    assert.match(kubectl(['rollout', 'history', 'ds/agent']), /\n2\s+<none>\n3\s+<none>/, 'revision 1 came back as 3');

    const refused = run(['drain', node, '--pod-selector=app=agent', '--timeout=20s'], 40_000);
    assert.notEqual(refused.status, 0);
    assert.match(
      refused.stderr,
      /cannot delete DaemonSet-managed Pods \(use --ignore-daemonsets to ignore\): default\/agent-\w+/,
    );
    const drained = run(['drain', node, '--pod-selector=app=agent', '--ignore-daemonsets', '--timeout=20s'], 40_000);
    assert.equal(drained.status, 0, drained.stderr);
    assert.match(drained.stderr + drained.stdout, /Warning: ignoring DaemonSet-managed Pods: default\/agent-\w+/);
    assert.match(drained.stdout, new RegExp(`node/${node} drained`));
    assert.equal(
      kubectl(['get', 'pods', '-l', 'app=agent', '-o', 'jsonpath={.items[*].status.phase}']),
      'Running',
      'the daemon pod stays on the cordoned node',
    );
    kubectl(['uncordon', node]);
    kubectl(['delete', 'ds', 'agent']);
    await waitFor(
      () => kubectl(['get', 'pods,controllerrevisions', '-l', 'app=agent', '-o', 'name']).trim() === '',
      60_000,
      500,
      'pods and revisions gone with it',
    );
  });

  test('a StatefulSet of 3 behind a headless Service: web-0, web-1, web-2 in order, each Ready before the next, with stable hostnames and local-path volumes that outlive their pods; scale down from the top; rolling update', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web-hl' },
      spec: { clusterIP: 'None', selector: { app: 'sts' }, ports: [{ name: 'http', port: 80 }] },
    });
    cluster.apply({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'web' },
      spec: {
        serviceName: 'web-hl',
        replicas: 3,
        selector: { matchLabels: { app: 'sts' } },
        template: {
          metadata: { labels: { app: 'sts' } },
          spec: {
            terminationGracePeriodSeconds: 5,
            containers: [
              {
                name: 'c',
                image: APP_IMAGE,
                command: ['sh', '-c', "hostname >> /data/log; trap 'exit 0' TERM; sleep 3600 & wait"],
                readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } },
          },
        ],
      },
    });
    try {
      assert.match(
        cluster.kubectl(['rollout', 'status', 'sts/web', '--timeout=120s'], undefined, 130_000),
        /partitioned roll out complete: 3 new pods have been updated/,
      );
    } catch (e) {
      throw new Error(
        `${(e as Error).message}\n${kubectl(['get', 'pods,pvc,pv', '-o', 'wide'])}\n${kubectl(['get', 'events'])}`,
        { cause: e },
      );
    }
    assert.match(kubectl(['get', 'sts', 'web']), /^NAME\s+READY\s+AGE\nweb\s+3\/3\s+\d+s\n$/);
    const pods = JSON.parse(kubectl(['get', 'pods', '-l', 'app=sts', '-o', 'json'])).items.sort(
      (a: { metadata: { name: string } }, b: { metadata: { name: string } }) =>
        a.metadata.name.localeCompare(b.metadata.name),
    );
    assert.deepEqual(
      pods.map((p: { metadata: { name: string } }) => p.metadata.name),
      ['web-0', 'web-1', 'web-2'],
    );
    const readyAt = (p: { status: { conditions: { type: string; lastTransitionTime: string }[] } }) =>
      Date.parse(p.status.conditions.find((c) => c.type === 'Ready')!.lastTransitionTime);
    for (let i = 1; i < 3; i++)
      assert.ok(
        Date.parse(pods[i].metadata.creationTimestamp) >= readyAt(pods[i - 1]) - 1000,
        `web-${i} made after web-${i - 1} was Ready`,
      );
    assert.equal(pods[1].metadata.labels['statefulset.kubernetes.io/pod-name'], 'web-1');
    assert.equal(run(['exec', 'web-1', '--', 'hostname']).stdout.trim(), 'web-1');
    assert.deepEqual([pods[1].spec.hostname, pods[1].spec.subdomain], ['web-1', 'web-hl']);
    assert.match(
      kubectl(['get', 'pvc']),
      /data-web-0\s+Bound\s+pvc-[\w-]+\s+10Mi\s+RWO\s+local-path\s+<unset>\s+\d+s\ndata-web-1\s+Bound/,
    );
    assert.match(
      kubectl(['get', 'storageclass']),
      /local-path \(default\)\s+rancher\.io\/local-path\s+Delete\s+WaitForFirstConsumer\s+false/,
    );
    // The volume outlives its pod: web-1 made again finds what it wrote.
    kubectl(['delete', 'pod', 'web-1']);
    await waitFor(
      () =>
        kubectl([
          'get',
          'pod',
          'web-1',
          '-o',
          'jsonpath={.metadata.uid} {.status.conditions[?(@.type=="Ready")].status}',
        ]).startsWith(pods[1].metadata.uid) === false &&
        / True$/.test(
          kubectl([
            'get',
            'pod',
            'web-1',
            '-o',
            'jsonpath={.metadata.uid} {.status.conditions[?(@.type=="Ready")].status}',
          ]),
        ),
      90_000,
      500,
      'web-1 back',
    );
    assert.equal(run(['exec', 'web-1', '--', 'cat', '/data/log']).stdout, 'web-1\nweb-1\n');

    kubectl(['scale', 'sts', 'web', '--replicas=2']);
    await waitFor(
      () => kubectl(['get', 'pods', '-l', 'app=sts', '-o', 'jsonpath={.items[*].metadata.name}']) === 'web-0 web-1',
      60_000,
      500,
      'web-2 gone',
    );
    kubectl(['set', 'image', 'sts/web', `c=${APP2}`]);
    assert.match(
      cluster.kubectl(['rollout', 'status', 'sts/web', '--timeout=120s'], undefined, 130_000),
      /partitioned roll out complete: 2 new pods have been updated/,
    );
    assert.equal(
      kubectl(['get', 'pods', '-l', 'app=sts', '-o', 'jsonpath={.items[*].spec.containers[0].image}']),
      `${APP2} ${APP2}`,
    );
    const deletes = kubectl([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=web,reason=SuccessfulDelete',
      '--sort-by=.lastTimestamp',
      '-o',
      'jsonpath={range .items[*]}{.message}{"\\n"}{end}',
    ])
      .trim()
      .split('\n');
    assert.deepEqual(
      deletes,
      [
        'delete Pod web-2 in StatefulSet web successful',
        'delete Pod web-1 in StatefulSet web successful',
        'delete Pod web-0 in StatefulSet web successful',
      ],
      'scale down, then the update from the top',
    );
    kubectl(['delete', 'sts', 'web']);
    kubectl(['delete', 'svc', 'web-hl']);
    await waitFor(
      () => kubectl(['get', 'pods', '-l', 'app=sts', '-o', 'name']).trim() === '',
      60_000,
      500,
      'the pods gone with it',
    );
    assert.equal(
      kubectl(['get', 'pvc', '-o', 'name']).trim().split('\n').length,
      3,
      'claims are retained (whenDeleted: Retain)',
    );
    kubectl(['delete', 'pvc', '-l', 'app=sts']);
    await waitFor(
      () => kubectl(['get', 'pv', '-o', 'name']).trim() === '',
      60_000,
      500,
      'their provisioned volumes deleted',
    );
  });

  test('fsGroup owns an emptyDir (setgid, files inherit the group); subPathExpr mounts the directory named by the pod', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'owned' },
      spec: {
        terminationGracePeriodSeconds: 1,
        securityContext: { fsGroup: 3456 },
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sh', '-c', 'echo hi > /mine/f; sleep 3600'],
            env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            volumeMounts: [
              { name: 'scratch', mountPath: '/all' },
              { name: 'scratch', mountPath: '/mine', subPathExpr: '$(POD_NAME)' },
            ],
          },
        ],
      },
    });
    await waitFor(
      () => kubectl(['get', 'pod', 'owned', '-o', 'jsonpath={.status.phase}']) === 'Running',
      60_000,
      500,
      'owned running',
    );
    const out = await waitFor(
      () => {
        const r = run([
          'exec',
          'owned',
          '--',
          'sh',
          '-c',
          'stat -c "%g %a" /all; cat /all/owned/f; stat -c %g /all/owned/f',
        ]);
        return r.status === 0 && r.stdout.includes('hi') ? r.stdout : undefined;
      },
      30_000,
      500,
      'the file written through the subPathExpr mount',
    );
    assert.equal(out, '3456 2777\nhi\n3456\n');
    kubectl(['delete', 'pod', 'owned', '--wait=false']);
  });

  test("kubectl create quota and a LimitRange: defaults set on pods, the pod past the quota refused with upstream's message, kubectl get quota shows use", async () => {
    kubectl(['create', 'namespace', 'quota-ns']);
    assert.match(
      kubectl(['-n', 'quota-ns', 'create', 'quota', 'q', '--hard=pods=1,requests.cpu=1']),
      /resourcequota\/q created/,
    );
    cluster.apply({
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults', namespace: 'quota-ns' },
      spec: { limits: [{ type: 'Container', default: { cpu: '200m' }, defaultRequest: { cpu: '100m' } }] },
    });
    kubectl(['-n', 'quota-ns', 'run', 'a', `--image=${APP_IMAGE}`, '--restart=Never', '--', 'sleep', '3600']);
    assert.equal(
      kubectl([
        '-n',
        'quota-ns',
        'get',
        'pod',
        'a',
        '-o',
        'jsonpath={.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.limits.cpu}',
      ]),
      '100m 200m',
    );
    const refused = run([
      '-n',
      'quota-ns',
      'run',
      'b',
      `--image=${APP_IMAGE}`,
      '--restart=Never',
      '--',
      'sleep',
      '3600',
    ]);
    assert.notEqual(refused.status, 0);
    assert.match(
      refused.stderr,
      /pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1/,
    );
    await waitFor(
      () =>
        /^NAME\s+AGE\s+REQUEST\s+LIMIT\nq\s+\d+s\s+pods: 1\/1, requests.cpu: 100m\/1\s*\n$/.test(
          kubectl(['-n', 'quota-ns', 'get', 'quota']),
        ),
      30_000,
      500,
      'kubectl get quota shows the use',
    );
    kubectl(['delete', 'namespace', 'quota-ns', '--wait=false']);
  });

  test('kubectl drain: evictions honour a PodDisruptionBudget (blocked at the budget, 429 retried), then go through once it allows; uncordon', async () => {
    const node = cluster.node.name;
    kubectl([
      'create',
      'deployment',
      'drainme',
      `--image=${APP_IMAGE}`,
      '--replicas=3',
      '--',
      'sh',
      '-c',
      "trap 'exit 0' TERM; sleep 3600 & wait",
    ]);
    await waitFor(
      () => kubectl(['get', 'deployment', 'drainme', '-o', 'jsonpath={.status.readyReplicas}']) === '3',
      90_000,
      500,
      'three ready replicas',
    );
    kubectl(['create', 'poddisruptionbudget', 'drainme', '--selector=app=drainme', '--min-available=2']);
    await waitFor(
      () => /drainme\s+2\s+N\/A\s+1\s/.test(kubectl(['get', 'pdb', 'drainme'])),
      30_000,
      300,
      'the budget allows one disruption',
    );
    const blocked = run(
      ['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--pod-selector=app=drainme', '--timeout=15s'],
      60_000,
    );
    assert.notEqual(blocked.status, 0, `drain should stop at the budget: ${blocked.stdout}`);
    assert.match(blocked.stdout, new RegExp(`node/${node} cordoned`));
    assert.match(blocked.stderr, /Cannot evict pod as it would violate the pod's disruption budget/);
    assert.match(blocked.stdout, /pod\/drainme-[\w-]+ evicted/, 'one pod went within the budget');
    assert.match(kubectl(['get', 'node', node]), /SchedulingDisabled/);
    kubectl(['patch', 'pdb', 'drainme', '--type=merge', '-p', '{"spec":{"minAvailable":0}}']);
    await waitFor(
      () => /drainme\s+0\s+N\/A\s+[1-9]/.test(kubectl(['get', 'pdb', 'drainme'])),
      30_000,
      300,
      'the budget allows the rest',
    );
    const done = run(
      ['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--pod-selector=app=drainme', '--timeout=60s'],
      90_000,
    );
    assert.equal(done.status, 0, done.stderr);
    assert.match(done.stdout, new RegExp(`node/${node} drained`));
    assert.equal(
      kubectl(['get', 'pods', '-l', 'app=drainme', '--field-selector=status.phase=Running', '-o', 'name']).trim(),
      '',
      'no drainme pod runs on the cordoned node',
    );
    kubectl(['uncordon', node]);
    await waitFor(
      () => kubectl(['get', 'deployment', 'drainme', '-o', 'jsonpath={.status.readyReplicas}']) === '3',
      90_000,
      500,
      'back to three after uncordon',
    );
    kubectl(['delete', 'deployment', 'drainme']);
    kubectl(['delete', 'pdb', 'drainme']);
  });

  test('what charts install: kubectl create ingress and priorityclass; a pod gets its priority from its class', async () => {
    assert.match(
      kubectl(['create', 'ingress', 'web', '--class=nginx', '--rule=a.example/=web:80']),
      /ingress\.networking\.k8s\.io\/web created/,
    );
    assert.match(
      kubectl(['get', 'ingress', 'web']),
      /^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE\nweb\s+nginx\s+a\.example\s+80\s+\d+s\n$/,
    );
    assert.match(
      kubectl(['create', 'priorityclass', 'high', '--value=1000', '--description=important']),
      /priorityclass\.scheduling\.k8s\.io\/high created/,
    );
    assert.match(kubectl(['get', 'priorityclass']), /system-node-critical\s+2000001000\s+false/);
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'prio' },
      spec: {
        priorityClassName: 'high',
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
      },
    });
    assert.equal(
      kubectl(['get', 'pod', 'prio', '-o', 'jsonpath={.spec.priority} {.spec.preemptionPolicy}']),
      '1000 PreemptLowerPriority',
    );
    kubectl(['delete', 'pod', 'prio', '--wait=false']);
    kubectl(['delete', 'ingress', 'web']);
    kubectl(['delete', 'priorityclass', 'high']);
  });
  test('preemption: a high-priority pod that does not fit evicts a lower-priority one (Preempted) and runs in its place', async () => {
    const cpu = kubectl(['get', 'node', cluster.node.name, '-o', 'jsonpath={.status.allocatable.cpu}']);
    const milli = cpu.endsWith('m') ? Number(cpu.slice(0, -1)) : Number(cpu) * 1000;
    kubectl(['create', 'priorityclass', 'bulk', '--value=10']);
    kubectl(['create', 'priorityclass', 'urgent', '--value=100000']);
    const sleeper = (name: string, cls: string, m: number) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        priorityClassName: cls,
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'c', image: APP_IMAGE, command: ['sleep', '3600'], resources: { requests: { cpu: `${m}m` } } },
        ],
      },
    });
    cluster.apply(sleeper('bulk', 'bulk', Math.floor(milli * 0.7)));
    await waitFor(
      () => kubectl(['get', 'pod', 'bulk', '-o', 'jsonpath={.status.phase}']) === 'Running',
      60_000,
      500,
      'bulk running',
    );
    cluster.apply(sleeper('urgent', 'urgent', Math.floor(milli * 0.5)));
    await waitFor(
      () => kubectl(['get', 'pod', 'urgent', '-o', 'jsonpath={.status.phase}']) === 'Running',
      90_000,
      500,
      "urgent running in bulk's place",
    );
    assert.match(
      kubectl([
        'get',
        'events',
        '--field-selector',
        'involvedObject.name=bulk,reason=Preempted',
        '-o',
        'jsonpath={.items[*].message}',
      ]),
      /^Preempted by pod [\w-]+ on node /,
    );
    kubectl(['delete', 'pod', 'urgent', '--wait=false']);
    kubectl(['delete', 'priorityclass', 'bulk', 'urgent']);
  });
});
