// e2e: `tskube up` in a throwaway network namespace with its own data dir:
// it starts containerd and a registry, builds the images, runs apiserver,
// kubelet and kube-proxy, and prints the kubeconfig; kubectl works; Ctrl-C
// stops everything; a second `up` picks up the same cluster.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { E2E_ROOT, e2eSkipReason, recordPath, REPO, sweepStale } from './harness.js';
import { sh, start, stopPid, waitFor, type Proc } from './proc.js';
import { clusterSkip } from './cluster.js';

const skip = clusterSkip(e2eSkipReason());

describe('tskube up', { skip, timeout: 12 * 60_000 }, () => {
  const id = randomBytes(3).toString('hex');
  const netns = `tskube-up-${id}`;
  const dir = path.join(E2E_ROOT, 'nodes', id);
  const nodeIP = `10.251.${Math.floor(Math.random() * 250)}.1`;
  const kubeconfig = path.join(dir, 'pki', 'admin.kubeconfig');
  let up: Proc | undefined;
  let out = '';

  const kubectl = (args: string[]) => sh('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], { netns, timeoutMs: 30_000 });
  const record = (): void => fs.writeFileSync(recordPath(dir), JSON.stringify({ netns, dir, pids: up ? [up.pid] : [] }));

  async function runUp(): Promise<void> {
    out = path.join(dir, `up-${Date.now()}.out`);
    up = start(process.execPath, ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), 'up', `--data-dir=${dir}`, `--container-runtime-endpoint=unix://${dir}/containerd.sock`, `--pod-manifest-path=${dir}/manifests`, '--hostname-override=up-node', `--node-ip=${nodeIP}`, `--root-dir=${dir}/kubelet`, `--pod-logs-dir=${dir}/pod-logs`], out, { netns, cwd: REPO });
    record();
    await waitFor(() => /tskube is up/.test(fs.readFileSync(out, 'utf8')) || (up!.child.exitCode !== null && 'exited'), 300_000, 500, '"tskube is up"').then((r) => {
      if (r === 'exited') throw new Error(`tskube up exited: ${fs.readFileSync(out, 'utf8')}`);
    });
  }

  async function interrupt(): Promise<number | null> {
    up!.child.kill('SIGINT');
    const code = await Promise.race([up!.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 90_000))]);
    if (code === 'timeout') throw new Error('tskube up did not stop within 90 s of SIGINT');
    return code;
  }

  before(async () => {
    await sweepStale();
    fs.mkdirSync(path.join(dir, 'manifests'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'owner.pid'), String(process.pid));
    sh('ip', ['netns', 'add', netns]);
    sh('ip', ['link', 'set', 'lo', 'up'], { netns });
    sh('ip', ['addr', 'add', `${nodeIP}/32`, 'dev', 'lo'], { netns });
    record();
  });

  after(async () => {
    if (up) await stopPid(up.pid, 60_000, 'SIGINT');
    await sweepStale();
  });

  test('up starts containerd, a registry and the three components, shows progress, and prints the kubeconfig', async () => {
    await runUp();
    const text = fs.readFileSync(out, 'utf8');
    for (const step of ['[1/7] containerd', '[2/7] image registry on 127.0.0.1:5000', '[3/7] images', '[4/7] apiserver and controllers', '[5/7] kubelet', '[6/7] kube-proxy', '[7/7] waiting for node up-node to be Ready']) assert.ok(text.includes(`${step}`), `progress line "${step}" in:\n${text}`);
    assert.match(text, /127\.0\.0\.1:5000\/tskube\/app:1: built and pushed \(\d+\.\d+s\)/);
    assert.ok(text.includes(`export KUBECONFIG=${kubeconfig}`));
    assert.match(kubectl(['get', 'nodes']), /up-node\s+Ready/);
  });

  test('a static pod and a deployment run', async () => {
    fs.copyFileSync(path.join(REPO, 'static-manifests/web.yaml'), path.join(dir, 'manifests', 'web.yaml'));
    kubectl(['create', 'deployment', 'hello', '--image=127.0.0.1:5000/tskube/app:1']);
    await waitFor(() => /web-up-node\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) && /hello-\S+\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])), 120_000, 500, 'static pod and deployment running');
  });

  test('Ctrl-C stops everything it started; a second up brings the same cluster back', async () => {
    assert.equal(await interrupt(), 0);
    const text = fs.readFileSync(out, 'utf8');
    assert.match(text, /SIGINT: stopping the kube-proxy, the kubelet, the apiserver and containerd, registry/);
    assert.match(text, /stopped; `tskube up` again picks up where this left off/);
    assert.equal(fs.existsSync(path.join(dir, 'containerd.sock')) && sh('ss', ['-xl'], { netns, allowFail: true }).includes(`${dir}/containerd.sock`), false, 'containerd is gone');
    const uid = fs.readFileSync(path.join(dir, 'pki', 'admin.kubeconfig'), 'utf8');
    await runUp();
    assert.equal(fs.readFileSync(path.join(dir, 'pki', 'admin.kubeconfig'), 'utf8'), uid, 'same PKI');
    assert.match(fs.readFileSync(out, 'utf8'), /tskube\/app:1: present/);
    assert.match(kubectl(['get', 'deployment', 'hello']), /hello\s+/);
    await waitFor(() => /web-up-node\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])) && /hello-\S+\s+1\/1\s+Running/.test(kubectl(['get', 'pods'])), 120_000, 500, 'pods running again');
    assert.equal(await interrupt(), 0);
    up = undefined;
  });
});
