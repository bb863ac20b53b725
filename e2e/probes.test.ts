// e2e: liveness, readiness and startup probes on real containers, seen through the real kubectl:
// restarts with Unhealthy and Killing events, READY flipping without restarts, startup gating,
// and probe timeouts that give up at timeoutSeconds (measured by the prober's own metrics).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { clusterSkip, TestCluster } from './cluster.js';
import { APP_IMAGE, e2eSkipReason, REPO } from './harness.js';
import { start, stopPid, waitFor } from './proc.js';

const skip = clusterSkip(e2eSkipReason());
const METRICS = '127.0.0.1:10249';

describe('probes', { skip, timeout: 8 * 60_000 }, () => {
  const cluster = new TestCluster({ kubeletFlags: [`--metrics-bind-address=${METRICS}`] });
  before(() => cluster.start());
  after(() => cluster.cleanup());

  const pod = (name: string, container: Record<string, unknown>, spec: Record<string, unknown> = {}) =>
    cluster.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: APP_IMAGE, ...container }], ...spec },
    });
  const get = (name: string, jsonpath: string): string =>
    cluster.kubectl(['get', 'pod', name, '-o', `jsonpath=${jsonpath}`]);
  const row = (name: string): string => cluster.kubectl(['get', 'pod', name]).split('\n')[1] ?? '';
  const containerId = (name: string): string =>
    get(name, '{.status.containerStatuses[0].containerID}').replace('containerd://', '');
  const restarts = (name: string): number => Number(get(name, '{.status.containerStatuses[0].restartCount}') || 0);
  /** Runs a command in the pod's container through CRI ExecSync (so the test does not depend on the kubelet API). */
  const inPod = (name: string, cmd: string[]) => cluster.node.cri.execSync(containerId(name), cmd, 10);
  const running = (name: string) =>
    waitFor(() => /Running/.test(row(name)) && containerId(name), 60_000, 300, `${name} running`);
  const del = (name: string) => cluster.kubectl(['delete', 'pod', name, '--wait=true', '--timeout=60s']);

  test('an httpGet liveness probe on a path that starts failing restarts the container after failureThreshold x periodSeconds; describe shows Unhealthy, then Killing', async () => {
    pod('live-http', {
      ports: [{ name: 'http', containerPort: 8080 }],
      livenessProbe: { httpGet: { path: '/index.html', port: 'http' }, periodSeconds: 1, failureThreshold: 3 },
    });
    await running('live-http');
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(restarts('live-http'), 0, 'healthy while the file is there');
    const t0 = Date.now();
    assert.equal((await inPod('live-http', ['rm', '/www/index.html'])).exit_code, 0);
    await waitFor(() => restarts('live-http') === 1, 30_000, 250, 'restartCount 1');
    const took = Date.now() - t0;
    assert.ok(took >= 2000 && took < 12_000, `restarted ${took} ms after the path started failing (3 x 1 s)`);
    const d = cluster.kubectl(['describe', 'pod', 'live-http']);
    assert.match(
      d,
      /Warning\s+Unhealthy\s+.*kubelet\s+Liveness probe failed: HTTP probe failed with statuscode: 404[\s\S]*Normal\s+Killing\s+.*kubelet\s+Container c failed liveness probe, will be restarted/,
    );
    assert.ok(
      get('live-http', '{.status.containerStatuses[0].lastState.terminated.finishedAt}'),
      'lastState.terminated is set',
    );
    // The new container has the file again: it stays up.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(restarts('live-http'), 1);
    del('live-http');
  });

  test('an exec readiness probe (cat /tmp/ready) holds READY at 0/1 until the file exists, flips within a period, flips back, and never restarts', async () => {
    pod('ready-exec', { readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 } });
    await running('ready-exec');
    await new Promise((r) => setTimeout(r, 2000));
    assert.match(row('ready-exec'), /ready-exec\s+0\/1\s+Running/);
    await inPod('ready-exec', ['touch', '/tmp/ready']);
    const t0 = Date.now();
    await waitFor(() => /ready-exec\s+1\/1\s+Running/.test(row('ready-exec')), 10_000, 100, 'READY 1/1');
    assert.ok(Date.now() - t0 < 3000, `ready within about one period (${Date.now() - t0} ms)`);
    assert.equal(get('ready-exec', '{.status.conditions[?(@.type=="Ready")].status}'), 'True');
    await inPod('ready-exec', ['rm', '/tmp/ready']);
    await waitFor(() => /ready-exec\s+0\/1\s+Running/.test(row('ready-exec')), 10_000, 100, 'READY back to 0/1');
    assert.equal(get('ready-exec', '{.status.conditions[?(@.type=="ContainersReady")].status}'), 'False');
    assert.equal(restarts('ready-exec'), 0, 'readiness never restarts');
    assert.match(
      cluster.kubectl(['describe', 'pod', 'ready-exec']),
      /Readiness probe failed: cat: can't open '\/tmp\/ready': No such file or directory/,
    );
    del('ready-exec');
  });

  test('a tcpSocket liveness probe against a port nobody listens on restarts the container', async () => {
    pod('live-tcp', { livenessProbe: { tcpSocket: { port: 9999 }, periodSeconds: 1, failureThreshold: 2 } });
    await running('live-tcp');
    await waitFor(() => restarts('live-tcp') >= 1, 30_000, 300, 'restarted');
    assert.match(
      cluster.kubectl(['describe', 'pod', 'live-tcp']),
      /Liveness probe failed: dial tcp 10\.244\.\d+\.\d+:9999: connect: connection refused/,
    );
    del('live-tcp');
  });

  test('a startup probe holds liveness back during a slow start, and kills a container that never starts', async () => {
    const marker = { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1 };
    pod('slow', {
      command: ['/bin/sh', '-c', 'sleep 5; touch /tmp/started; exec httpd -f -p 8080 -h /www'],
      startupProbe: { ...marker, failureThreshold: 15 },
      livenessProbe: { ...marker, failureThreshold: 1 },
    });
    pod('never', { command: ['/bin/sleep', '3600'], startupProbe: { ...marker, failureThreshold: 3 } });
    await waitFor(() => /slow\s+1\/1\s+Running/.test(row('slow')), 30_000, 300, 'slow start finished');
    assert.equal(restarts('slow'), 0, 'no liveness kill while starting, though liveness would have failed');
    assert.equal(get('slow', '{.status.containerStatuses[0].started}'), 'true');
    assert.doesNotMatch(cluster.kubectl(['describe', 'pod', 'slow']), /Killing/);
    await waitFor(() => restarts('never') >= 1, 30_000, 300, 'never-starting container killed');
    const d = cluster.kubectl(['describe', 'pod', 'never']);
    assert.match(d, /Warning\s+Unhealthy\s+.*kubelet\s+Startup probe failed: cat: can't open '\/tmp\/started'/);
    assert.match(d, /Normal\s+Killing\s+.*kubelet\s+Container c failed startup probe, will be restarted/);
    del('slow');
    del('never');
  });

  test('an httpGet probe against a server that never answers fails after timeoutSeconds, not later', async () => {
    // busybox nc: every connection gets a `sleep`, which never writes a byte. The initial delay lets nc listen
    // first: a probe before that is refused, not timed out.
    pod('hang', {
      command: ['/bin/sh', '-c', 'nc -ll -p 8081 -e /bin/sleep 3600 & exec httpd -f -p 8080 -h /www'],
      readinessProbe: {
        httpGet: { path: '/', port: 8081 },
        initialDelaySeconds: 2,
        timeoutSeconds: 2,
        periodSeconds: 4,
      },
    });
    await running('hang');
    const d = await waitFor(
      () => {
        const o = cluster.kubectl(['describe', 'pod', 'hang']);
        return /Readiness probe failed/.test(o) ? o : undefined;
      },
      30_000,
      500,
      'a failed readiness probe',
    );
    assert.match(
      d,
      /Readiness probe failed: Get "http:\/\/10\.244\.\d+\.\d+:8081\/": context deadline exceeded \(Client\.Timeout exceeded while awaiting headers\)/,
    );
    const text = cluster.node.httpGet(`http://${METRICS}/metrics/probes`);
    const num = (m: string) =>
      Number(
        new RegExp(`${m}\\{[^}]*container="c",namespace="default",pod="hang"[^}]*\\} ([0-9.e+-]+)`).exec(text)?.[1],
      );
    const sum = num('prober_probe_duration_seconds_sum');
    const count = num('prober_probe_duration_seconds_count');
    assert.ok(count >= 1, `probe runs counted (${count})`);
    const avg = sum / count;
    assert.ok(avg >= 1.9 && avg < 2.8, `each run gave up at the 2 s timeout (average ${avg.toFixed(3)} s)`);
    assert.match(text, /prober_probe_total\{[^}]*pod="hang"[^}]*probe_type="Readiness",result="failed"/);
    del('hang');
  });

  test('a grpc liveness probe (grpc.health.v1) passes while the service is SERVING and restarts the container once it is not', async () => {
    // The pod uses the host network, so the probe goes to the node IP, where a health server runs in the node namespace.
    const log = path.join(cluster.node.dir, 'grpc-health.log');
    const srv = start(process.execPath, [path.join(REPO, 'e2e/grpc-health-server.mjs'), '50051'], log, {
      netns: cluster.node.netns,
      cwd: REPO,
    });
    try {
      await waitFor(() => fs.readFileSync(log, 'utf8').includes('listening'), 20_000, 100, 'health server up');
      pod(
        'live-grpc',
        {
          command: ['/bin/sleep', '3600'],
          livenessProbe: { grpc: { port: 50051 }, periodSeconds: 1, failureThreshold: 2 },
        },
        { hostNetwork: true },
      );
      await running('live-grpc');
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(restarts('live-grpc'), 0, 'SERVING keeps it alive');
      process.kill(srv.pid, 'SIGUSR1');
      await waitFor(() => restarts('live-grpc') >= 1, 20_000, 300, 'restarted after NOT_SERVING');
      assert.match(
        cluster.kubectl(['describe', 'pod', 'live-grpc']),
        /Liveness probe failed: service unhealthy \(responded with "NOT_SERVING"\)/,
      );
      del('live-grpc');
    } finally {
      await stopPid(srv.pid, 3000);
    }
  });
});
