// e2e: static pods from a manifest directory run as real containers in a
// real containerd (inside a throwaway network namespace), pulled from a
// local registry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { A_RESTART_COUNT, L_CONTAINER_NAME, L_POD_NAME } from '../agent/pods/labels.js';
import { APP_IMAGE, e2eSkipReason, REPO, sweepStale, TestNode, writeManifestAtomic } from './harness.js';
import { alive, waitFor } from './proc.js';

const skip = e2eSkipReason();

const podYaml = (name: string, command: string, extra = ''): string => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  terminationGracePeriodSeconds: 5
${extra}  containers:
    - name: main
      image: ${APP_IMAGE}
      command: ["/bin/sh", "-c", ${JSON.stringify(command)}]
`;

describe('static pods through CRI', { skip, timeout: 15 * 60_000 }, () => {
  let node: TestNode;

  const sandboxesOf = async (pod: string) =>
    (await node.podSandboxes()).filter((s) => s.labels[L_POD_NAME] === `${pod}-${node.name}`);
  const containersOf = async (pod: string) =>
    (await node.podContainers()).filter((c) => c.labels[L_POD_NAME] === `${pod}-${node.name}`);
  const runningContainer = async (pod: string) =>
    (await containersOf(pod)).find((c) => c.state === 'CONTAINER_RUNNING');
  const podIP = async (pod: string): Promise<string> => {
    const sb = (await sandboxesOf(pod)).find((s) => s.state === 'SANDBOX_READY');
    if (!sb) return '';
    return (await node.cri.podSandboxStatus(sb.id)).status?.network?.ip ?? '';
  };
  const gone = async (pod: string): Promise<boolean> =>
    (await sandboxesOf(pod)).length === 0 && (await containersOf(pod)).length === 0;

  before(async () => {
    await sweepStale();
    node = new TestNode('node-a');
    await node.start();
    node.startKubelet([], { TSKUBE_GC_PERIOD: '2000' });
  });

  after(async () => {
    if (process.env.TSKUBE_E2E_KEEP_LOGS)
      fs.copyFileSync(path.join(node.dir, 'kubelet.log'), process.env.TSKUBE_E2E_KEEP_LOGS);
    await node?.cleanup();
  });

  test('a dropped web.yaml becomes a running container whose pod IP answers HTTP', async () => {
    const t0 = Date.now();
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(node.manifests, 'web.yaml'));
    const c = await waitFor(() => runningContainer('web'), 60_000, 200, 'web container running');
    assert.equal(c.labels[L_CONTAINER_NAME], 'httpd');
    const ip = await podIP('web');
    assert.match(ip, /^10\.244\./);
    const body = await waitFor(() => node.httpGet(`http://${ip}:8080/`), 20_000, 300, `HTTP from ${ip}:8080`);
    assert.equal(body, 'hello from tskube\n');
    // CRI annotations and log path as upstream writes them.
    const st = await node.cri.containerStatus(c.id);
    assert.equal(st.annotations[A_RESTART_COUNT], '0');
    assert.match(st.annotations['io.kubernetes.container.hash'] ?? '', /^[0-9a-f]+$/);
    assert.match(st.log_path, /\/default_web-node-a_[0-9a-f]{32}\/httpd\/0\.log$/);
    process.stdout.write(`# web pod serving ${(Date.now() - t0) / 1000}s after the file was written\n`);
    fs.rmSync(path.join(node.manifests, 'web.yaml'));
    await waitFor(() => gone('web'), 60_000, 300, 'web pod removed');
  });

  test('editing the command restarts the pod with the new command; deleting the file removes sandbox and containers', async () => {
    writeManifestAtomic(
      node.manifests,
      'edit.yaml',
      podYaml('edit', "echo v1 > /www/index.html; trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait"),
    );
    const first = await waitFor(() => runningContainer('edit'), 60_000, 200, 'edit v1 running');
    const ip1 = await podIP('edit');
    assert.equal(await waitFor(() => node.httpGet(`http://${ip1}:8080/`), 20_000, 300, 'v1 body'), 'v1\n');
    const firstSandbox = first.pod_sandbox_id;

    writeManifestAtomic(
      node.manifests,
      'edit.yaml',
      podYaml('edit', "echo v2 > /www/index.html; trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait"),
    );
    const second = await waitFor(
      async () => {
        const c = await runningContainer('edit');
        return c && c.id !== first.id ? c : undefined;
      },
      60_000,
      200,
      'edit v2 running',
    );
    const ip2 = await podIP('edit');
    assert.equal(await waitFor(() => node.httpGet(`http://${ip2}:8080/`), 20_000, 300, 'v2 body'), 'v2\n');
    assert.notEqual(second.pod_sandbox_id, firstSandbox, 'a changed static pod is a new pod with a new sandbox');
    // The old instance is stopped and removed, not left beside the new one.
    await waitFor(
      async () => !(await node.podSandboxes()).some((s) => s.id === firstSandbox),
      30_000,
      300,
      'old sandbox removed',
    );
    assert.equal((await sandboxesOf('edit')).length, 1);

    fs.rmSync(path.join(node.manifests, 'edit.yaml'));
    await waitFor(() => gone('edit'), 60_000, 300, 'edit pod removed');
    // A graceful stop: the container got SIGTERM and exited by its trap, well before the grace period.
    assert.match(node.kubeletLog(), /Killing pod\/default\/edit-node-a: Stopping container main/);
  });

  test('restarting the kubelet adopts running pods without restarting them', async () => {
    writeManifestAtomic(
      node.manifests,
      'steady.yaml',
      podYaml('steady', "trap 'exit 0' TERM; while true; do sleep 1; done"),
    );
    const before = await waitFor(() => runningContainer('steady'), 60_000, 200, 'steady running');
    const st1 = await node.cri.containerStatus(before.id);

    await node.stopKubelet('SIGKILL');
    node.startKubelet([], { TSKUBE_GC_PERIOD: '2000' });
    // Wait until the new kubelet has synced the pod at least once (its worker reads state and decides nothing to do).
    await waitFor(
      () => node.kubeletLog().split('kubelet started on node').length > 2,
      30_000,
      200,
      'second kubelet start',
    );
    await new Promise((r) => setTimeout(r, 5000));

    const after = await containersOf('steady');
    assert.equal(after.length, 1, 'no new container was created');
    assert.equal(after[0]!.id, before.id);
    const st2 = await node.cri.containerStatus(before.id);
    assert.equal(st2.state, 'CONTAINER_RUNNING');
    assert.equal(st2.started_at, st1.started_at, 'start time unchanged');
    assert.equal((await sandboxesOf('steady')).length, 1);

    fs.rmSync(path.join(node.manifests, 'steady.yaml'));
    await waitFor(() => gone('steady'), 60_000, 300, 'steady removed');
  });

  test('a container exiting 1 under restartPolicy Always restarts with growing backoff, counted in CRI annotations', async () => {
    writeManifestAtomic(node.manifests, 'crash.yaml', podYaml('crash', 'echo crashing; exit 1'));
    const seen = new Map<number, number>(); // restartCount -> createdAt ms
    await waitFor(
      async () => {
        for (const c of await containersOf('crash')) {
          const st = await node.cri.containerStatus(c.id).catch(() => undefined);
          if (!st) continue;
          const rc = Number(st.annotations[A_RESTART_COUNT]);
          if (!seen.has(rc)) seen.set(rc, Math.floor(Number(st.created_at) / 1e6));
        }
        return seen.has(3);
      },
      120_000,
      250,
      'three restarts',
    );
    const t = [0, 1, 2, 3].map((i) => seen.get(i)!);
    const gap12 = t[2]! - t[1]!;
    const gap23 = t[3]! - t[2]!;
    process.stdout.write(`# restart gaps: ${t[1]! - t[0]!} ms, ${gap12} ms, ${gap23} ms\n`);
    assert.ok(gap12 >= 9_000, `second restart waits the 10s backoff (was ${gap12} ms)`);
    assert.ok(gap23 >= 19_000, `third restart waits the doubled 20s backoff (was ${gap23} ms)`);
    assert.ok(gap23 > gap12, 'backoff grows');
    assert.match(node.kubeletLog(), /BackOff pod\/default\/crash-node-a: Back-off restarting failed container main/);
    // GC keeps only the newest exited instance next to the current one.
    await waitFor(async () => (await containersOf('crash')).length <= 2, 20_000, 500, 'GC of old exited containers');
    // Logs of each attempt go to <container>/<restartCount>.log.
    const logs = fs.readdirSync(node.podLogsDir).find((d) => d.startsWith('default_crash-node-a_'));
    assert.ok(logs, 'pod log directory exists');
    assert.ok(fs.readdirSync(path.join(node.podLogsDir, logs, 'main')).some((f) => /^[0-9]+\.log$/.test(f)));
    fs.rmSync(path.join(node.manifests, 'crash.yaml'));
    await waitFor(() => gone('crash'), 60_000, 300, 'crash removed');
  });

  test('init containers run in order before the app container; a hostNetwork pod serves on the node', async () => {
    writeManifestAtomic(
      node.manifests,
      'init.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  terminationGracePeriodSeconds: 5
  volumes: [{name: work, emptyDir: {}}]
  initContainers:
  - {name: first, image: ${APP_IMAGE}, command: ["/bin/sh", "-c", "echo first >> /work/order"], volumeMounts: [{name: work, mountPath: /work}]}
  - {name: second, image: ${APP_IMAGE}, command: ["/bin/sh", "-c", "echo second >> /work/order"], volumeMounts: [{name: work, mountPath: /work}]}
  containers:
  - name: main
    image: ${APP_IMAGE}
    command: ["/bin/sh", "-c", "cp /work/order /www/index.html; trap 'exit 0' TERM; httpd -f -p 18080 -h /www & wait"]
    volumeMounts: [{name: work, mountPath: /work}]
  hostNetwork: true
`,
    );
    await waitFor(() => runningContainer('init'), 60_000, 200, 'init pod main running');
    // hostNetwork: the pod shares the node's network namespace, so the node's loopback reaches it.
    const body = await waitFor(() => node.httpGet('http://127.0.0.1:18080/'), 20_000, 300, 'hostNetwork HTTP');
    assert.equal(body, 'first\nsecond\n', 'init containers ran once each, in order, sharing the emptyDir');
    const inits = (await containersOf('init')).filter((c) => c.labels[L_CONTAINER_NAME] !== 'main');
    assert.equal(inits.length, 2);
    for (const c of inits) {
      const st = await node.cri.containerStatus(c.id);
      assert.equal(st.state, 'CONTAINER_EXITED');
      assert.equal(st.exit_code, 0);
    }
    fs.rmSync(path.join(node.manifests, 'init.yaml'));
    await waitFor(() => gone('init'), 60_000, 300, 'init removed');
  });

  test('an image the registry does not have goes ErrImagePull, then ImagePullBackOff', async () => {
    const missing = '127.0.0.1:5000/tskube/does-not-exist:1';
    writeManifestAtomic(
      node.manifests,
      'noimage.yaml',
      `apiVersion: v1\nkind: Pod\nmetadata: {name: noimage}\nspec:\n  containers:\n  - {name: main, image: "${missing}"}\n`,
    );
    await waitFor(
      () =>
        /Failed pod\/default\/noimage-node-a: Failed to pull image "127\.0\.0\.1:5000\/tskube\/does-not-exist:1": CRI PullImage for pod default\/noimage-node-a failed/.test(
          node.kubeletLog(),
        ),
      30_000,
      300,
      'ErrImagePull',
    );
    await waitFor(
      () =>
        /BackOff pod\/default\/noimage-node-a: Back-off pulling image "127\.0\.0\.1:5000\/tskube\/does-not-exist:1"/.test(
          node.kubeletLog(),
        ),
      30_000,
      300,
      'ImagePullBackOff',
    );
    assert.equal((await containersOf('noimage')).length, 0, 'no container without an image');
    assert.equal(
      (await sandboxesOf('noimage')).filter((s) => s.state === 'SANDBOX_READY').length,
      1,
      'the sandbox stays up while pulling',
    );
    fs.rmSync(path.join(node.manifests, 'noimage.yaml'));
    await waitFor(() => gone('noimage'), 60_000, 300, 'noimage removed');
  });

  test('bad manifests are reported with the file and field, and never disturb other pods', async () => {
    writeManifestAtomic(
      node.manifests,
      'good.yaml',
      podYaml('good', "trap 'exit 0' TERM; while true; do sleep 1; done"),
    );
    const good = await waitFor(() => runningContainer('good'), 60_000, 200, 'good running');
    const bad: Record<string, string | Buffer> = {
      'invalid.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n  spec: [',
      'wrongkind.yaml': 'apiVersion: v1\nkind: Service\nmetadata: {name: svc}\n',
      'missing.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: nocontainers}\nspec: {}\n',
      'dupe.yaml': `apiVersion: v1\nkind: Pod\nmetadata: {name: dupe}\nspec:\n  containers:\n  - {name: a, image: ${APP_IMAGE}}\n  - {name: a, image: ${APP_IMAGE}}\n`,
      'huge.yaml': Buffer.alloc(4 * 1024 * 1024, 'a'),
      'binary.yaml': Buffer.from([0x6b, 0x69, 0x6e, 0x64, 0x3a, 0x20, 0xff, 0xfe, 0xc3, 0x28]),
      'badtype.json': JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'badtype' },
        spec: { containers: [{ name: 'a', image: APP_IMAGE, ports: [{ containerPort: 'eighty' }] }] },
      }),
    };
    for (const [f, content] of Object.entries(bad)) writeManifestAtomic(node.manifests, f, content as string);
    const expect: Record<string, RegExp> = {
      'invalid.yaml': /invalid\.yaml: invalid YAML\/JSON at line \d+/,
      'wrongkind.yaml': /wrongkind\.yaml: kind: Unsupported value: "Service"/,
      'missing.yaml': /missing\.yaml: Pod "nocontainers": spec\.containers: Required value/,
      'dupe.yaml': /dupe\.yaml: Pod "dupe": spec\.containers\[1\]\.name: Duplicate value: "a"/,
      'huge.yaml': /huge\.yaml: file is 4194304 bytes, larger than the 3145728-byte limit/,
      'binary.yaml': /binary\.yaml: not valid UTF-8/,
      'badtype.json':
        /badtype\.json: Pod "badtype": spec\.containers\[0\]\.ports\[0\]\.containerPort: Invalid type: expected number, got string/,
    };
    await waitFor(
      () => Object.values(expect).every((re) => re.test(node.kubeletLog())),
      30_000,
      300,
      'one error line per bad file',
    );
    for (const [f, re] of Object.entries(expect)) {
      const lines = node
        .kubeletLog()
        .split('\n')
        .filter((l) => re.test(l));
      assert.equal(lines.length, 1, `exactly one line for ${f}`);
    }
    assert.ok(node.kubelet && alive(node.kubelet.pid), 'kubelet still running');
    const still = await runningContainer('good');
    assert.equal(still?.id, good.id, 'the good pod was not disturbed');

    // Fixing a file makes its pod appear.
    writeManifestAtomic(
      node.manifests,
      'dupe.yaml',
      podYaml('dupe', "trap 'exit 0' TERM; while true; do sleep 1; done"),
    );
    await waitFor(() => runningContainer('dupe'), 60_000, 200, 'fixed dupe running');
    for (const f of [...Object.keys(bad), 'good.yaml']) fs.rmSync(path.join(node.manifests, f), { force: true });
    await waitFor(async () => (await gone('good')) && (await gone('dupe')), 60_000, 300, 'all removed');
  });

  test('SIGTERM stops the kubelet at once while a container stop is in flight, leaving the container as it was', async () => {
    const stubborn = podYaml('stubborn', "trap '' TERM; while true; do sleep 1; done").replace(
      'terminationGracePeriodSeconds: 5',
      'terminationGracePeriodSeconds: 1000000000',
    );
    writeManifestAtomic(node.manifests, 'stubborn.yaml', stubborn);
    await waitFor(() => runningContainer('stubborn'), 60_000, 200, 'stubborn running');
    fs.rmSync(path.join(node.manifests, 'stubborn.yaml'));
    await waitFor(
      () =>
        /stubborn/.test(
          node
            .kubeletLog()
            .split('\n')
            .filter((l) => /Killing|stopping/i.test(l))
            .join('\n'),
        ),
      30_000,
      200,
      'the stop under way',
    );
    const kubelet = node.kubelet!;
    const t0 = Date.now();
    process.kill(kubelet.pid, 'SIGTERM');
    const code = await Promise.race([
      kubelet.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 10_000).unref()),
    ]);
    assert.equal(code, 0, `the kubelet exited by itself after SIGTERM (${Date.now() - t0} ms)`);
    assert.ok(await runningContainer('stubborn'), 'the container was left as it was');
    node.kubelet = undefined;
  });
});
