// e2e: a cluster of netns VMs on one LAN with the real control plane on VM 1 (with
// the image registry joined nodes pull from, and tskube's cluster DNS), for tests and
// the conformance runner. Nodes join with the line `tskube token create` prints.
import fs from 'node:fs';
import path from 'node:path';

import type { Node } from 'kubernetes-types/core/v1.js';

import { registryConfig } from '../cli/containerd-config.js';
import { REPO } from './harness.js';
import { start, waitFor } from './proc.js';
import { UpstreamControlPlane } from './upstream-control-plane.js';
import type { Lan, Vm } from './vms.js';

/** `tskube <args>` run in a VM, its output. */
export const tskubeIn = (vm: Vm, args: string[], timeoutMs = 120_000): string =>
  vm.exec(process.execPath, ['--import', 'tsx', path.join(REPO, 'cli/tskube.ts'), ...args], { timeoutMs });

/** The arguments of a printed `tskube join …` line. */
export const joinArgs = (line: string): string[] => line.trim().split(/\s+/).slice(1);

/**
 * The registry joined nodes mirror 127.0.0.1:5000 from: pushes on the VM's loopback, pulls on its address.
 * Holds tskube's images; `upstreamImages` adds the fixtures' (the control plane's and the e2e suite's).
 */
export async function startRegistry(vm: Vm, o: { upstreamImages?: boolean } = {}): Promise<void> {
  const dir = path.join(vm.dir, 'registry');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.yml'), registryConfig(path.join(dir, 'data'), '127.0.0.1:5000'));
  fs.writeFileSync(
    path.join(dir, 'config-lan.yml'),
    registryConfig(path.join(dir, 'data'), `${vm.ip}:5000`, { readOnly: true }),
  );
  for (const c of ['config.yml', 'config-lan.yml']) {
    const p = start('docker-registry', ['serve', path.join(dir, c)], path.join(dir, `${c}.log`), { netns: vm.netns });
    vm.extraPids.push(p.pid);
  }
  vm.record();
  await waitFor(() => vm.httpGet(`http://${vm.ip}:5000/v2/`) !== '' || undefined, 20_000, 200, 'registry up');
  const workDir = `--work-dir=${path.join(dir, 'images')}`;
  tskubeIn(vm, ['images', '--registry=127.0.0.1:5000', workDir]);
  if (o.upstreamImages)
    vm.exec(
      process.execPath,
      ['--import', 'tsx', path.join(REPO, 'scripts/upstream.ts'), 'images', '--registry=127.0.0.1:5000', workDir],
      { timeoutMs: 300_000 },
    );
}

/** The real control plane, its registry and tskube's DNS on a new VM `vm-1` (192.0.2.1) of `lan`. */
export async function startUpstreamControlPlane(
  lan: Lan,
  o: { upstreamImages?: boolean; proxy?: boolean } = {},
): Promise<{ vm: Vm; cp: UpstreamControlPlane }> {
  const vm = await lan.vm('vm-1', '192.0.2.1');
  const cp = new UpstreamControlPlane(vm);
  await cp.start();
  await startRegistry(vm, o);
  cp.startDns((args) => tskubeIn(vm, args));
  if (o.proxy) cp.startProxy();
  return { vm, cp };
}

/** `tskube token create --print-join-command` against the control plane: its whole output. */
export const tokenCreate = (cp: UpstreamControlPlane): string =>
  cp.vm.exec(
    'sh',
    [
      '-c',
      `${process.execPath} --import tsx ${path.join(REPO, 'cli/tskube.ts')} token create --print-join-command --kubeconfig=${cp.adminConf} 2>&1`,
    ],
    { timeoutMs: 60_000 },
  );

/** The `tskube join …` line in that output. */
export function joinLine(tokenCreateOutput: string): string {
  const m = /tskube join .*$/m.exec(tokenCreateOutput);
  if (!m) throw new Error(`no join line in:\n${tokenCreateOutput}`);
  return m[0];
}

/**
 * Routes the nodes' pod CIDRs from the control plane's VM through each node, so the apiserver reaches pods (its
 * pods/proxy and services/proxy, webhooks) as on a kubeadm host, where the control plane runs on a node.
 */
export function routePodNetworks(vm: Vm, kubectl: (args: string[]) => string): void {
  const nodes = JSON.parse(kubectl(['get', 'nodes', '-o', 'json'])) as { items: Node[] };
  for (const n of nodes.items) {
    const ip = n.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    for (const cidr of n.spec?.podCIDRs ?? [])
      if (ip && ip !== vm.ip) vm.exec('ip', ['route', 'replace', cidr, 'via', ip]);
  }
}
