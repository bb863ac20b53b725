// `tskube up`: the embedded default on this machine. containerd (started with
// a generated config when nothing answers on the CRI socket), a local image
// registry with the demo images, the dev apiserver with its controllers
// (Node,RBAC and NodeRestriction), the cluster DNS, the kubelet and the kube-proxy, all in this
// process; then the admin kubeconfig is printed. Ctrl-C stops what it started.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { validateClusterCidr } from '../apiserver/controllers/node-ipam.js';
import { startApiServer } from '../apiserver/main.js';
import { startDns } from '../dns/main.js';
import { perFamilyCidrs } from '../kube/cidr.js';
import { parseNodeIPs } from '../kube/node-ips.js';
import { firstIPv4 } from '../kube/platform.js';
import { startProxy } from '../proxy/main.js';
import { registryConfig } from './containerd-config.js';
import { ensureDemoImages } from './demo-images.js';
import { dnsServiceIP, ensureDnsAddon } from './dns-addon.js';
import { loadDnsConfig } from './dns-config.js';
import { durationFlag, parseFlags } from './flags.js';
import { criAnswers, DEFAULT_CRI_ENDPOINT, httpOk, NodeRunner, REGISTRY, REGISTRY_PORT, until } from './node-runner.js';
import { Progress } from './progress.js';
import { loadProxyConfig } from './proxy-config.js';
import { runToken } from './token.js';

export const UP_FLAGS: Record<string, string> = {
  'data-dir':
    "everything up keeps: apiserver data and PKI, kubeconfigs, logs, images, the registry, and containerd's state when up starts it. Default /var/lib/tskube",
  'pod-manifest-path': 'static pod manifests. Default ./static-manifests if it exists, else /etc/kubernetes/manifests',
  'container-runtime-endpoint':
    'CRI socket; when nothing answers there, up starts containerd on it. Default: unix:///run/containerd/containerd.sock when a containerd answers there, else up starts one on unix://<data-dir>/containerd/containerd.sock',
  'hostname-override': 'node name. Default: the hostname',
  'node-ip':
    'node address (apiserver, kubelet); an IPv4,IPv6 pair for dual stack (the apiserver advertises the first). Default: the first non-loopback IPv4',
  'secure-port': 'apiserver port. Default 6443',
  'cluster-cidr':
    'pod network: every node gets a /24 of it as spec.podCIDR (node IPAM); two comma-separated CIDRs, one per IP family, for dual stack (a /64 of the IPv6 one each). Default 10.244.0.0/16',
  'service-cidr':
    "Service cluster IPs (the apiserver's --service-cluster-ip-range); two comma-separated CIDRs, one per IP family, for dual-stack Services. Default 10.96.0.0/12",
  'pod-network': 'host-gw (routes between nodes on one LAN), vxlan, or none (an installed CNI). Default host-gw',
  'cni-conf-dir':
    'where the pod network writes its CNI config. Default <data-dir>/cni when up starts containerd, else /etc/cni/net.d',
  'root-dir': 'kubelet state. Default <data-dir>/kubelet',
  'cluster-domain': 'the cluster DNS zone (kubelet clusterDomain). Default cluster.local',
  'dns-upstream':
    'comma-separated resolvers the cluster DNS forwards other names to (ip or ip:port). Default: the nameservers of /etc/resolv.conf',
  'pod-logs-dir': 'container logs. Default <data-dir>/pod-logs',
  'pod-stop-timeout':
    'on Ctrl-C or SIGTERM, how long pods may take to stop: each gets its terminationGracePeriodSeconds, at most this. Default 30s',
  'cgroup-root': "the kubelet's --cgroup-root: the cgroup under which kubepods is made. Default /",
  'proxy-mode': "the kube-proxy's mode: iptables or nftables. Default iptables",
};

export async function runUp(argv: string[]): Promise<void> {
  const f = parseFlags(argv, UP_FLAGS);
  if (process.getuid?.() !== 0)
    throw new Error('tskube up must run as root: it starts containerd, mounts volumes and programs iptables');
  const data = path.resolve(f.get('data-dir') ?? '/var/lib/tskube');
  const manifests = path.resolve(
    f.get('pod-manifest-path') ??
      (fs.existsSync('static-manifests') ? 'static-manifests' : '/etc/kubernetes/manifests'),
  );
  // A containerd already running on the usual socket is used; otherwise ours keeps its socket in the data dir.
  const endpoint =
    f.get('container-runtime-endpoint') ??
    ((await criAnswers(DEFAULT_CRI_ENDPOINT))
      ? DEFAULT_CRI_ENDPOINT
      : `unix://${path.join(data, 'containerd', 'containerd.sock')}`);
  const nodeName = (f.get('hostname-override') ?? os.hostname()).toLowerCase();
  const nodeIPs = parseNodeIPs(f.get('node-ip') ?? '');
  const nodeIP = nodeIPs[0] ?? firstIPv4();
  const port = Number(f.get('secure-port') ?? 6443);
  const clusterCIDR = f.get('cluster-cidr') ?? '10.244.0.0/16';
  const serviceCIDR = perFamilyCidrs(f.get('service-cidr') ?? '10.96.0.0/12', '--service-cidr').join(',');
  const podNetwork = f.get('pod-network') ?? 'host-gw';
  // A bad pod range is refused before anything starts.
  const dual = perFamilyCidrs(clusterCIDR, '--cluster-cidr').length === 2;
  validateClusterCidr(
    { clusterCidr: clusterCIDR, ...(dual ? {} : { nodeCidrMaskSize: 24 }) },
    serviceCIDR,
    nodeIPs.length ? nodeIPs : [nodeIP],
  );
  for (const d of [data, manifests]) fs.mkdirSync(d, { recursive: true });
  const rootDir = path.resolve(f.get('root-dir') ?? path.join(data, 'kubelet'));
  const run = new NodeRunner('up', {
    data,
    endpoint,
    rootDir,
    podStopTimeoutSec: durationFlag(f, 'pod-stop-timeout', '30s') / 1000,
  });
  const logs = run.logs;
  const progress = new Progress(8);
  run.handleSignals();

  try {
    await progress.step('containerd', (note) => run.ensureContainerd(note));

    await progress.step(`image registry on ${REGISTRY}`, async (note) => {
      if (await httpOk(`http://${REGISTRY}/v2/`).catch(() => false)) return note('using the one already running');
      const dir = path.join(data, 'registry');
      fs.mkdirSync(dir, { recursive: true });
      // Pushes only from this machine (loopback); joined nodes pull the same storage from a read-only listener on the
      // node's address, through their containerd's mirror of it.
      fs.writeFileSync(path.join(dir, 'config.yml'), registryConfig(path.join(dir, 'data'), REGISTRY));
      fs.writeFileSync(
        path.join(dir, 'config-lan.yml'),
        registryConfig(path.join(dir, 'data'), `${nodeIP}:${REGISTRY_PORT}`, { readOnly: true }),
      );
      run.spawn('registry', 'docker-registry', ['serve', path.join(dir, 'config.yml')]);
      run.spawn('registry-lan', 'docker-registry', ['serve', path.join(dir, 'config-lan.yml')]);
      await until('the registry', 20_000, () => httpOk(`http://${REGISTRY}/v2/`));
      await until('the read-only registry', 20_000, () => httpOk(`http://${nodeIP}:${REGISTRY_PORT}/v2/`));
      note(
        `started docker-registry on ${REGISTRY} (pushes) and read-only on ${nodeIP}:${REGISTRY_PORT} (joined nodes mirror ${REGISTRY} from it), storage in ${path.join(dir, 'data')}`,
      );
    });

    await progress.step('images (built locally from busybox, never pulled from the internet)', (note) =>
      ensureDemoImages(REGISTRY, path.join(data, 'images'), note),
    );

    const apiserver = await progress.step('apiserver and controllers', async (note) => {
      const a = await startApiServer({
        certDir: path.join(data, 'pki'),
        dataDir: path.join(data, 'apiserver'),
        bindAddress: '0.0.0.0',
        securePort: port,
        advertiseAddress: nodeIP,
        serviceClusterIpRange: serviceCIDR,
        nodeNames: [nodeName],
        authorizationModes: ['Node', 'RBAC'],
        admissionPlugins: ['NodeRestriction'],
        controllers: ['*'],
        // As kubeadm: nodes get podCIDRs here, and a joining node reads cluster-info before it has credentials.
        allocateNodeCidrs: true,
        clusterCidr: clusterCIDR,
        anonymousAuth: true,
        // The local-path provisioner's volumes, as k3s keeps them under its data dir.
        localStoragePath: path.join(data, 'storage'),
        log: (l) => fs.appendFileSync(path.join(logs, 'apiserver.log'), `${new Date().toISOString()} ${l}\n`),
      });
      note(
        `serving on ${a.url} (Node,RBAC authorization, NodeRestriction); podCIDRs from ${clusterCIDR}; data in ${path.join(data, 'apiserver')}`,
      );
      return a;
    });
    run.apiserver = apiserver;
    const pki = path.join(data, 'pki');
    const clusterDomain = f.get('cluster-domain') ?? 'cluster.local';
    const dnsIP = dnsServiceIP(serviceCIDR.split(',')[0]!);

    run.dns = await progress.step('cluster DNS', async (note) => {
      // On the node's address, so pods on every node reach it through the kube-dns Service.
      await ensureDnsAddon(apiserver.kubeconfigs['kubernetes-admin']!, dnsIP, 53, 9153);
      const cfg = loadDnsConfig([
        `--kubeconfig=${path.join(pki, 'coredns.kubeconfig')}`,
        `--cluster-domain=${clusterDomain}`,
        `--dns-address=${nodeIP}:53`,
        `--metrics-address=${nodeIP}:9153`,
        '--health-address=127.0.0.1:8080',
        '--ready-address=127.0.0.1:8181',
        `--publish-address=${nodeIP}`,
        `--hostname-override=${nodeName}`,
        // Pods (any node's, through the kube-dns Service) and the Service range; loopback and this node always.
        `--allow-from=${clusterCIDR},${serviceCIDR}`,
        ...(f.get('dns-upstream') ? [`--upstream=${f.get('dns-upstream')}`] : []),
      ]);
      const d = await startDns(cfg, run.fileLog('dns'));
      note(
        `kube-system/kube-dns ${dnsIP} -> ${nodeIP}:53, zone ${clusterDomain}, other names forwarded to ${cfg.upstreams.join(', ') || `the nameservers of ${cfg.resolvConf}`}`,
      );
      return d;
    });

    await progress.step('kubelet', async (note) => {
      const cfg = await run.startKubelet(
        {
          nodeName,
          nodeIP: nodeIPs.join(',') || nodeIP,
          manifests,
          podLogsDir: path.resolve(f.get('pod-logs-dir') ?? path.join(data, 'pod-logs')),
          cgroupRoot: f.get('cgroup-root'),
          podNetwork,
          cniConfDir: f.get('cni-conf-dir'),
          auth: [
            `--kubeconfig=${path.join(pki, `node-${nodeName}.kubeconfig`)}`,
            `--client-ca-file=${path.join(pki, 'pki', 'ca.crt')}`,
          ],
          clusterDNS: dnsIP,
          clusterDomain,
        },
        note,
      );
      note(
        `node ${nodeName} (${nodeIP}), static pods from ${manifests}, API on :${cfg.port}, pod network ${cfg.podNetwork} (CNI config in ${cfg.cniConfDir})`,
      );
    });

    run.proxy = await progress.step(`kube-proxy (${f.get('proxy-mode') ?? 'iptables'})`, async (note) => {
      const cfg = loadProxyConfig(
        [
          `--kubeconfig=${path.join(pki, 'kube-proxy.kubeconfig')}`,
          `--hostname-override=${nodeName}`,
          `--cluster-cidr=${clusterCIDR}`,
          `--proxy-mode=${f.get('proxy-mode') ?? 'iptables'}`,
        ],
        (m) => note(`warning: ${m}`),
      );
      const p = await startProxy(cfg, run.fileLog('kube-proxy'));
      note(`Services for cluster CIDR ${clusterCIDR}`);
      return p;
    });

    const admin = apiserver.kubeconfigs['kubernetes-admin']!;
    await progress.step(`waiting for node ${nodeName} to be Ready`, (note) => run.waitReady(admin, nodeName, note));

    let join = '';
    await runToken(
      ['create', '--print-join-command', '--kubeconfig', admin, '--description', 'made by tskube up'],
      (s) => (join += s),
    ).catch((e: Error) => (join = `(no join command: ${e.message})\n`));
    process.stdout.write(`
tskube is up: node ${nodeName} is Ready.

  export KUBECONFIG=${admin}
  kubectl get nodes

Static pods: drop manifests into ${manifests}. Images: ${REGISTRY}/tskube/app:1 serves HTTP on 8080.
Logs: ${logs}/{apiserver,dns,kubelet,kube-proxy${run
      .ownedNames()
      .map((n) => `,${n}`)
      .join('')}}.log
Ctrl-C stops everything; \`tskube up\` again reuses ${data} and loses nothing.

To add a node, run this on it (the token is valid for 24 h; \`tskube token create --print-join-command\` makes another):

  ${join.trim()}
`);
  } catch (e) {
    await run.fail(e as Error);
  }
}
