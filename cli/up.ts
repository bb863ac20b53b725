// `tskube up`: the embedded default on this machine. containerd (started with
// a generated config when nothing answers on the CRI socket), a local image
// registry with the demo images, the dev apiserver with its controllers
// (Node,RBAC and NodeRestriction), the kubelet and the kube-proxy, all in this
// process; then the admin kubeconfig is printed. Ctrl-C stops what it started.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CriClient } from '../agent/cri/client.js';
import { startApiServer, type RunningApiServer } from '../apiserver/main.js';
import { buildImage, IMAGES, pushImage } from '../images/build.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { createLogger, type Logger } from '../kube/log.js';
import { firstIPv4 } from '../kube/platform.js';
import { startProxy, type RunningProxy } from '../proxy/main.js';
import { loadAgentConfig } from './agent-config.js';
import { startAgent, type RunningAgent } from './agent.js';
import { registryConfig, writeContainerdFiles } from './containerd-config.js';
import { parseFlags } from './flags.js';
import { Progress } from './progress.js';
import { unmountAll } from '../agent/volumes/mounts.js';
import { loadProxyConfig } from './proxy-config.js';

export const UP_FLAGS: Record<string, string> = {
  'data-dir': 'everything up keeps: apiserver data and PKI, kubeconfigs, logs, images, the registry, and containerd\'s state when up starts it. Default /var/lib/tskube',
  'pod-manifest-path': 'static pod manifests. Default ./static-manifests if it exists, else /etc/kubernetes/manifests',
  'container-runtime-endpoint': 'CRI socket; when nothing answers there, up starts containerd on it. Default unix:///run/containerd/containerd.sock',
  'hostname-override': 'node name. Default: the hostname',
  'node-ip': 'node address (apiserver, kubelet). Default: the first non-loopback IPv4',
  'secure-port': 'apiserver port. Default 6443',
  'cluster-cidr': 'pod network; this node uses its first /24. Default 10.244.0.0/16',
  'root-dir': 'kubelet state. Default /var/lib/kubelet',
  'pod-logs-dir': 'container logs. Default /var/log/pods',
};

export const REGISTRY = '127.0.0.1:5000';

interface Owned {
  proc: ChildProcess;
  name: string;
}

function spawnLogged(cmd: string, args: string[], logFile: string): ChildProcess {
  const fd = fs.openSync(logFile, 'a');
  const p = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  return p;
}

async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined>, tick?: (elapsed: number) => void): Promise<T> {
  const t0 = Date.now();
  let lastTick = t0;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined && v !== false) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${Math.round(ms / 1000)}s waiting for ${what}`);
    if (tick && Date.now() - lastTick >= 5000) {
      lastTick = Date.now();
      tick(Date.now() - t0);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function httpOk(url: string): Promise<boolean> {
  const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
  return r.ok;
}

const stopChild = (p: ChildProcess, ms = 10_000): Promise<void> =>
  new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    p.kill('SIGTERM');
  });

export async function runUp(argv: string[]): Promise<void> {
  const f = parseFlags(argv, UP_FLAGS);
  if (process.getuid?.() !== 0) throw new Error('tskube up must run as root: it starts containerd, mounts volumes and programs iptables');
  const data = path.resolve(f.get('data-dir') ?? '/var/lib/tskube');
  const manifests = path.resolve(f.get('pod-manifest-path') ?? (fs.existsSync('static-manifests') ? 'static-manifests' : '/etc/kubernetes/manifests'));
  const endpoint = f.get('container-runtime-endpoint') ?? 'unix:///run/containerd/containerd.sock';
  const socket = endpoint.replace(/^unix:\/\//, '');
  const nodeName = (f.get('hostname-override') ?? os.hostname()).toLowerCase();
  const nodeIP = f.get('node-ip') ?? firstIPv4();
  const port = Number(f.get('secure-port') ?? 6443);
  const clusterCIDR = f.get('cluster-cidr') ?? '10.244.0.0/16';
  const podSubnet = clusterCIDR.replace(/^(\d+\.\d+)\.\d+\.\d+\/\d+$/, '$1.0.0/24');
  const logs = path.join(data, 'logs');
  for (const d of [data, logs, manifests]) fs.mkdirSync(d, { recursive: true });
  const owned: Owned[] = [];
  const progress = new Progress(7);
  const fileLog = (component: string): Logger => createLogger(component, { sink: (l) => fs.appendFileSync(path.join(logs, `${component}.log`), `${l}\n`) });

  let apiserver: RunningApiServer | undefined;
  let agent: RunningAgent | undefined;
  let proxy: RunningProxy | undefined;
  let stopping = false;
  const rootDir = path.resolve(f.get('root-dir') ?? '/var/lib/kubelet');
  const stopAll = async (): Promise<void> => {
    await proxy?.stop().catch(() => undefined);
    await agent?.stop().catch(() => undefined);
    await apiserver?.stop().catch(() => undefined);
    const containerd = owned.find((o) => o.name === 'containerd');
    if (containerd) {
      // Our containerd: stop the pods too, so nothing outlives `up` (the next `up` starts them again).
      const cri = new CriClient({ endpoint, timeoutMs: 30_000 });
      for (const sb of await cri.listPodSandbox().catch(() => [])) {
        await cri.stopPodSandbox(sb.id).catch(() => undefined);
        await cri.removePodSandbox(sb.id).catch(() => undefined);
      }
      cri.close();
      // Their secret and token tmpfs mounts go with them (the next `up` sets the volumes up again).
      await unmountAll(path.join(rootDir, 'pods')).catch(() => undefined);
    }
    for (const o of owned.reverse()) await stopChild(o.proc);
  };
  const onSignal = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${sig}: stopping the kube-proxy, the kubelet, the apiserver${owned.length ? ` and ${owned.map((o) => o.name).join(', ')}` : ''} ...\n`);
    void stopAll().then(
      () => {
        process.stdout.write('stopped; `tskube up` again picks up where this left off.\n');
        process.exit(0);
      },
      (e: Error) => {
        process.stderr.write(`stopping: ${e.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  try {
    await progress.step('containerd', async (note) => {
      const probe = new CriClient({ endpoint, timeoutMs: 3000 });
      const v = await probe.version().catch(() => undefined);
      probe.close();
      if (v) return note(`using the running ${v.runtime_name} ${v.runtime_version} on ${socket} (its sandbox_image must be pullable)`);
      const dir = path.join(data, 'containerd');
      const config = path.join(dir, 'config.toml');
      writeContainerdFiles(
        { root: path.join(dir, 'root'), state: path.join(dir, 'state'), socket, sandboxImage: `${REGISTRY}/tskube/pause:1`, cniConfDir: path.join(data, 'cni'), certsDir: path.join(dir, 'certs.d') },
        config,
        { bridge: 'tskube0', subnet: podSubnet, ipamDir: path.join(data, 'ipam'), ipMasq: true },
        REGISTRY,
      );
      fs.mkdirSync(path.dirname(socket), { recursive: true });
      owned.push({ name: 'containerd', proc: spawnLogged('containerd', ['--config', config], path.join(logs, 'containerd.log')) });
      const cri = new CriClient({ endpoint, timeoutMs: 2000 });
      const started = await until('containerd', 30_000, async () => (fs.existsSync(socket) ? cri.version() : undefined));
      cri.close();
      note(`started ${started.runtime_name} ${started.runtime_version}: config ${config}, socket ${socket}, pod subnet ${podSubnet}`);
    });

    await progress.step(`image registry on ${REGISTRY}`, async (note) => {
      if (await httpOk(`http://${REGISTRY}/v2/`).catch(() => false)) return note('using the one already running');
      const dir = path.join(data, 'registry');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'config.yml'), registryConfig(path.join(dir, 'data'), REGISTRY));
      owned.push({ name: 'registry', proc: spawnLogged('docker-registry', ['serve', path.join(dir, 'config.yml')], path.join(logs, 'registry.log')) });
      await until('the registry', 20_000, () => httpOk(`http://${REGISTRY}/v2/`));
      note(`started docker-registry, storage in ${path.join(dir, 'data')}`);
    });

    await progress.step('images (built locally from busybox, never pulled from the internet)', async (note) => {
      for (const spec of IMAGES) {
        const ref = `${REGISTRY}/${spec.name}:${spec.tag}`;
        const have = await fetch(`http://${REGISTRY}/v2/${spec.name}/manifests/${spec.tag}`, { method: 'HEAD', headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' }, signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
        if (have) {
          note(`${ref}: present`);
          continue;
        }
        const t0 = Date.now();
        const img = buildImage(spec, path.join(data, 'images'));
        pushImage(img, REGISTRY);
        note(`${ref}: built and pushed (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
      }
    });

    apiserver = await progress.step('apiserver and controllers', async (note) => {
      const a = await startApiServer({
        certDir: path.join(data, 'pki'),
        dataDir: path.join(data, 'apiserver'),
        bindAddress: '0.0.0.0',
        securePort: port,
        advertiseAddress: nodeIP,
        serviceClusterIpRange: '10.96.0.0/12',
        nodeNames: [nodeName],
        authorizationModes: ['Node', 'RBAC'],
        admissionPlugins: ['NodeRestriction'],
        controllers: ['*'],
        log: (l) => fs.appendFileSync(path.join(logs, 'apiserver.log'), `${new Date().toISOString()} ${l}\n`),
      });
      note(`serving on ${a.url} (Node,RBAC authorization, NodeRestriction); data in ${path.join(data, 'apiserver')}`);
      return a;
    });
    const pki = path.join(data, 'pki');

    agent = await progress.step('kubelet', async (note) => {
      const cfgFile = path.join(data, 'kubelet-config.yaml');
      fs.writeFileSync(cfgFile, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${path.resolve(f.get('pod-logs-dir') ?? '/var/log/pods')}\n`);
      const cfg = loadAgentConfig(
        [
          `--config=${cfgFile}`,
          `--hostname-override=${nodeName}`,
          `--node-ip=${nodeIP}`,
          `--kubeconfig=${path.join(pki, `node-${nodeName}.kubeconfig`)}`,
          `--client-ca-file=${path.join(pki, 'pki', 'ca.crt')}`,
          `--pod-manifest-path=${manifests}`,
          `--container-runtime-endpoint=${endpoint}`,
          `--root-dir=${rootDir}`,
        ],
        (m) => note(`warning: ${m}`),
      );
      const a = await startAgent(cfg, fileLog('kubelet'));
      note(`node ${nodeName} (${nodeIP}), static pods from ${manifests}, API on :${cfg.port}`);
      return a;
    });

    proxy = await progress.step('kube-proxy (iptables)', async (note) => {
      const cfg = loadProxyConfig([`--kubeconfig=${path.join(pki, 'kube-proxy.kubeconfig')}`, `--hostname-override=${nodeName}`, `--cluster-cidr=${clusterCIDR}`], (m) => note(`warning: ${m}`));
      const p = await startProxy(cfg, fileLog('kube-proxy'));
      note(`Services for cluster CIDR ${clusterCIDR}`);
      return p;
    });

    const admin = apiserver.kubeconfigs['kubernetes-admin']!;
    await progress.step(`waiting for node ${nodeName} to be Ready`, async (note) => {
      const client = new KubeClient(loadKubeconfig(admin));
      try {
        await until(
          `node ${nodeName} Ready`,
          180_000,
          async () => {
            const n = await client.get(`/api/v1/nodes/${nodeName}`);
            return n.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') || undefined;
          },
          (ms) => note(`still waiting (${Math.round(ms / 1000)}s): see ${path.join(logs, 'kubelet.log')}`),
        );
      } finally {
        client.close();
      }
    });

    process.stdout.write(`
tskube is up: node ${nodeName} is Ready.

  export KUBECONFIG=${admin}
  kubectl get nodes

Static pods: drop manifests into ${manifests}. Images: ${REGISTRY}/tskube/app:1 serves HTTP on 8080.
Logs: ${logs}/{apiserver,kubelet,kube-proxy${owned.map((o) => `,${o.name}`).join('')}}.log
Ctrl-C stops everything; \`tskube up\` again reuses ${data} and loses nothing.
`);
  } catch (e) {
    process.stderr.write(`tskube up failed: ${(e as Error).message}\n`);
    await stopAll();
    process.exit(1);
  }
}
