// Benchmark (the kubelet's CPU per pod): the CRI messages of a pod's
// start, converted and encoded (requests) or decoded and converted
// (responses) by agent/cri/message-codec.ts against the baseline, protobufjs's
// fromObject+encode / decode+toObject with the same options, measured in the
// same run. Each side runs in its own `node` with the kubelet's engine flags
// (baseline compiler only), so the first call of each message pays what it
// pays in a starting kubelet (protobufjs generates its code then).
// Figures: first call, mean of calls 2–30 (a scale-up's pods), mean of calls
// 501–1000 (steady), in µs. Run: npm run bench:cri-codec
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Pod } from 'kubernetes-types/core/v1.js';
import protobuf from 'protobufjs';

import { type MessageCodec, messageCodec } from '../agent/cri/message-codec.js';
import { buildContainerConfig, buildSandboxConfig } from '../agent/pods/cri-config.js';
import { assetPath } from '../kube/assets.js';
import { runBench } from './stats.js';

const CALLS = 1000;
const CONVERSION: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

const pod: Pod = {
  metadata: {
    name: 'load-7d9f-abcde',
    namespace: 'default',
    uid: '6c1f0e1e-1b7a-4f0e-9a55-0c3b7c1d2e3f',
    labels: { app: 'load', 'pod-template-hash': '7d9f' },
    annotations: { 'kubernetes.io/config.source': 'api' },
  },
  spec: {
    containers: [
      {
        name: 'app',
        image: '127.0.0.1:5000/tskube/app:1',
        command: ['sleep', '36000'],
        terminationMessagePath: '/dev/termination-log',
      },
    ],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
  },
};
const env = new Map(
  Object.entries({
    KUBERNETES_SERVICE_HOST: '10.96.0.1',
    KUBERNETES_SERVICE_PORT: '443',
    KUBERNETES_PORT: 'tcp://10.96.0.1:443',
    KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
    KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
    KUBERNETES_PORT_443_TCP_PORT: '443',
    KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
  }),
);
const mounts = ['/var/run/secrets/kubernetes.io/serviceaccount', '/etc/hosts', '/dev/termination-log'].map((p, i) => ({
  container_path: p,
  host_path: `/var/lib/kubelet/pods/uid/volumes/v${i}`,
  readonly: i === 0,
  selinux_relabel: false,
  propagation: 'PROPAGATION_PRIVATE' as const,
}));
const node = { nodeName: 'node-a', podLogsDir: '/var/log/pods', rootDir: '/var/lib/kubelet', hostIP: '10.0.0.1' };
const sandboxConfig = buildSandboxConfig(pod, 0, node);
const container = (i: number) => ({
  id: i.toString(16).padStart(64, 'c'),
  pod_sandbox_id: i.toString(16).padStart(64, 's'),
  metadata: { name: 'app', attempt: 0 },
  image: { image: `sha256:${'a'.repeat(64)}` },
  image_ref: `sha256:${'a'.repeat(64)}`,
  state: 'CONTAINER_RUNNING',
  created_at: '1764940000000000000',
  labels: {
    'io.kubernetes.pod.name': `load-${i}`,
    'io.kubernetes.pod.namespace': 'default',
    'io.kubernetes.pod.uid': `uid-${i}`,
    'io.kubernetes.container.name': 'app',
  },
  annotations: {
    'io.kubernetes.container.hash': '1f2e3d4c',
    'io.kubernetes.container.restartCount': '0',
    'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
    'io.kubernetes.pod.terminationGracePeriod': '30',
  },
});

/** [message type, what the kubelet sends or gets, request (encoded) or response (decoded)] */
const CASES: [string, string, 'encode' | 'decode', object][] = [
  ['runtime.v1.RunPodSandboxRequest', 'RunPodSandbox request', 'encode', { config: sandboxConfig }],
  [
    'runtime.v1.CreateContainerRequest',
    'CreateContainer request',
    'encode',
    {
      pod_sandbox_id: 'f'.repeat(64),
      config: buildContainerConfig(
        pod,
        pod.spec!.containers[0]!,
        'container',
        0,
        `sha256:${'a'.repeat(64)}`,
        env,
        mounts,
      ),
      sandbox_config: sandboxConfig,
    },
  ],
  [
    'runtime.v1.PodSandboxStatusResponse',
    'PodSandboxStatus response',
    'decode',
    {
      status: {
        id: 'f'.repeat(64),
        metadata: sandboxConfig.metadata,
        state: 'SANDBOX_READY',
        created_at: '1764940000000000000',
        network: { ip: '10.244.0.7', additional_ips: [] },
        linux: { namespaces: { options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
        labels: sandboxConfig.labels,
        annotations: sandboxConfig.annotations,
      },
    },
  ],
  [
    'runtime.v1.ContainerStatusResponse',
    'ContainerStatus response',
    'decode',
    {
      status: {
        ...container(1),
        started_at: '1764940000100000000',
        mounts,
        log_path: 'app/0.log',
        resources: { linux: { memory_limit_in_bytes: '0', cpu_shares: '2' } },
      },
    },
  ],
  [
    'runtime.v1.ListContainersResponse',
    'ListContainers response, 30 containers',
    'decode',
    { containers: Array.from({ length: 30 }, (_, i) => container(i)) },
  ],
  [
    'runtime.v1.ListContainersResponse',
    'ListContainers response, 110 containers',
    'decode',
    { containers: Array.from({ length: 110 }, (_, i) => container(i)) },
  ],
];

type Side = 'protobufjs' | 'codec';
interface Timing {
  first: number;
  early: number;
  steady: number;
}

function root(): protobuf.Root {
  const r = protobuf.Root.fromJSON(
    JSON.parse(fs.readFileSync(path.join(assetPath('proto'), 'cri/api.json'), 'utf8')) as protobuf.INamespace,
  );
  r.resolveAll();
  return r;
}

/** In a child: one side's timings for every case, as JSON on stdout. */
function measure(side: Side): Timing[] {
  const r = root();
  // The bytes to decode come from another copy of the schema: protobufjs's first call below must be its first.
  const wire = root();
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
  return CASES.map(([type, , dir, o]) => {
    const t = r.lookupType(type);
    const w = wire.lookupType(type);
    const bytes = Buffer.from(w.encode(w.fromObject(o)).finish());
    const codec: MessageCodec =
      side === 'codec'
        ? messageCodec(t)
        : {
            encode: (x) => Buffer.from(t.encode(t.fromObject(x)).finish()),
            decode: (b) => t.toObject(t.decode(b), CONVERSION),
          };
    const run = dir === 'encode' ? () => codec.encode(o) : () => codec.decode(bytes);
    const us: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t0 = process.hrtime.bigint();
      run();
      us.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    return { first: us[0]!, early: mean(us.slice(1, 30)), steady: mean(us.slice(500)) };
  });
}

runBench(async () => {
  const side = process.argv[2] as Side | undefined;
  if (side) {
    process.stdout.write(JSON.stringify(measure(side)));
    return;
  }
  const self = fileURLToPath(import.meta.url);
  const run = (s: Side): Timing[] => {
    // The kubelet's engine: V8's baseline compiler as the top tier (cli/engine-flags.ts).
    const r = spawnSync(process.execPath, ['--max-opt=1', '--import', 'tsx', self, s], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${s}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Timing[];
  };
  const base = run('protobufjs');
  const ours = run('codec');
  const f = (x: number): string => `${x.toFixed(0)} µs`.padStart(9);
  process.stdout.write(`CRI messages of a pod's start (kubelet engine flags; protobufjs is the baseline)\n`);
  process.stdout.write(
    `${'message'.padEnd(40)} | ${'call'.padEnd(10)} | protobufjs |     codec | ratio\n${'-'.repeat(86)}\n`,
  );
  for (const [i, [, what]] of CASES.entries()) {
    for (const k of ['first', 'early', 'steady'] as const) {
      const label = k === 'first' ? 'first' : k === 'early' ? '2–30' : '501–1000';
      process.stdout.write(
        `${(k === 'first' ? what : '').padEnd(40)} | ${label.padEnd(10)} | ${f(base[i]![k])}  | ${f(ours[i]![k])} | ${(ours[i]![k] / base[i]![k]).toFixed(2)}\n`,
      );
    }
  }
  const sum = (t: Timing[], k: keyof Timing): number => t.reduce((a, x) => a + x[k], 0);
  process.stdout.write(
    `\nall first calls: protobufjs ${sum(base, 'first').toFixed(0)} µs, codec ${sum(ours, 'first').toFixed(0)} µs (${(sum(ours, 'first') / sum(base, 'first')).toFixed(2)})\n`,
  );
});
