// bench:footprint's floor for "kubelet CPU per API pod started": the least a
// node agent does for each pod, from a bare script in its own process with the
// kubelet's engine settings and its CRI and REST clients. It watches the pods
// bound to its node; for each: RunPodSandbox, PodSandboxStatus (the IP),
// CreateContainer, StartContainer, then one status patch saying Running. No
// events, volumes, probes, PLEG, cgroups or retries: the kubelet's CPU above
// this is its further calls and its own logic. Started in the node's network
// namespace by bench/footprint.ts; prints a JSON line when ready and one per
// target count reached, with its CPU since the first pod of that batch; runs
// until killed.
import fs from 'node:fs';
import path from 'node:path';

import { CriClient } from '../agent/cri/client.js';
import { L_POD_UID } from '../agent/pods/labels.js';
import { applyEngineSettings, KUBELET_ENGINE } from '../cli/engine-flags.js';
import { type KObj, KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';

applyEngineSettings(KUBELET_ENGINE);

const args = process.argv.slice(2);
if (args.length !== 5) throw new Error('usage: pod-floor KUBECONFIG CRI-SOCKET NODE LOGS-DIR N1[,N2…]');
const [kubeconfig, socket, nodeName, logsDir, targetsArg] = args as [string, string, string, string, string];
const targets = targetsArg.split(',').map(Number);

const client = new KubeClient(loadKubeconfig(kubeconfig));
const cri = new CriClient({ endpoint: socket, timeoutMs: 60_000 });
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function startPod(pod: KObj): Promise<void> {
  const md = pod.metadata as { name: string; namespace: string; uid: string };
  const spec = pod.spec as { containers: { name: string; image: string; command?: string[]; args?: string[] }[] };
  const sandboxConfig = {
    metadata: { name: md.name, uid: md.uid, namespace: md.namespace, attempt: 0 },
    hostname: md.name,
    log_directory: path.join(logsDir, `${md.namespace}_${md.name}_${md.uid}`),
    labels: { [L_POD_UID]: md.uid },
    linux: {
      security_context: {
        namespace_options: { network: 'POD' as const, pid: 'CONTAINER' as const, ipc: 'POD' as const },
      },
    },
  };
  fs.mkdirSync(sandboxConfig.log_directory, { recursive: true });
  const sandbox = await cri.runPodSandbox(sandboxConfig, md.uid);
  const ip = (await cri.podSandboxStatus(sandbox, md.uid)).status?.network?.ip ?? '';
  const statuses = [];
  for (const c of spec.containers) {
    const id = await cri.createContainer(
      sandbox,
      {
        metadata: { name: c.name, attempt: 0 },
        image: { image: c.image },
        command: c.command ?? [],
        args: c.args ?? [],
        labels: { [L_POD_UID]: md.uid },
        log_path: `${c.name}/0.log`,
      },
      sandboxConfig,
      md.uid,
    );
    await cri.startContainer(id, md.uid);
    statuses.push({
      name: c.name,
      image: c.image,
      imageID: '',
      containerID: `containerd://${id}`,
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: new Date().toISOString() } },
    });
  }
  const now = new Date().toISOString();
  const status = {
    phase: 'Running',
    podIP: ip,
    podIPs: ip ? [{ ip }] : [],
    startTime: now,
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastTransitionTime: now,
    })),
    containerStatuses: statuses,
  };
  await client.patch(
    `/api/v1/namespaces/${md.namespace}/pods/${md.name}/status`,
    { metadata: { uid: md.uid }, status },
    'strategic',
  );
}

/** The node the scheduler binds to: Ready, with room for the pods (a heartbeat is not needed for a minute's run). */
async function registerNode(): Promise<void> {
  const now = new Date().toISOString();
  const resources = { cpu: '16', memory: '64Gi', pods: '250' };
  const node = await client.create('/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux' } },
  });
  const status = {
    capacity: resources,
    allocatable: resources,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'pod-floor',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
  };
  await client.patch(`/api/v1/nodes/${nodeName}/status`, { metadata: { uid: node.metadata.uid }, status }, 'strategic');
}

async function main(): Promise<void> {
  await registerNode();
  const list = await client.get('/api/v1/pods', { fieldSelector: `spec.nodeName=${nodeName}` });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  let done = 0;
  let next = 0;
  let batchCpu: number | undefined;
  const seen = new Set<string>();
  for await (const e of client.watch('/api/v1/pods', {
    fieldSelector: `spec.nodeName=${nodeName}`,
    resourceVersion: (list.metadata as KObj).resourceVersion as string,
  })) {
    if (e.type !== 'ADDED' || seen.has(e.object.metadata.uid as string)) continue;
    seen.add(e.object.metadata.uid as string);
    batchCpu ??= cpuMs();
    startPod(e.object).then(
      () => {
        done++;
        if (done !== targets[next]) return;
        process.stdout.write(`${JSON.stringify({ pods: done, cpuMs: cpuMs() - batchCpu! })}\n`);
        batchCpu = undefined;
        next++;
      },
      (err: Error) => {
        process.stderr.write(`pod-floor: ${e.object.metadata.name}: ${err.message}\n`);
        process.exit(1);
      },
    );
  }
}

main().catch((e: Error) => {
  process.stderr.write(`pod-floor: ${e.stack}\n`);
  process.exit(1);
});
