// The containerd (CRI plugin) and CNI configuration tskube writes when it runs
// containerd itself: `tskube up`, and the e2e harness's per-node containerd.
// Pods get a bridge with host-local IPAM and portmap; the local registry is
// reached over plain HTTP.
import fs from 'node:fs';
import path from 'node:path';

import { CONFLIST_NAME, podConflist } from '../agent/network/plan.js';

export interface ContainerdLayout {
  root: string;
  state: string;
  /** unix socket path (no scheme) */
  socket: string;
  sandboxImage: string;
  cniConfDir: string;
  cniBinDir?: string;
  /** containerd's registry config_path (hosts.toml per registry). */
  certsDir: string;
  /** 127.0.0.1 keeps the exec/attach/port-forward server off the network. */
  streamAddress?: string;
  /** runc puts containers in systemd slices (the kubelet's cgroupDriver: systemd). */
  systemdCgroup?: boolean;
  /** More runc handlers beside the default "runc", for RuntimeClasses; `root` is that runc's state directory. */
  runtimes?: Record<string, { root?: string }>;
}

function extraRuntimes(l: ContainerdLayout): string {
  return Object.entries(l.runtimes ?? {})
    .map(
      ([name, r]) => `    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${name}]
      runtime_type = "io.containerd.runc.v2"
${
  r.root
    ? `      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.${name}.options]
        Root = "${r.root}"
`
    : ''
}`,
    )
    .join('');
}

export function containerdConfig(l: ContainerdLayout): string {
  return `version = 2
root = "${l.root}"
state = "${l.state}"
[grpc]
  address = "${l.socket}"
[ttrpc]
  address = "${l.socket}.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${l.sandboxImage}"
  restrict_oom_score_adj = true
  stream_server_address = "${l.streamAddress ?? '127.0.0.1'}"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${l.cniBinDir ?? '/usr/lib/cni'}"
    conf_dir = "${l.cniConfDir}"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${l.certsDir}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
${
  l.systemdCgroup
    ? `      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
`
    : ''
}${extraRuntimes(l)}`;
}

/**
 * Writes config.toml, the plain-HTTP hosts.toml for `registry` (served by `mirror` when given: a joined node pulls
 * the README's 127.0.0.1:5000 names from the first node's registry) and, when `net` is given, a fixed CNI conflist
 * (the e2e harness; `up` and `join` leave it to the agent's pod network, which writes it for the Node's podCIDR).
 */
export function writeContainerdFiles(
  l: ContainerdLayout,
  configFile: string,
  net: { bridge: string; subnet: string; ipamDir: string; ipMasq: boolean } | undefined,
  registry: string,
  mirror?: string,
): void {
  for (const d of [l.root, l.state, l.cniConfDir, path.join(l.certsDir, registry), path.dirname(configFile)])
    fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(configFile, containerdConfig(l));
  if (net) {
    fs.mkdirSync(net.ipamDir, { recursive: true });
    fs.writeFileSync(
      path.join(l.cniConfDir, CONFLIST_NAME),
      podConflist({ podCIDRs: [net.subnet], ipamDir: net.ipamDir, bridge: net.bridge, ipMasq: net.ipMasq }),
    );
  }
  fs.writeFileSync(path.join(l.certsDir, registry, 'hosts.toml'), hostsToml(registry, mirror));
}

/** containerd's hosts.toml: `registry` over plain HTTP, from `mirror` when given. */
export function hostsToml(registry: string, mirror?: string): string {
  const host = mirror ?? registry;
  return `server = "http://${registry}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n  skip_verify = true\n`;
}

/** docker-registry (distribution) serving `dir` on `addr`; `readOnly` refuses pushes and deletes (pull-only). */
export function registryConfig(dir: string, addr: string, o: { readOnly?: boolean } = {}): string {
  return `version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: ${dir}
  delete:
    enabled: ${o.readOnly ? 'false' : 'true'}
${o.readOnly ? '  maintenance:\n    readonly:\n      enabled: true\n' : ''}http:
  addr: "${addr}"
`;
}
