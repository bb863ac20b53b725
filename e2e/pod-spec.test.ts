// e2e: the rest of the pod spec on real containers, seen through the
// real kubectl: postStart and preStop hooks (observed through a hostPath file),
// termination messages from the file and from the log, and a container its
// liveness probe keeps killing backing off as a crash does; native sidecars,
// readiness gates, sysctls and seccomp, kubectl debug; the pod's resolv.conf
// from dnsPolicy, clusterDNS and dnsConfig.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { registryConfig } from '../cli/containerd-config.js';
import { pushImage } from '../images/build.js';
import { clusterSkip, TestCluster } from './cluster.js';
import { ALT_RUNTIME_HANDLER, APP_IMAGE, builtImages, e2eSkipReason } from './harness.js';
import { sh, start, stopPid, waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());
const AUTH_REGISTRY = '127.0.0.1:5001';

describe('pod spec: hooks, termination messages, liveness backoff', { skip, timeout: 8 * 60_000 }, () => {
  // The node's resolver file, as --resolv-conf: what Default pods copy and ClusterFirst pods append the search path of.
  const resolv = path.join(os.tmpdir(), `tskube-e2e-resolv-${process.pid}.conf`);
  fs.writeFileSync(resolv, 'nameserver 192.0.2.53\nsearch corp.example\noptions timeout:2\n');
  const cluster = new TestCluster({
    kubeletFlags: ['--cluster-dns=10.96.0.10', '--cluster-domain=cluster.local', `--resolv-conf=${resolv}`],
  });
  before(() => cluster.start());
  after(async () => {
    await cluster.cleanup();
    fs.rmSync(resolv, { force: true });
  });
  const get = (name: string, jsonpath: string): string =>
    cluster.kubectl(['get', 'pod', name, '-o', `jsonpath=${jsonpath}`]);

  test('postStart and preStop hooks run in the container: the hostPath file shows start, hook, then preStop before the container stops', async () => {
    const dir = path.join(cluster.node.dir, 'hooks');
    fs.mkdirSync(dir, { recursive: true });
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hooks' },
      spec: {
        terminationGracePeriodSeconds: 10,
        volumes: [{ name: 'out', hostPath: { path: dir } }],
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: [
              'sh',
              '-c',
              'echo main >> /out/log; trap "echo term >> /out/log; exit 0" TERM; while true; do sleep 1; done',
            ],
            volumeMounts: [{ name: 'out', mountPath: '/out' }],
            lifecycle: {
              postStart: { exec: { command: ['sh', '-c', 'echo poststart >> /out/log'] } },
              preStop: { exec: { command: ['sh', '-c', 'echo prestop >> /out/log'] } },
            },
          },
        ],
      },
    });
    await waitFor(
      () =>
        /Running/.test(get('hooks', '{.status.phase}')) &&
        fs.existsSync(path.join(dir, 'log')) &&
        fs.readFileSync(path.join(dir, 'log'), 'utf8').includes('poststart'),
      60_000,
      300,
      'poststart hook',
    );
    cluster.kubectl(['delete', 'pod', 'hooks', '--wait=true', '--timeout=60s']);
    const lines = fs.readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.filter((l) => l !== 'main'),
      ['poststart', 'prestop', 'term'],
      'postStart, then preStop, then SIGTERM',
    );
  });

  test('a native sidecar starts first (its startup probe holds the app back), the pod reaches 2/2 Ready, a crashed sidecar comes back, and the sidecar stops last', async () => {
    const dir = path.join(cluster.node.dir, 'sidecar');
    fs.mkdirSync(dir, { recursive: true });
    const loop = (name: string) =>
      `echo start ${name} >> /out/log; trap "echo stop ${name} >> /out/log; exit 0" TERM; while true; do sleep 1; done`;
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sidecar' },
      spec: {
        terminationGracePeriodSeconds: 10,
        volumes: [{ name: 'out', hostPath: { path: dir } }],
        initContainers: [
          {
            name: 'proxy',
            image: APP_IMAGE,
            restartPolicy: 'Always',
            command: ['sh', '-c', loop('proxy')],
            volumeMounts: [{ name: 'out', mountPath: '/out' }],
            startupProbe: {
              exec: { command: ['sh', '-c', 'test -e /tmp/up || { touch /tmp/up; false; }'] },
              periodSeconds: 1,
              failureThreshold: 30,
            },
            readinessProbe: { exec: { command: ['true'] }, periodSeconds: 1 },
          },
        ],
        containers: [
          {
            name: 'app',
            image: APP_IMAGE,
            command: ['sh', '-c', loop('app')],
            volumeMounts: [{ name: 'out', mountPath: '/out' }],
          },
        ],
      },
    });
    await waitFor(
      () => cluster.kubectl(['get', 'pod', 'sidecar', '--no-headers']).split(/\s+/)[1] === '2/2',
      90_000,
      500,
      'sidecar pod 2/2',
    );
    assert.equal(
      get(
        'sidecar',
        '{.status.phase} {.status.initContainerStatuses[0].started} {.status.initContainerStatuses[0].ready}',
      ),
      'Running true true',
    );
    const first = fs.readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n');
    assert.deepEqual(first.slice(0, 2), ['start proxy', 'start app'], "the app waits for the sidecar's startup probe");
    // The sidecar exits: restarted in place, the app untouched.
    const appID = get('sidecar', '{.status.containerStatuses[0].containerID}');
    cluster.kubectl(['exec', 'sidecar', '-c', 'proxy', '--', 'sh', '-c', 'kill 1']);
    await waitFor(
      () =>
        get('sidecar', '{.status.initContainerStatuses[0].restartCount}') === '1' &&
        get('sidecar', '{.status.initContainerStatuses[0].ready}') === 'true',
      60_000,
      500,
      'sidecar restarted',
    );
    assert.equal(
      get('sidecar', '{.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}'),
      `${appID} 0`,
    );
    cluster.kubectl(['delete', 'pod', 'sidecar', '--wait=true', '--timeout=60s']);
    const lines = fs.readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n');
    assert.deepEqual(
      lines.slice(-2),
      ['stop app', 'stop proxy'],
      `the sidecar stops after the app:\n${lines.join('\n')}`,
    );
  });

  test('a readiness gate holds Ready until its condition, patched into the status by someone else, is True', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'gated' },
      spec: {
        terminationGracePeriodSeconds: 1,
        readinessGates: [{ conditionType: 'example.com/lb-ready' }],
        containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
      },
    });
    const ready = () =>
      get(
        'gated',
        '{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason} {.status.conditions[?(@.type=="ContainersReady")].status}',
      );
    await waitFor(() => ready() === 'False ReadinessGatesNotReady True', 60_000, 500, 'containers ready, gate not');
    cluster.kubectl([
      'patch',
      'pod',
      'gated',
      '--subresource=status',
      '--type=strategic',
      '-p',
      JSON.stringify({ status: { conditions: [{ type: 'example.com/lb-ready', status: 'True' }] } }),
    ]);
    await waitFor(() => ready() === 'True  True', 30_000, 300, 'Ready once the gate is True');
    assert.equal(
      get('gated', '{.status.conditions[?(@.type=="example.com/lb-ready")].status}'),
      'True',
      'the kubelet kept the gate condition',
    );
    cluster.kubectl(['delete', 'pod', 'gated', '--wait=false']);
  });

  test("runtimeClassName: the pod runs under its RuntimeClass's containerd handler (its own runc root); a missing class is refused at admission", async () => {
    cluster.apply({
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'alt' },
      handler: ALT_RUNTIME_HANDLER,
    });
    assert.match(
      cluster.kubectl(['get', 'runtimeclass', 'alt']),
      new RegExp(`^NAME\\s+HANDLER\\s+AGE\\nalt\\s+${ALT_RUNTIME_HANDLER}\\s`),
    );
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'rc-alt' },
      spec: {
        terminationGracePeriodSeconds: 1,
        runtimeClassName: 'alt',
        containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
      },
    });
    await waitFor(
      () => get('rc-alt', '{.status.containerStatuses[0].ready}') === 'true',
      60_000,
      500,
      'the alt-handler pod ready',
    );
    const id = get('rc-alt', '{.status.containerStatuses[0].containerID}').replace('containerd://', '');
    const sandboxes = await cluster.node.cri.listPodSandbox({ label_selector: { 'io.kubernetes.pod.name': 'rc-alt' } });
    const st = await cluster.node.cri.podSandboxStatus(sandboxes[0]!.id);
    assert.equal(
      st.status?.runtime_handler,
      ALT_RUNTIME_HANDLER,
      "containerd ran the sandbox with the class's handler",
    );
    assert.ok(
      fs.readdirSync(path.join(cluster.node.altRuncRoot, 'k8s.io')).includes(id),
      "the container is in the alt runc's state root",
    );
    let refused = '';
    try {
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'rc-none' },
        spec: { runtimeClassName: 'nope', containers: [{ name: 'c', image: APP_IMAGE }] },
      });
    } catch (e) {
      refused = (e as Error).message;
    }
    assert.match(refused, /pods "rc-none" is forbidden: pod rejected: RuntimeClass "nope" not found/);
    cluster.kubectl(['delete', 'pod', 'rc-alt', '--wait=false']);
  });

  test("in-place resize (kubectl patch --subresource=resize): the running container's cgroup limits change without a restart; RestartContainer restarts it once; a memory limit cut without it is refused", async () => {
    const res = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'resize' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'c', image: APP_IMAGE, command: ['sleep', '3600'], resources: res },
          {
            name: 'm',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            resources: res,
            resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
          },
        ],
      },
    });
    await waitFor(
      () => get('resize', '{.status.containerStatuses[*].ready}') === 'true true',
      60_000,
      500,
      'both containers ready',
    );
    // The container's own CFS quota and period and memory limit, on cgroup v2 (cpu.max, memory.max) or v1.
    const script =
      'if [ -f /sys/fs/cgroup/cgroup.controllers ]; then p=$(sed -n "s/^0:://p" /proc/self/cgroup); cat /sys/fs/cgroup$p/cpu.max /sys/fs/cgroup$p/memory.max; ' +
      'else echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); cat /sys/fs/cgroup/memory/memory.limit_in_bytes; fi';
    const cg = (c: string): string =>
      cluster.kubectl(['exec', 'resize', '-c', c, '--', 'sh', '-c', script]).trim().split('\n').join(' ');
    assert.equal(cg('c'), '20000 100000 134217728');
    const idC = get('resize', '{.status.containerStatuses[0].containerID}');
    const patch = (c: string, r: object): string =>
      cluster.kubectl([
        'patch',
        'pod',
        'resize',
        '--subresource=resize',
        '-p',
        JSON.stringify({ spec: { containers: [{ name: c, resources: r }] } }),
      ]);
    assert.match(
      patch('c', { requests: { cpu: '150m' }, limits: { cpu: '300m', memory: '256Mi' } }),
      /pod\/resize patched/,
    );
    await waitFor(() => cg('c') === '30000 100000 268435456', 30_000, 500, "the new limits in the container's cgroup");
    await waitFor(
      () =>
        get(
          'resize',
          '{.status.containerStatuses[0].resources.limits.cpu} {.status.containerStatuses[0].resources.limits.memory} {.status.containerStatuses[0].resources.requests.cpu}',
        ) === '300m 256Mi 150m',
      30_000,
      500,
      'status.containerStatuses[].resources',
    );
    assert.equal(
      get('resize', '{.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}'),
      `${idC} 0`,
      'the same container, never restarted',
    );
    // Lowering a memory limit in place is refused (upstream 1.33); with RestartContainer the container restarts with it.
    let refused = '';
    try {
      patch('c', { limits: { memory: '200Mi' } });
    } catch (e) {
      refused = (e as Error).message;
    }
    assert.match(
      refused,
      /The Pod "resize" is invalid: spec\.containers\[0\]\.resources\.limits\[memory\]: Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer/,
    );
    patch('m', { limits: { memory: '96Mi' } });
    await waitFor(
      () =>
        get('resize', '{.status.containerStatuses[1].restartCount} {.status.containerStatuses[1].ready}') === '1 true',
      60_000,
      500,
      'm restarted once',
    );
    assert.equal(cg('m'), '20000 100000 100663296');
    assert.match(
      cluster.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=resize,reason=Killing']),
      /Container m resize requires restart/,
    );
    assert.equal(get('resize', '{.status.containerStatuses[0].restartCount}'), '0', 'c untouched');
    cluster.kubectl(['delete', 'pod', 'resize', '--wait=false']);
  });

  test("sysctls reach the pod's kernel namespace, an unsafe one fails the pod with SysctlForbidden; seccomp RuntimeDefault filters the container, Unconfined does not", async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sysctl-ok' },
      spec: {
        terminationGracePeriodSeconds: 1,
        securityContext: {
          sysctls: [{ name: 'net.ipv4.ip_local_port_range', value: '20000 30000' }],
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          { name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] },
          {
            name: 'free',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            securityContext: { seccompProfile: { type: 'Unconfined' } },
          },
        ],
      },
    });
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sysctl-bad' },
      spec: {
        securityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
        containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
      },
    });
    cluster.kubectl(['wait', '--for=condition=Ready', 'pod/sysctl-ok', '--timeout=60s']);
    assert.equal(
      cluster
        .kubectl(['exec', 'sysctl-ok', '-c', 'c', '--', 'cat', '/proc/sys/net/ipv4/ip_local_port_range'])
        .trim()
        .split(/\s+/)
        .join(' '),
      '20000 30000',
    );
    assert.match(
      cluster.kubectl(['exec', 'sysctl-ok', '-c', 'c', '--', 'grep', 'Seccomp:', '/proc/self/status']),
      /Seccomp:\s+2/,
    );
    assert.match(
      cluster.kubectl(['exec', 'sysctl-ok', '-c', 'free', '--', 'grep', 'Seccomp:', '/proc/self/status']),
      /Seccomp:\s+0/,
    );
    await waitFor(
      () => get('sysctl-bad', '{.status.phase}') === 'Failed',
      60_000,
      500,
      'the unsafe sysctl pod rejected',
    );
    assert.equal(
      get('sysctl-bad', '{.status.reason}|{.status.message}'),
      'SysctlForbidden|Pod was rejected: forbidden sysctl: "net.core.somaxconn" not allowlisted',
    );
    assert.match(
      cluster.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=sysctl-bad,reason=SysctlForbidden']),
      /forbidden sysctl/,
    );
    cluster.kubectl(['delete', 'pod', 'sysctl-ok', 'sysctl-bad', '--wait=false']);
  });

  test("kubectl debug adds an ephemeral container that shares the target's process namespace; its status is reported and the pod is not restarted", async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'debugme' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'app', image: APP_IMAGE, command: ['sh', '-c', 'exec sleep 3601'] }],
      },
    });
    cluster.kubectl(['wait', '--for=condition=Ready', 'pod/debugme', '--timeout=60s']);
    const appID = get('debugme', '{.status.containerStatuses[0].containerID}');
    assert.match(
      cluster.kubectl([
        'debug',
        'pod/debugme',
        `--image=${APP_IMAGE}`,
        '--target=app',
        '--container=dbg',
        '--',
        'sh',
        '-c',
        'ps',
      ]),
      /Targeting container "app"/,
    );
    await waitFor(
      () =>
        get(
          'debugme',
          '{.status.ephemeralContainerStatuses[0].name} {.status.ephemeralContainerStatuses[0].state.terminated.reason}',
        ) === 'dbg Completed',
      30_000,
      500,
      'ephemeral container status',
    );
    const out = cluster.kubectl(['logs', 'debugme', '-c', 'dbg']);
    assert.match(out, /sleep 3601/, `the target's processes are visible:\n${out}`);
    assert.equal(get('debugme', '{.spec.ephemeralContainers[0].targetContainerName}'), 'app');
    await new Promise((r) => setTimeout(r, 3000)); // a few syncs: the finished debug container is not started again
    assert.equal(
      get(
        'debugme',
        '{.status.ephemeralContainerStatuses[0].restartCount} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount}',
      ),
      `0 ${appID} 0`,
    );
    cluster.kubectl(['delete', 'pod', 'debugme', '--wait=false']);
  });

  test('a failing postStart hook kills the container with a FailedPostStartHook event', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'badhook' },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 7'] } } },
          },
        ],
      },
    });
    await waitFor(
      () =>
        /FailedPostStartHook/.test(
          cluster.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=badhook']),
        ),
      60_000,
      500,
      'FailedPostStartHook',
    );
    await waitFor(
      () => get('badhook', '{.status.containerStatuses[0].state.terminated.reason}'),
      60_000,
      500,
      'container stopped',
    );
  });

  test('termination messages: from terminationMessagePath, and from the log with FallbackToLogsOnError', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'msg' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'c', image: APP_IMAGE, command: ['sh', '-c', 'echo "disk full" > /dev/termination-log; exit 3'] },
        ],
      },
    });
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'logmsg' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            terminationMessagePolicy: 'FallbackToLogsOnError',
            command: ['sh', '-c', 'for i in $(seq 1 100); do echo line $i; done; exit 1'],
          },
        ],
      },
    });
    await waitFor(
      () => get('msg', '{.status.containerStatuses[0].state.terminated.message}'),
      60_000,
      500,
      'termination message',
    );
    assert.equal(get('msg', '{.status.containerStatuses[0].state.terminated.message}'), 'disk full\n');
    assert.equal(get('msg', '{.status.containerStatuses[0].state.terminated.exitCode}'), '3');
    await waitFor(
      () => get('logmsg', '{.status.containerStatuses[0].state.terminated.message}'),
      60_000,
      500,
      'log fallback message',
    );
    const m = get('logmsg', '{.status.containerStatuses[0].state.terminated.message}');
    assert.ok(m.endsWith('line 100\n') && !m.includes('line 20\n'), m.slice(-60));
  });

  test('a container its liveness probe keeps killing restarts at most a few times a minute, with BackOff events', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'loop' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['sleep', '3600'],
            livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
      },
    });
    await waitFor(
      () =>
        /BackOff/.test(
          cluster.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=loop,reason=BackOff']),
        ),
      90_000,
      500,
      'BackOff event',
    );
    await new Promise((r) => setTimeout(r, 15_000));
    const restarts = Number(get('loop', '{.status.containerStatuses[0].restartCount}'));
    assert.ok(restarts <= 4, `${restarts} restarts`);
  });

  test('activeDeadlineSeconds ends the pod: Failed with DeadlineExceeded; runAsNonRoot on a root image is CreateContainerConfigError', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'deadline' },
      spec: {
        activeDeadlineSeconds: 3,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
      },
    });
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'nonroot' },
      spec: {
        securityContext: { runAsNonRoot: true },
        containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
      },
    });
    await waitFor(
      () => get('deadline', '{.status.phase}/{.status.reason}') === 'Failed/DeadlineExceeded',
      60_000,
      500,
      'DeadlineExceeded',
    );
    assert.equal(get('deadline', '{.status.message}'), 'Pod was active on the node longer than the specified deadline');
    assert.match(cluster.kubectl(['get', 'pod', 'deadline']), /deadline\s+0\/1\s+/);
    await waitFor(
      () => get('nonroot', '{.status.containerStatuses[0].state.waiting.reason}') === 'CreateContainerConfigError',
      60_000,
      500,
      'CreateContainerConfigError',
    );
    assert.match(
      get('nonroot', '{.status.containerStatuses[0].state.waiting.message}'),
      /^container has runAsNonRoot and image will run as root \(pod: "nonroot_default\(.+\)", container: c\)$/,
    );
  });

  test('an image behind registry basic auth is pulled with an imagePullSecret, and refused without it', async () => {
    const d = path.join(cluster.node.dir, 'authreg');
    fs.mkdirSync(path.join(d, 'data'), { recursive: true });
    const hash = sh('/usr/bin/python3', [
      '-c',
      'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH)))',
    ]).trim();
    fs.writeFileSync(path.join(d, 'htpasswd'), `alice:${hash}\n`);
    fs.writeFileSync(
      path.join(d, 'registry.yml'),
      `${registryConfig(path.join(d, 'data'), AUTH_REGISTRY)}auth:\n  htpasswd:\n    realm: tskube\n    path: ${path.join(d, 'htpasswd')}\n`,
    );
    const reg = start('docker-registry', ['serve', path.join(d, 'registry.yml')], path.join(d, 'registry.log'), {
      netns: cluster.node.netns,
    });
    try {
      await waitFor(
        () =>
          sh('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://${AUTH_REGISTRY}/v2/`], {
            netns: cluster.node.netns,
            allowFail: true,
          }) === '401',
        20_000,
        200,
        'auth registry',
      );
      const certs = path.join(cluster.node.dir, 'certs.d', AUTH_REGISTRY);
      fs.mkdirSync(certs, { recursive: true });
      fs.writeFileSync(
        path.join(certs, 'hosts.toml'),
        `server = "http://${AUTH_REGISTRY}"\n\n[host."http://${AUTH_REGISTRY}"]\n  capabilities = ["pull", "resolve"]\n`,
      );
      const app = (await builtImages()).find((i) => i.name === 'tskube/app')!;
      pushImage(app, AUTH_REGISTRY, `/run/netns/${cluster.node.netns}`, 'alice:s3cret');
      const image = `${AUTH_REGISTRY}/tskube/app:${app.tag}`;
      cluster.kubectl([
        'create',
        'secret',
        'docker-registry',
        'regcred',
        `--docker-server=${AUTH_REGISTRY}`,
        '--docker-username=alice',
        '--docker-password=s3cret',
      ]);
      // Always: a node that has the image already would otherwise run it without asking the registry (as upstream).
      const p = (name: string, secrets: object[]) =>
        cluster.apply({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: {
            imagePullSecrets: secrets,
            terminationGracePeriodSeconds: 1,
            containers: [{ name: 'c', image, imagePullPolicy: 'Always', command: ['sleep', '3600'] }],
          },
        });
      p('anon', []);
      p('withsecret', [{ name: 'regcred' }]);
      await waitFor(
        () => get('withsecret', '{.status.phase}') === 'Running',
        60_000,
        500,
        'pulled with the secret',
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}: ${get('withsecret', '{.status.containerStatuses[0].state}')} ${cluster.kubectl(['get', 'events', '--field-selector', 'involvedObject.name=withsecret'])}`,
        );
      });
      // Refused without it: ErrImagePull or ImagePullBackOff, whose message carries the registry's 401.
      await waitFor(
        () =>
          /ErrImagePull|ImagePullBackOff/.test(get('anon', '{.status.containerStatuses[0].state.waiting.reason}')) &&
          /401|unauthorized/i.test(get('anon', '{.status.containerStatuses[0].state.waiting.message}')),
        60_000,
        500,
        'refused without it',
      ).catch((e: Error) => {
        throw new Error(`${e.message}: ${get('anon', '{.status.containerStatuses[0].state}')}`);
      });
      assert.notEqual(get('anon', '{.status.phase}'), 'Running');
    } finally {
      await stopPid(reg.pid, 5000);
    }
  });
  test("pod DNS: ClusterFirst gets clusterDNS, the cluster search path and ndots:5; Default the node's resolver; None only its dnsConfig; /etc/hosts is the kubelet's, with hostAliases", async () => {
    const pod = (name: string, spec: Record<string, unknown>) =>
      cluster.apply({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: APP_IMAGE, command: ['sleep', '3600'] }],
          ...spec,
        },
      });
    pod('dns-cluster', {});
    pod('dns-default', { dnsPolicy: 'Default' });
    pod('dns-none', {
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: ['1.1.1.1'],
        searches: ['my.dns.search.suffix'],
        options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
      },
      hostname: 'db-0',
      subdomain: 'db',
      hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo.local', 'bar.local'] }],
    });
    for (const n of ['dns-cluster', 'dns-default', 'dns-none'])
      await waitFor(() => get(n, '{.status.phase}') === 'Running', 60_000, 300, `${n} Running`);
    const resolvOf = (n: string): string => cluster.kubectl(['exec', n, '--', 'cat', '/etc/resolv.conf']);
    const c = resolvOf('dns-cluster');
    assert.match(c, /^nameserver 10\.96\.0\.10$/m);
    assert.match(c, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local corp\.example$/m);
    assert.match(c, /^options ndots:5$/m);
    assert.doesNotMatch(c, /192\.0\.2\.53/);
    const d = resolvOf('dns-default');
    assert.match(d, /^nameserver 192\.0\.2\.53$/m);
    assert.match(d, /^search corp\.example$/m);
    assert.match(d, /^options timeout:2$/m);
    const none = resolvOf('dns-none');
    assert.match(none, /^nameserver 1\.1\.1\.1$/m);
    assert.match(none, /^search my\.dns\.search\.suffix$/m);
    assert.match(none, /^options ndots:2 edns0$/m);
    assert.doesNotMatch(none, /10\.96\.0\.10|192\.0\.2\.53/);
    // /etc/hosts: the kubelet's managed file with the pod's IP under its name, its FQDN with a subdomain, and hostAliases.
    const ip = get('dns-cluster', '{.status.podIP}');
    const hosts = cluster.kubectl(['exec', 'dns-cluster', '--', 'cat', '/etc/hosts']);
    assert.match(hosts, /^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    assert.match(hosts, new RegExp(`^${ip.replace(/\./g, '\\.')}\tdns-cluster$`, 'm'));
    const noneIP = get('dns-none', '{.status.podIP}');
    const h2 = cluster.kubectl(['exec', 'dns-none', '--', 'cat', '/etc/hosts']);
    assert.match(
      h2,
      new RegExp(`^${noneIP.replace(/\./g, '\\.')}\tdb-0\\.db\\.default\\.svc\\.cluster\\.local\tdb-0$`, 'm'),
    );
    assert.match(h2, /\n# Entries added by HostAliases\.\n10\.1\.2\.3\tfoo\.local\tbar\.local\n$/);
    assert.equal(cluster.kubectl(['exec', 'dns-none', '--', 'hostname']).trim(), 'db-0');
  });
});
