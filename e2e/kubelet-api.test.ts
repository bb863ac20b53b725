// e2e: the kubelet API on :10250 through the real kubectl and apiserver (Node,RBAC):
// kubectl logs (-f, --tail, --timestamps, --previous after a liveness restart),
// kubectl exec (plain, with exit codes, and -it in a tmux pty), port-forward, and
// the kubelet's own 401/403 answers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eSkipReason, REPO } from './harness.js';
import { alive, sh, start, stopPid, waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());

// Prints a boot id (so runs can be told apart), then a numbered line a second; dies when /tmp/die exists.
const SCRIPT = [
  "trap 'exit 0' TERM",
  'httpd -p 8080 -h /www',
  'echo "boot $(cat /proc/sys/kernel/random/uuid)"',
  'i=0',
  'while true; do echo "line $i"; i=$((i+1)); sleep 0.5; done',
].join('; ');

describe('kubelet API', { skip, timeout: 10 * 60_000 }, () => {
  const cluster = new TestCluster({
    apiserverFlags: ['--authorization-mode=Node,RBAC'],
    kubeletFlags: ['--container-log-max-size=16Ki', '--container-log-max-files=4'],
    kubeletConfig: 'containerLogMonitorInterval: 1s\n',
  });
  before(() => cluster.start());
  after(() => cluster.cleanup());

  const kubectl = (args: string[]) => cluster.kubectl(args);
  /** kubectl in the node namespace, for exit codes and stdin. */
  const run = (args: string[], input?: string) =>
    spawnSync(
      'nsenter',
      [`--net=/run/netns/${cluster.node.netns}`, 'kubectl', `--kubeconfig=${cluster.as.kubeconfig}`, ...args],
      { encoding: 'utf8', input, timeout: 30_000 },
    );
  const restarts = () =>
    Number(kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.containerStatuses[0].restartCount}']) || 0);
  const bootIds = (s: string) => [...s.matchAll(/^boot (\S+)$/gm)].map((m) => m[1]);

  test('a pod with a liveness probe runs', async () => {
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: 'web',
            image: APP_IMAGE,
            command: ['/bin/sh', '-c', SCRIPT],
            ports: [{ containerPort: 8080 }],
            livenessProbe: {
              exec: { command: ['sh', '-c', 'test ! -f /tmp/die'] },
              periodSeconds: 1,
              failureThreshold: 1,
            },
          },
        ],
      },
    });
    await waitFor(() => /Running/.test(kubectl(['get', 'pod', 'web'])), 60_000, 300, 'web Running');
  });

  test('kubectl logs prints the output; --tail=5 the last five lines; --timestamps prefixes RFC3339Nano', async () => {
    await waitFor(() => /line 6/.test(kubectl(['logs', 'web'])), 20_000, 300, 'a few lines logged');
    const all = kubectl(['logs', 'web']);
    assert.match(all, /^boot \S+\nline 0\nline 1\n/);
    const tail = kubectl(['logs', 'web', '--tail=5']);
    const lines = tail.trimEnd().split('\n');
    assert.equal(lines.length, 5);
    const first = Number(/^line (\d+)$/.exec(lines[0]!)?.[1]);
    assert.deepEqual(
      lines,
      [0, 1, 2, 3, 4].map((i) => `line ${first + i}`),
    );
    const ts = kubectl(['logs', 'web', '--tail=2', '--timestamps']).trimEnd().split('\n');
    assert.equal(ts.length, 2);
    for (const l of ts) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d) line \d+$/);
    assert.match(kubectl(['logs', 'web', '--limit-bytes=4']), /^boot$/);
  });

  test('kubectl logs -f streams new lines as they are written', async () => {
    const out = path.join(cluster.node.dir, 'logs-f.out');
    const p = start(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        'kubectl',
        `--kubeconfig=${cluster.as.kubeconfig}`,
        'logs',
        '-f',
        'web',
        '--tail=1',
      ],
      out,
    );
    try {
      await waitFor(() => /line \d+/.test(fs.readFileSync(out, 'utf8')), 15_000, 100, 'first line');
      const n0 = Number(/line (\d+)/.exec(fs.readFileSync(out, 'utf8'))![1]);
      await waitFor(
        () => fs.readFileSync(out, 'utf8').includes(`line ${n0 + 4}`),
        15_000,
        100,
        'four more lines streamed',
      );
      const got = fs.readFileSync(out, 'utf8').trimEnd().split('\n').slice(0, 5);
      assert.deepEqual(
        got,
        [0, 1, 2, 3, 4].map((i) => `line ${n0 + i}`),
        'in order, none lost',
      );
    } finally {
      await stopPid(p.pid, 2000);
    }
  });

  test('kubectl exec runs a command; its exit code comes back', () => {
    assert.equal(kubectl(['exec', 'web', '--', 'cat', '/etc/hostname']).trim(), 'web');
    const r = run(['exec', 'web', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
    assert.equal(r.status, 3, r.stderr);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /err/);
    const stdin = run(['exec', '-i', 'web', '--', 'sh', '-c', 'tr a-z A-Z'], 'piped input\n');
    assert.equal(stdin.stdout, 'PIPED INPUT\n', stdin.stderr);
  });

  test('exec and port-forward over WebSocket through the apiserver: kubectl (v5, no SPDY fallback), the Python client (v4) and client-node', async () => {
    const v = run(['exec', '-v=6', 'web', '--', 'cat', '/etc/hostname']);
    assert.equal(v.stdout, 'web\n');
    assert.match(v.stderr, /GET https:\S+\/pods\/web\/exec\?\S+ 101 Switching Protocols/);
    assert.doesNotMatch(v.stderr, /fallback/i);
    const py = sh('/usr/bin/python3', [path.join(REPO, 'e2e/clients/stream_exec.py'), cluster.as.kubeconfig, 'web'], {
      netns: cluster.node.netns,
      timeoutMs: 60_000,
    });
    assert.match(py, /^exec: web$/m);
    assert.match(py, /^stdout: got:from-python$/m);
    assert.match(py, /^stderr: oops$/m);
    assert.match(py, /^returncode: 7$/m);
    const pf = sh(
      '/usr/bin/python3',
      [path.join(REPO, 'e2e/clients/stream_portforward.py'), cluster.as.kubeconfig, 'web'],
      { netns: cluster.node.netns, timeoutMs: 60_000 },
    );
    assert.match(pf, /^portforward: hello from tskube error: None$/m);
    const js = sh(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'e2e/clients/client_node.ts'), cluster.as.kubeconfig, 'exec', 'web'],
      { netns: cluster.node.netns, timeoutMs: 60_000 },
    );
    assert.match(js, /^exec stdout: web stderr: e$/m);
    assert.match(js, /^exec status: Failure 5$/m);
    const out = path.join(cluster.node.dir, 'port-forward-ws.out');
    const p = start(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        'kubectl',
        '-v=6',
        `--kubeconfig=${cluster.as.kubeconfig}`,
        'port-forward',
        'pod/web',
        '18081:8080',
      ],
      out,
    );
    try {
      await waitFor(
        () => /Forwarding from 127\.0\.0\.1:18081/.test(fs.readFileSync(out, 'utf8')),
        15_000,
        100,
        'port-forward listening',
      );
      assert.equal(
        sh('curl', ['-sS', '--max-time', '5', 'http://127.0.0.1:18081/index.html'], { netns: cluster.node.netns }),
        'hello from tskube\n',
      );
      const log = fs.readFileSync(out, 'utf8');
      assert.match(log, /GET https:\S+\/pods\/web\/portforward 101 Switching Protocols/);
      assert.doesNotMatch(log, /fallback/i);
    } finally {
      await stopPid(p.pid, 2000);
    }
  });

  test('kubectl exec -it gives a shell on a pty (driven through tmux); exit status propagates', async () => {
    const sock = path.join(cluster.node.dir, 'tmux.sock');
    const done = path.join(cluster.node.dir, 'exec-it.status');
    const tmux = (args: string[]) => sh('tmux', ['-S', sock, ...args], { netns: cluster.node.netns });
    tmux([
      'new-session',
      '-d',
      '-x',
      '120',
      '-y',
      '30',
      '-s',
      'it',
      `kubectl --kubeconfig=${cluster.as.kubeconfig} exec -it web -- sh; echo "status=$?" > ${done}; sleep 60`,
    ]);
    try {
      await waitFor(() => /#\s*$/m.test(tmux(['capture-pane', '-p', '-t', 'it'])), 20_000, 200, 'shell prompt');
      tmux(['send-keys', '-t', 'it', 'echo tty=$(tty) sum=$((6*7))', 'Enter']);
      await waitFor(
        () => /tty=\/dev\/pts\/\d+ sum=42/.test(tmux(['capture-pane', '-p', '-t', 'it'])),
        10_000,
        200,
        'command output on the pty',
      );
      tmux(['send-keys', '-t', 'it', 'exit 7', 'Enter']);
      await waitFor(
        () => fs.existsSync(done) && fs.readFileSync(done, 'utf8').includes('status='),
        10_000,
        200,
        'kubectl exited',
      );
      assert.equal(fs.readFileSync(done, 'utf8').trim(), 'status=7');
    } finally {
      sh('tmux', ['-S', sock, 'kill-server'], { netns: cluster.node.netns, allowFail: true });
    }
  });

  test('kubectl port-forward pod/web 18080:8080, then curl on 127.0.0.1:18080', async () => {
    const out = path.join(cluster.node.dir, 'port-forward.out');
    const p = start(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        'kubectl',
        `--kubeconfig=${cluster.as.kubeconfig}`,
        'port-forward',
        'pod/web',
        '18080:8080',
      ],
      out,
    );
    try {
      await waitFor(
        () => /Forwarding from 127\.0\.0\.1:18080/.test(fs.readFileSync(out, 'utf8')),
        15_000,
        100,
        'port-forward listening',
      );
      const body = sh('curl', ['-sS', '--max-time', '5', 'http://127.0.0.1:18080/index.html'], {
        netns: cluster.node.netns,
      });
      assert.equal(body, 'hello from tskube\n');
      // A second connection over the same forward.
      assert.equal(
        sh('curl', ['-sS', '--max-time', '5', 'http://127.0.0.1:18080/index.html'], { netns: cluster.node.netns }),
        'hello from tskube\n',
      );
    } finally {
      await stopPid(p.pid, 2000);
    }
  });

  test('the kubelet answers 401 without credentials and 403 to a token without nodes/proxy', () => {
    const curl = (args: string[]) =>
      sh('curl', ['-sk', '--max-time', '5', '-w', ' %{http_code}', ...args], { netns: cluster.node.netns });
    assert.equal(curl(['https://127.0.0.1:10250/pods']), 'Unauthorized\n 401');
    assert.equal(
      curl(['-H', `Authorization: Bearer ${cluster.as.token('system:kube-proxy')}`, 'https://127.0.0.1:10250/pods']),
      'Forbidden (user=system:kube-proxy, verb=get, resource=nodes, subresource=proxy)\n 403',
    );
    assert.match(
      curl(['-H', `Authorization: Bearer ${cluster.as.token('kubernetes-admin')}`, 'https://127.0.0.1:10250/pods']),
      /"kind":"PodList".* 200$/s,
    );
    // The local healthz port needs no credentials and runs upstream's checks.
    assert.equal(curl(['http://127.0.0.1:10248/healthz']), 'ok 200');
    assert.equal(
      curl(['http://127.0.0.1:10248/healthz?verbose']),
      '[+]ping ok\n[+]log ok\n[+]syncloop ok\nhealthz check passed\n 200',
    );
  });

  const wsRead = (url: string, protocol: string): string =>
    sh(process.execPath, [path.join(REPO, 'e2e/ws-read.mjs'), url, cluster.as.token('kubernetes-admin'), protocol], {
      netns: cluster.node.netns,
      timeoutMs: 15_000,
    });

  test('the kubelet passes a WebSocket exec (v4.channel.k8s.io) through to the runtime', () => {
    const out = wsRead(
      'https://127.0.0.1:10250/exec/default/web/web?command=echo&command=ws-ok&output=1',
      'v4.channel.k8s.io',
    );
    assert.equal(out, '101 v4.channel.k8s.io close=1000\nws-ok\n');
  });

  test("the apiserver carries upstream e2e's WebSocket exec (channel.k8s.io) and logs (binary.k8s.io, base64)", () => {
    const api = 'https://127.0.0.1:6443/api/v1/namespaces/default/pods/web';
    const exec = wsRead(
      `${api}/exec?command=echo&command=remote%20execution%20test&stdout=1&stderr=1`,
      'channel.k8s.io',
    );
    assert.match(exec, /^101 channel\.k8s\.io close=\d+\nremote execution test\n$/);
    const logs = kubectl(['logs', 'web', '--limit-bytes=40']);
    assert.equal(wsRead(`${api}/log?limitBytes=40`, 'binary.k8s.io'), `101 binary.k8s.io close=1000\n${logs}`);
    assert.equal(
      wsRead(`${api}/log?limitBytes=40`, 'base64.binary.k8s.io'),
      `101 base64.binary.k8s.io close=1000\n${logs}`,
    );
    assert.match(
      wsRead(`${api}/log?container=nope`, 'binary.k8s.io'),
      /^400 .*container nope is not valid for pod web/,
    );
  });

  test('after a liveness restart, kubectl logs --previous prints the old container output', async () => {
    const before = bootIds(kubectl(['logs', 'web']));
    assert.equal(before.length, 1);
    assert.match(
      run(['logs', 'web', '--previous']).stderr,
      /previous terminated container "web" in pod "web" not found/,
    );
    kubectl(['exec', 'web', '--', 'touch', '/tmp/die']);
    await waitFor(() => restarts() >= 1, 30_000, 300, 'liveness restart');
    await waitFor(
      () => bootIds(kubectl(['logs', 'web'])).length === 1 && bootIds(kubectl(['logs', 'web']))[0] !== before[0],
      30_000,
      300,
      'new container logging',
    );
    const prev = kubectl(['logs', 'web', '--previous']);
    assert.deepEqual(bootIds(prev), before, 'the previous instance had the old boot id');
    assert.match(prev, /line 3/);
  });

  test('the log of a chatty container is rotated (at most 4 files, older ones gzipped); logs and logs -f keep working', async () => {
    // ~250-byte lines at ~100 lines/s: 16 KiB fills in well under a second.
    const pad = 'p'.repeat(200);
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'chatty' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'c',
            image: APP_IMAGE,
            command: ['/bin/sh', '-c', `i=0; while true; do echo "seq $i ${pad}"; i=$((i+1)); usleep 10000; done`],
          },
        ],
      },
    });
    await waitFor(() => /Running/.test(kubectl(['get', 'pod', 'chatty'])), 60_000, 300, 'chatty Running');
    const uid = kubectl(['get', 'pod', 'chatty', '-o', 'jsonpath={.metadata.uid}']);
    const dir = path.join(cluster.node.podLogsDir, `default_chatty_${uid}`, 'c');
    const out = path.join(cluster.node.dir, 'chatty-f.out');
    const f = start(
      'nsenter',
      [
        `--net=/run/netns/${cluster.node.netns}`,
        'kubectl',
        `--kubeconfig=${cluster.as.kubeconfig}`,
        'logs',
        '-f',
        'chatty',
      ],
      out,
    );
    try {
      await waitFor(() => fs.readdirSync(dir).some((x) => x.endsWith('.gz')), 30_000, 200, 'a gzipped rotated log');
      const files = fs.readdirSync(dir).sort();
      assert.ok(files.length <= 4, `at most 4 files: ${files.join(' ')}`);
      assert.ok(files.includes('0.log'), `the current log: ${files.join(' ')}`);
      for (const x of files.filter((x) => x !== '0.log')) assert.match(x, /^0\.log\.\d{8}-\d{6}(\.gz)?$/);
      // The current file starts after a rotation; --tail reads it.
      const tail = kubectl(['logs', 'chatty', '--tail=3']).trimEnd().split('\n');
      assert.equal(tail.length, 3);
      for (const l of tail) assert.match(l, /^seq \d+ p+$/);
      // How far -f got by now depends on rotation timing; let it run over several more files.
      await waitFor(
        () => {
          const n = followedSeqs(out).length;
          if (n >= 400) return true;
          // Say how far it got, and whether kubectl gave up, should this time out.
          throw new Error(
            `${n} lines so far${
              alive(f.pid)
                ? ''
                : `; kubectl exited: ${fs
                    .readFileSync(out, 'utf8')
                    .split('\n')
                    .filter((l) => !l.startsWith('seq '))
                    .join(' | ')}`
            }`,
          );
        },
        60_000,
        200,
        '-f to follow 400 lines',
      );
    } finally {
      await stopPid(f.pid, 2000);
    }
    // Followed across rotations: in order, and well past the first file.
    const seqs = followedSeqs(out);
    for (let i = 1; i < seqs.length; i++)
      assert.ok(seqs[i]! > seqs[i - 1]!, `in order at ${i}: ${seqs[i - 1]} then ${seqs[i]}`);
    assert.ok(seqs.length >= 400, `followed ${seqs.length} lines across rotations`);
    const missing = seqs.at(-1)! - seqs[0]! + 1 - seqs.length;
    assert.ok(missing <= seqs.length / 100, `${missing} lines missed by -f across rotations`);
  });
});

function followedSeqs(file: string): number[] {
  return [...fs.readFileSync(file, 'utf8').matchAll(/^seq (\d+) /gm)].map((m) => Number(m[1]));
}
