// `tskube install`: what a plain Debian machine with Debian's containerd
// needs before the systemd units can run pods (scripts/install.sh runs it
// after installing the units). containerd gets tskube's config (CNI dirs,
// SystemdCgroup matching the kubelet's cgroupDriver, the offline pause image
// from the node's registry, plain HTTP to that registry or to the first
// node's); the node's configs are written where they do not exist yet.
import fs from 'node:fs';
import path from 'node:path';

import { firstIPv4 } from '../kube/platform.js';
import { containerdConfig, hostsToml, registryConfig } from './containerd-config.js';
import { dnsServiceIP } from './dns-addon.js';
import { parseFlags } from './flags.js';
import { REGISTRY, REGISTRY_PORT } from './node-runner.js';

/** The Service range the dev apiserver defaults to, and its kube-dns address (kubeadm's defaults too). */
const SERVICE_CIDR = '10.96.0.0/12';
const DNS_SERVICE_IP = dnsServiceIP(SERVICE_CIDR);

export const INSTALL_FLAGS: Record<string, string> = {
  role: "control-plane (registry, images, apiserver, kubelet, kube-proxy), worker (tskube join), or kubeadm (containerd for kubeadm's images; kubeadm runs tskube as the kubelet, see docs/kubeadm.md). Default control-plane",
  'node-ip':
    "this node's address: the apiserver's --advertise-address on a control plane. Default: the first non-loopback IPv4",
  'registry-mirror': `worker: where the first node's registry answers (host:port), mirrored as ${REGISTRY}; required for workers`,
  'cgroup-driver':
    'cgroupfs or systemd, for the kubelet and containerd alike. Default systemd where systemd is the init system, else cgroupfs',
  'cluster-cidr': "the pods' address range (the apiserver gives each Node a /24 of it). Default 10.244.0.0/16",
  etc: 'where the tskube configs go. Default /etc/tskube',
  'containerd-config':
    "containerd's config file, replaced (the old one kept as <file>.orig). Default /etc/containerd/config.toml",
  'cni-conf-dir':
    "containerd's CNI config dir, where the kubelet writes the pod network's conflist. Default /etc/cni/net.d",
  'data-dir': "tskube's state (PKI, objects, the registry's storage). Default /var/lib/tskube",
};

export const OURS_MARK = '# Written by tskube install';

/** The sandbox image kubeadm v1.37 expects the runtime to use (its preflight warns about any other). */
export const KUBEADM_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10.2';

export interface InstallPlan {
  role: 'control-plane' | 'worker' | 'kubeadm';
  nodeIP: string;
  mirror?: string;
  cgroupDriver: 'cgroupfs' | 'systemd';
  clusterCIDR: string;
  etc: string;
  containerdConfig: string;
  cniConfDir: string;
  dataDir: string;
}

/** The files to write, path → content; `keep` ones are left alone when they exist (the user's edits win). Pure. */
export function installFiles(p: InstallPlan): { path: string; content: string; keep: boolean; mode?: number }[] {
  const certsDir = path.join(path.dirname(p.containerdConfig), 'certs.d');
  const files = [
    {
      path: p.containerdConfig,
      content: `${OURS_MARK} for the kubelet (cgroupDriver: ${p.cgroupDriver}); the original is beside it as config.toml.orig.\n${containerdConfig(
        {
          root: '/var/lib/containerd',
          state: '/run/containerd',
          socket: '/run/containerd/containerd.sock',
          sandboxImage: p.role === 'kubeadm' ? KUBEADM_PAUSE_IMAGE : `${REGISTRY}/tskube/pause:1`,
          cniConfDir: p.cniConfDir,
          certsDir,
          systemdCgroup: p.cgroupDriver === 'systemd',
        },
      )}`,
      keep: false,
    },
    { path: path.join(certsDir, REGISTRY, 'hosts.toml'), content: hostsToml(REGISTRY, p.mirror), keep: false },
  ];
  // kubeadm writes the kubelet's configuration itself (/var/lib/kubelet/config.yaml).
  if (p.role === 'kubeadm') return files;
  files.push({
    path: path.join(p.etc, 'kubelet-config.yaml'),
    content: `# tskube agent configuration: a kubelet.config.k8s.io/v1beta1 KubeletConfiguration.
# Supported fields: docs/kubelet-config.md. --kubeconfig comes from the unit.
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: /etc/kubernetes/manifests
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
# As containerd's runc SystemdCgroup (tskube install writes both).
cgroupDriver: ${p.cgroupDriver}
authentication:
  x509:
    # The CA that signed the apiserver's kubelet client certificate (tskube apiserver: ${p.dataDir}/pki/pki/ca.crt).
    clientCAFile: ${p.dataDir}/pki/pki/ca.crt
# The cluster DNS (tskube-dns on the control plane, through the kube-dns Service), as kubeadm's kubelets have it.
clusterDNS: [${DNS_SERVICE_IP}]
clusterDomain: cluster.local
`,
    keep: true,
  });
  if (p.role === 'worker') return files;
  return [
    ...files,
    {
      path: path.join(p.etc, 'apiserver.env'),
      content: `# Extra flags for \`tskube apiserver\` (see README): the secure defaults of a real cluster, this node's address
# in its certificate and kubeconfigs, and a podCIDR for every Node (the kubelet's pod network needs one).
TSKUBE_APISERVER_ARGS="--advertise-address=${p.nodeIP} --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allocate-node-cidrs=true --cluster-cidr=${p.clusterCIDR}"
`,
      keep: true,
    },
    {
      path: path.join(p.etc, 'dns.env'),
      content: `# Extra flags for \`tskube dns\` (docs/dns.md): served on this node's address, published as kube-dns's endpoint,
# answering the pod and Service ranges (and loopback, this host and the cluster's nodes).
TSKUBE_DNS_ARGS="--dns-address=${p.nodeIP}:53 --metrics-address=${p.nodeIP}:9153 --health-address=127.0.0.1:8080 --ready-address=127.0.0.1:8181 --publish-address=${p.nodeIP} --allow-from=${p.clusterCIDR},${SERVICE_CIDR}"
`,
      keep: true,
    },
    // Pushes only from this machine; the node's address (what joining nodes and the LAN reach) serves pulls only.
    {
      path: path.join(p.etc, 'registry.yml'),
      content: registryConfig(path.join(p.dataDir, 'registry'), REGISTRY),
      keep: true,
    },
    {
      path: path.join(p.etc, 'registry-lan.yml'),
      content: registryConfig(path.join(p.dataDir, 'registry'), `${p.nodeIP}:${REGISTRY_PORT}`, { readOnly: true }),
      keep: true,
    },
  ];
}

export function installPlan(argv: string[], o: { hasSystemd: boolean; firstIP: () => string }): InstallPlan {
  const f = parseFlags(argv, INSTALL_FLAGS);
  const role = f.get('role') ?? 'control-plane';
  if (role !== 'control-plane' && role !== 'worker' && role !== 'kubeadm')
    throw new Error(`--role: must be control-plane, worker or kubeadm, got "${role}"`);
  const cgroupDriver = f.get('cgroup-driver') ?? (o.hasSystemd ? 'systemd' : 'cgroupfs');
  if (cgroupDriver !== 'cgroupfs' && cgroupDriver !== 'systemd')
    throw new Error(`--cgroup-driver: must be cgroupfs or systemd, got "${cgroupDriver}"`);
  const mirror = f.get('registry-mirror');
  if (role === 'worker' && !mirror)
    throw new Error(
      `--registry-mirror is required with --role=worker: the first node's registry (<its ip>:${REGISTRY_PORT}), where this node gets the pause image`,
    );
  return {
    role,
    nodeIP: f.get('node-ip') ?? o.firstIP(),
    mirror,
    cgroupDriver,
    clusterCIDR: f.get('cluster-cidr') ?? '10.244.0.0/16',
    etc: path.resolve(f.get('etc') ?? '/etc/tskube'),
    containerdConfig: path.resolve(f.get('containerd-config') ?? '/etc/containerd/config.toml'),
    cniConfDir: path.resolve(f.get('cni-conf-dir') ?? '/etc/cni/net.d'),
    dataDir: path.resolve(f.get('data-dir') ?? '/var/lib/tskube'),
  };
}

export async function runInstall(argv: string[]): Promise<void> {
  const plan = installPlan(argv, { hasSystemd: fs.existsSync('/run/systemd/system'), firstIP: firstIPv4 });
  const say = (s: string): void => void process.stdout.write(`[install] ${s}\n`);
  fs.mkdirSync(plan.cniConfDir, { recursive: true });
  for (const file of installFiles(plan)) {
    const exists = fs.existsSync(file.path);
    if (exists && file.keep) {
      say(`kept ${file.path} (delete it to have it written again)`);
      continue;
    }
    if (
      exists &&
      file.path === plan.containerdConfig &&
      !fs.readFileSync(file.path, 'utf8').startsWith(OURS_MARK) &&
      !fs.existsSync(`${file.path}.orig`)
    ) {
      fs.renameSync(file.path, `${file.path}.orig`);
      say(`moved the existing ${file.path} to ${file.path}.orig`);
    }
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    fs.writeFileSync(file.path, file.content);
    say(`wrote ${file.path}`);
  }
  const next: Record<InstallPlan['role'], string> = {
    'control-plane':
      'systemctl enable --now tskube-registry tskube-registry-lan tskube-images tskube-apiserver tskube-dns tskube-agent tskube-proxy',
    worker: 'systemctl enable --now tskube-join',
    kubeadm: 'systemctl enable kubelet, then kubeadm init or join (docs/kubeadm.md)',
  };
  say(
    `${plan.role} at ${plan.nodeIP}, cgroup driver ${plan.cgroupDriver}${plan.mirror ? `, images from ${plan.mirror}` : ''}. Next: systemctl restart containerd && ${next[plan.role]}`,
  );
}
