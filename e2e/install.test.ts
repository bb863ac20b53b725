// e2e: scripts/install.sh into a scratch prefix: the compiled CLI runs from
// its own install (runtime dependencies only), and systemd-analyze verify
// accepts the installed units.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { REPO } from './harness.js';
import { sh } from './proc.js';

const skip = process.getuid?.() !== 0 ? 'needs root' : spawnSync('sh', ['-c', 'command -v systemd-analyze']).status !== 0 ? 'systemd-analyze missing (Debian package systemd)' : undefined;

describe('install', { skip, timeout: 10 * 60_000 }, () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-install-'));
  const dirs = { prefix: path.join(root, 'opt'), bin: path.join(root, 'bin'), units: path.join(root, 'units'), etc: path.join(root, 'etc') };
  // No network in here: npm installs from its cache (filled by the checkout's `npm ci`), nothing leaves the machine.
  const netns = `tskube-inst-${randomBytes(3).toString('hex')}`;
  before(() => void sh('ip', ['netns', 'add', netns]));
  after(() => {
    sh('ip', ['netns', 'del', netns], { allowFail: true });
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('install.sh compiles the CLI with its runtime dependencies, and the units pass systemd-analyze verify', () => {
    const r = spawnSync('nsenter', [`--net=/run/netns/${netns}`, 'bash', path.join(REPO, 'scripts/install.sh'), `--prefix=${dirs.prefix}`, `--bin=${dirs.bin}`, `--units=${dirs.units}`, `--etc=${dirs.etc}`], {
      encoding: 'utf8',
      timeout: 8 * 60_000,
      env: { ...process.env, npm_config_offline: 'true' },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(fs.existsSync(path.join(dirs.prefix, 'node_modules', 'typescript')), false, 'no dev dependencies');
    const help = spawnSync(path.join(dirs.bin, 'tskube'), ['--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: tskube up\|join\|reset\|agent\|proxy\|apiserver/);
    assert.equal(fs.existsSync(path.join(dirs.prefix, 'node_modules', 'tsx')), false, 'the runtime never loads tsx');
    // The compiled kubelet loads the CRI schema from its own install.
    const cri = spawnSync(process.execPath, ['-e', `import(${JSON.stringify(path.join(dirs.prefix, 'dist/agent/cri/client.js'))}).then((m) => { m.loadCri(); console.log('ok'); })`], { encoding: 'utf8' });
    assert.equal(cri.stdout.trim(), 'ok', cri.stderr);
    const units = ['tskube-agent.service', 'tskube-proxy.service', 'tskube-apiserver.service', 'tskube-join.service'].map((u) => path.join(dirs.units, u));
    for (const u of units) assert.match(fs.readFileSync(u, 'utf8'), new RegExp(`ExecStart=${dirs.bin}/tskube `));
    assert.match(fs.readFileSync(units[0]!, 'utf8'), /After=containerd\.service/);
    assert.match(fs.readFileSync(units[0]!, 'utf8'), new RegExp(`--config=${dirs.etc}/kubelet-config.yaml`));
    const v = spawnSync('systemd-analyze', ['verify', ...units], { encoding: 'utf8' });
    // Warnings about units this machine lacks (containerd.service in a bare CI container) are not errors.
    assert.equal(v.status, 0, v.stderr);
    for (const c of ['kubelet-config.yaml', 'kube-proxy-config.yaml', 'apiserver.env', 'join.env']) assert.ok(fs.existsSync(path.join(dirs.etc, c)), c);
    // The shipped configs are what the CLI accepts.
    const cfgCheck = spawnSync(process.execPath, ['-e', `import(${JSON.stringify(path.join(dirs.prefix, 'dist/cli/agent-config.js'))}).then((m) => { const c = m.loadAgentConfig(['--config=${path.join(dirs.etc, 'kubelet-config.yaml')}'], (w) => { throw new Error(w); }); console.log(c.staticPodPath, c.clientCAFile); })`], { encoding: 'utf8' });
    assert.equal(cfgCheck.stdout.trim(), '/etc/kubernetes/manifests /var/lib/tskube/pki/pki/ca.crt', cfgCheck.stderr);
  });
});
