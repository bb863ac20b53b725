// `tskube join https://<server>:<port> --token … --discovery-token-ca-cert-hash sha256:…`:
// a worker joins the cluster `tskube up` (or kubeadm) made. Token discovery
// first, before anything is written; then containerd (started when none
// answers, with the first node's registry mirrored), the kubelet through TLS
// bootstrap, the kube-proxy and the pod network. Ctrl-C stops what it started;
// running it again reuses the node's credentials.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { clientConfigValid } from '../agent/node/tls-bootstrap.js';
import { KubeApiError, KubeClient } from '../kube/client.js';
import { parseNodeIPs } from '../kube/node-ips.js';
import { firstIPv4 } from '../kube/platform.js';
import { startProxy } from '../proxy/main.js';
import {
  bootstrapKubeconfig,
  type DiscoveredCluster,
  fetchClusterInfo,
  parsePins,
  verifyClusterInfo,
} from './discovery.js';
import { commaList, durationFlag, parseBool, parseFlags, splitArgs } from './flags.js';
import { NodeRunner, REGISTRY_PORT } from './node-runner.js';
import { Progress } from './progress.js';
import { loadProxyConfig } from './proxy-config.js';

export const JOIN_FLAGS: Record<string, string> = {
  token: 'the bootstrap token, <id>.<secret> (`tskube token create` on the first node)',
  'discovery-token-ca-cert-hash':
    "sha256:<hex> of the cluster CA's public key, to pin it; several may be given, comma-separated",
  'discovery-token-unsafe-skip-ca-verification':
    "trust whatever CA cluster-info names (only the token's signature is checked). Default false",
  'data-dir': "containerd's state when join starts it, the CNI config, credentials, logs. Default /var/lib/tskube",
  'container-runtime-endpoint':
    'CRI socket; when nothing answers there, join starts containerd on it. Default unix:///run/containerd/containerd.sock',
  'hostname-override': 'node name. Default: the hostname',
  'node-ip':
    'node address (the kubelet, host-gw routes to this node); an IPv4,IPv6 pair in a dual-stack cluster. Default: the first non-loopback IPv4',
  'root-dir': 'kubelet state. Default /var/lib/kubelet',
  'pod-logs-dir': 'container logs. Default /var/log/pods',
  'pod-stop-timeout':
    'on Ctrl-C or SIGTERM, how long pods may take to stop: each gets its terminationGracePeriodSeconds, at most this. Default 30s',
  'cgroup-root': "the kubelet's --cgroup-root: the cgroup under which kubepods is made. Default /",
  'proxy-mode': "the kube-proxy's mode: iptables or nftables. Default iptables",
  'pod-manifest-path': 'static pod manifests. Default /etc/kubernetes/manifests',
  'pod-network': 'host-gw, vxlan or none, as the first node. Default host-gw',
  'cni-conf-dir':
    'where the pod network writes its CNI config. Default <data-dir>/cni when join starts containerd, else /etc/cni/net.d',
  'cluster-dns':
    'the cluster DNS Service address pods resolve through (kubelet clusterDNS). Default 10.96.0.10, as tskube up and kubeadm',
  'cluster-domain': "the cluster's DNS domain (kubelet clusterDomain). Default cluster.local",
  'registry-mirror': `where the first node's registry answers, mirrored as 127.0.0.1:${REGISTRY_PORT}. Default <server host>:${REGISTRY_PORT}`,
};
const BOOLEANS = ['discovery-token-unsafe-skip-ca-verification'];

/** kubeadm join's endpoint: https://host:port or host:port. */
export function parseServer(arg: string | undefined): URL {
  if (!arg)
    throw new Error(
      'give the apiserver to join: tskube join https://<server>:<port> --token <id>.<secret> --discovery-token-ca-cert-hash sha256:<hex>',
    );
  let u: URL;
  try {
    u = new URL(/^[a-z]+:\/\//.test(arg) ? arg : `https://${arg}`);
  } catch {
    throw new Error(`"${arg}" is not an apiserver address (https://<host>:<port>)`);
  }
  if (u.protocol !== 'https:') throw new Error(`"${arg}": the apiserver is reached over https`);
  if (!u.port) u.port = '6443';
  return u;
}

/** Fails, as kubeadm join's kubelet-start phase, when a Ready Node already has this name. */
async function checkNameFree(c: DiscoveredCluster, token: string, nodeName: string): Promise<void> {
  const client = new KubeClient({ server: c.server, ca: Buffer.from(c.caPem), token });
  try {
    const n = await client.get(`/api/v1/nodes/${nodeName}`);
    const ready = (n.status?.conditions ?? []).some(
      (x: { type: string; status: string }) => x.type === 'Ready' && x.status === 'True',
    );
    if (ready)
      throw new Error(
        `a Node with name "${nodeName}" and status "Ready" already exists in the cluster. You must delete the existing Node or change the name of this new joining Node (--hostname-override)`,
      );
  } catch (e) {
    // 404: the name is free; 403: this control plane does not let tokens read Nodes (no kubeadm:get-nodes), as kubeadm goes on.
    if (e instanceof KubeApiError && (e.code === 404 || e.code === 403)) return;
    throw e;
  } finally {
    client.close();
  }
}

export async function runJoin(argv: string[]): Promise<void> {
  const { positional, flags } = splitArgs(argv, BOOLEANS);
  const f = parseFlags(flags, JOIN_FLAGS);
  if (positional.length > 1) throw new Error(`one apiserver address expected, got ${positional.join(' ')}`);
  const server = parseServer(positional[0]);
  if (process.getuid?.() !== 0)
    throw new Error(
      'tskube join must run as root: it starts containerd, mounts volumes and programs iptables and routes',
    );
  const data = path.resolve(f.get('data-dir') ?? '/var/lib/tskube');
  const endpoint = f.get('container-runtime-endpoint') ?? 'unix:///run/containerd/containerd.sock';
  const nodeName = (f.get('hostname-override') ?? os.hostname()).toLowerCase();
  // One address, or a dual-stack pair for a dual-stack cluster (the kubelet's --node-ip).
  const nodeIP = parseNodeIPs(f.get('node-ip') ?? '').join(',') || firstIPv4();
  const rootDir = path.resolve(f.get('root-dir') ?? '/var/lib/kubelet');
  const manifests = path.resolve(f.get('pod-manifest-path') ?? '/etc/kubernetes/manifests');
  const kubeconfig = path.join(data, 'kubelet.conf');
  const bootFile = path.join(data, 'bootstrap-kubelet.conf');
  const caFile = path.join(data, 'pki', 'ca.crt');
  const mirror = f.get('registry-mirror') ?? `${server.hostname}:${REGISTRY_PORT}`;
  const reuse = clientConfigValid(kubeconfig) && fs.existsSync(caFile);
  const token = f.get('token');
  const skipCA = parseBool(
    f.get('discovery-token-unsafe-skip-ca-verification') ?? 'false',
    'discovery-token-unsafe-skip-ca-verification',
  );
  const pins = parsePins(commaList(f.get('discovery-token-ca-cert-hash') ?? ''));
  if (!reuse) {
    if (!token)
      throw new Error(
        '--token: the bootstrap token is required (tskube token create --print-join-command on the first node prints the whole line)',
      );
    if (!pins.length && !skipCA)
      throw new Error(
        'using token-based discovery without --discovery-token-ca-cert-hash can be unsafe; pass the hash, or --discovery-token-unsafe-skip-ca-verification to continue',
      );
  }
  const progress = new Progress(5);

  // Discovery writes nothing until the cluster is trusted: a wrong token or hash leaves no trace.
  await progress.step(`discovery: cluster-info from ${server.origin}`, async (note) => {
    if (reuse) return note(`using the credentials in ${kubeconfig} (delete it to join again with a token)`);
    const unverified = await fetchClusterInfo(server.origin);
    const cluster = verifyClusterInfo(unverified, token!, skipCA ? [] : pins);
    // As kubeadm: read it again, now over a connection that trusts the CA, from the server it names.
    const confirmed = await fetchClusterInfo(cluster.server, cluster.caPem).catch((e: Error) => {
      throw new Error(`cluster-info names ${cluster.server}, which does not answer with that CA: ${e.message}`);
    });
    if (confirmed.kubeconfig !== unverified.kubeconfig)
      throw new Error(`cluster-info at ${cluster.server} differs from the one just verified; not trusting it`);
    await checkNameFree(cluster, token!, nodeName);
    fs.mkdirSync(path.dirname(caFile), { recursive: true });
    fs.writeFileSync(caFile, cluster.caPem);
    fs.writeFileSync(bootFile, bootstrapKubeconfig(cluster, token!), { mode: 0o600 });
    note(
      `signature by token ${token!.split('.')[0]} verified${skipCA ? ' (CA not pinned: --discovery-token-unsafe-skip-ca-verification)' : ', CA pinned by its hash'}; apiserver ${cluster.server}`,
    );
  });

  const run = new NodeRunner('join', {
    data,
    endpoint,
    rootDir,
    podStopTimeoutSec: durationFlag(f, 'pod-stop-timeout', '30s') / 1000,
  });
  run.handleSignals();
  try {
    await progress.step('containerd', (note) => run.ensureContainerd(note, mirror));

    await progress.step('kubelet (TLS bootstrap)', async (note) => {
      const cfg = await run.startKubelet(
        {
          nodeName,
          nodeIP,
          manifests,
          podLogsDir: path.resolve(f.get('pod-logs-dir') ?? '/var/log/pods'),
          cgroupRoot: f.get('cgroup-root'),
          podNetwork: f.get('pod-network') ?? 'host-gw',
          cniConfDir: f.get('cni-conf-dir'),
          auth: [`--bootstrap-kubeconfig=${bootFile}`, `--kubeconfig=${kubeconfig}`, `--client-ca-file=${caFile}`],
          clusterDNS: f.get('cluster-dns') ?? '10.96.0.10',
          clusterDomain: f.get('cluster-domain') ?? 'cluster.local',
          configExtra: 'rotateCertificates: true\n',
        },
        note,
      );
      note(
        `node ${nodeName} (${nodeIP}): client certificate in ${cfg.certDir}/kubelet-client-current.pem, API on :${cfg.port}, pod network ${cfg.podNetwork}`,
      );
    });

    run.proxy = await progress.step(`kube-proxy (${f.get('proxy-mode') ?? 'iptables'})`, async (note) => {
      const cfg = loadProxyConfig(
        [
          `--kubeconfig=${kubeconfig}`,
          `--hostname-override=${nodeName}`,
          `--proxy-mode=${f.get('proxy-mode') ?? 'iptables'}`,
        ],
        (m) => note(`warning: ${m}`),
      );
      const p = await startProxy(cfg, run.fileLog('kube-proxy'));
      note("with the node's credentials");
      return p;
    });

    await progress.step(`waiting for node ${nodeName} to be Ready`, (note) =>
      run.waitReady(kubeconfig, nodeName, note),
    );
    process.stdout.write(`
This node has joined the cluster: node ${nodeName} is Ready.
* Certificate signing request was sent to apiserver and a response was received.
* The kubelet, the kube-proxy and the pod network run with the node's credentials (${kubeconfig}).

Run 'kubectl get nodes' on the control plane to see this node join the cluster.
Logs: ${run.logs}/{kubelet,kube-proxy${run
      .ownedNames()
      .map((n) => `,${n}`)
      .join('')}}.log
Ctrl-C stops what join started; \`tskube join\` again reuses ${data}.
`);
  } catch (e) {
    await run.fail(e as Error);
  }
}
