import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';

import protobuf from 'protobufjs';

import { CriClient, CriError, MAX_MSG_BYTES } from './client.js';
import { FakeRuntime } from './fake-runtime.js';

let rt: FakeRuntime;
let cri: CriClient;
before(async () => {
  rt = new FakeRuntime();
  cri = new CriClient({ endpoint: await rt.start(), timeoutMs: 2000 });
});
after(async () => {
  cri.close();
  await rt.stop();
});

test('calls go over the unix socket and return typed results', async () => {
  const v = await cri.version();
  assert.equal(v.runtime_name, 'fake');
  const id = await cri.runPodSandbox(
    { metadata: { name: 'p', uid: 'u1', namespace: 'default', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'u1' } },
    'default/p',
  );
  const list = await cri.listPodSandbox({ label_selector: { 'io.kubernetes.pod.uid': 'u1' } });
  assert.deepEqual(
    list.map((s) => s.id),
    [id],
  );
  assert.equal(list[0]!.state, 'SANDBOX_READY');
});

test('errors name the call and the pod, and keep the gRPC code', async () => {
  await assert.rejects(cri.containerStatus('nope', 'default/web'), (e: unknown) => {
    assert.ok(e instanceof CriError);
    assert.equal(e.call, 'ContainerStatus');
    assert.ok(e.notFound);
    assert.match(e.message, /^CRI ContainerStatus for pod default\/web failed: container nope not found/);
    return true;
  });
});

test('every call has a deadline', async () => {
  rt.delayMs = 3000;
  const t0 = Date.now();
  await assert.rejects(
    cri.listContainers(),
    (e: unknown) => e instanceof CriError && e.code === 4 /* DEADLINE_EXCEEDED */ && e.call === 'ListContainers',
  );
  assert.ok(Date.now() - t0 < 2900);
  rt.delayMs = 0;
});

test('responses above the 4 MiB gRPC default but under 16 MiB are accepted', async () => {
  const big = 'x'.repeat(6 * 1024 * 1024);
  rt.hooks.set('ExecSync', () => ({ stdout: Buffer.from(big), stderr: Buffer.alloc(0), exit_code: 0 }));
  const r = await cri.execSync('c', ['cat'], 5);
  assert.equal(Buffer.from(r.stdout).length, big.length);
  rt.hooks.set('ExecSync', () => ({
    stdout: Buffer.alloc(MAX_MSG_BYTES + 1024),
    stderr: Buffer.alloc(0),
    exit_code: 0,
  }));
  await assert.rejects(cri.execSync('c', ['cat'], 5), /ExecSync/);
  rt.hooks.delete('ExecSync');
});

// Field numbers copied from upstream k8s.io/cri-api runtime/v1 api.proto: the wire contract.
const UPSTREAM_FIELDS: Record<string, Record<string, number>> = {
  PodSandboxConfig: {
    metadata: 1,
    hostname: 2,
    log_directory: 3,
    dns_config: 4,
    port_mappings: 5,
    labels: 6,
    annotations: 7,
    linux: 8,
  },
  PodSandboxMetadata: { name: 1, uid: 2, namespace: 3, attempt: 4 },
  LinuxSandboxSecurityContext: {
    namespace_options: 1,
    selinux_options: 2,
    run_as_user: 3,
    readonly_rootfs: 4,
    supplemental_groups: 5,
    privileged: 6,
    run_as_group: 8,
    seccomp: 9,
    apparmor: 10,
    supplemental_groups_policy: 11,
  },
  ContainerConfig: {
    metadata: 1,
    image: 2,
    command: 3,
    args: 4,
    working_dir: 5,
    envs: 6,
    mounts: 7,
    devices: 8,
    labels: 9,
    annotations: 10,
    log_path: 11,
    stdin: 12,
    stdin_once: 13,
    tty: 14,
    linux: 15,
  },
  LinuxContainerSecurityContext: {
    capabilities: 1,
    privileged: 2,
    namespace_options: 3,
    selinux_options: 4,
    run_as_user: 5,
    run_as_username: 6,
    readonly_rootfs: 7,
    supplemental_groups: 8,
    no_new_privs: 11,
    run_as_group: 12,
    masked_paths: 13,
    readonly_paths: 14,
    seccomp: 15,
    apparmor: 16,
  },
  ContainerStatus: {
    id: 1,
    metadata: 2,
    state: 3,
    created_at: 4,
    started_at: 5,
    finished_at: 6,
    exit_code: 7,
    image: 8,
    image_ref: 9,
    reason: 10,
    message: 11,
    labels: 12,
    annotations: 13,
    mounts: 14,
    log_path: 15,
    image_id: 17,
  },
  Container: {
    id: 1,
    pod_sandbox_id: 2,
    metadata: 3,
    image: 4,
    image_ref: 5,
    state: 6,
    created_at: 7,
    labels: 8,
    annotations: 9,
    image_id: 10,
  },
  PodSandboxStatus: {
    id: 1,
    metadata: 2,
    state: 3,
    created_at: 4,
    network: 5,
    linux: 6,
    labels: 7,
    annotations: 8,
    runtime_handler: 9,
  },
  PodSandboxStatusResponse: { status: 1, info: 2, containers_statuses: 3, timestamp: 4 },
  ImageSpec: { image: 1, annotations: 2, user_specified_image: 18, runtime_handler: 19 },
  Image: { id: 1, repo_tags: 2, repo_digests: 3, size: 4, uid: 5, username: 6, spec: 7, pinned: 8 },
  PullImageRequest: { image: 1, auth: 2, sandbox_config: 3 },
  StopContainerRequest: { container_id: 1, timeout: 2 },
  ExecSyncRequest: { container_id: 1, cmd: 2, timeout: 3 },
  ExecSyncResponse: { stdout: 1, stderr: 2, exit_code: 3 },
  LinuxContainerResources: {
    cpu_period: 1,
    cpu_quota: 2,
    cpu_shares: 3,
    memory_limit_in_bytes: 4,
    oom_score_adj: 5,
    cpuset_cpus: 6,
    cpuset_mems: 7,
    hugepage_limits: 8,
    unified: 9,
    memory_swap_limit_in_bytes: 10,
  },
  Mount: {
    container_path: 1,
    host_path: 2,
    readonly: 3,
    selinux_relabel: 4,
    propagation: 5,
    uidMappings: 6,
    gidMappings: 7,
    recursive_read_only: 8,
    image: 9,
  },
  ExecRequest: { container_id: 1, cmd: 2, tty: 3, stdin: 4, stdout: 5, stderr: 6 },
  ExecResponse: { url: 1 },
  AttachRequest: { container_id: 1, stdin: 2, tty: 3, stdout: 4, stderr: 5 },
  PortForwardRequest: { pod_sandbox_id: 1, port: 2 },
  ReopenContainerLogRequest: { container_id: 1 },
  ContainerStats: { attributes: 1, cpu: 2, memory: 3, writable_layer: 4 },
  ContainerAttributes: { id: 1, metadata: 2, labels: 3, annotations: 4 },
  CpuUsage: { timestamp: 1, usage_core_nano_seconds: 2, usage_nano_cores: 3 },
  MemoryUsage: {
    timestamp: 1,
    working_set_bytes: 2,
    available_bytes: 3,
    usage_bytes: 4,
    rss_bytes: 5,
    page_faults: 6,
    major_page_faults: 7,
  },
  FilesystemUsage: { timestamp: 1, fs_id: 2, used_bytes: 3, inodes_used: 4 },
  ContainerStatsFilter: { id: 1, pod_sandbox_id: 2, label_selector: 3 },
  ListContainerStatsRequest: { filter: 1 },
  ListContainerStatsResponse: { stats: 1 },
};
const UPSTREAM_ENUMS: Record<string, Record<string, number>> = {
  ContainerState: { CONTAINER_CREATED: 0, CONTAINER_RUNNING: 1, CONTAINER_EXITED: 2, CONTAINER_UNKNOWN: 3 },
  PodSandboxState: { SANDBOX_READY: 0, SANDBOX_NOTREADY: 1 },
  NamespaceMode: { POD: 0, CONTAINER: 1, NODE: 2, TARGET: 3 },
  Protocol: { TCP: 0, UDP: 1, SCTP: 2 },
};

test('proto/ field names and numbers match upstream cri-api runtime.v1', () => {
  const root = new protobuf.Root().loadSync(path.resolve(import.meta.dirname, '../../proto/cri/api.proto'), {
    keepCase: true,
  });
  for (const [msg, fields] of Object.entries(UPSTREAM_FIELDS)) {
    const t = root.lookupType(`runtime.v1.${msg}`);
    for (const [f, n] of Object.entries(fields)) assert.equal(t.fields[f]?.id, n, `${msg}.${f}`);
  }
  for (const [e, vals] of Object.entries(UPSTREAM_ENUMS))
    assert.deepEqual({ ...root.lookupEnum(`runtime.v1.${e}`).values }, vals, e);
  const svc = root.lookupService('runtime.v1.RuntimeService');
  for (const m of [
    'Version',
    'Status',
    'RunPodSandbox',
    'StopPodSandbox',
    'RemovePodSandbox',
    'PodSandboxStatus',
    'ListPodSandbox',
    'CreateContainer',
    'StartContainer',
    'StopContainer',
    'RemoveContainer',
    'ListContainers',
    'ContainerStatus',
    'ExecSync',
  ])
    assert.ok(svc.methods[m], m);
  const img = root.lookupService('runtime.v1.ImageService');
  for (const m of ['ImageStatus', 'PullImage', 'ListImages', 'RemoveImage']) assert.ok(img.methods[m], m);
});

test('a grace period of 10^12 seconds (a valid int64) is passed on, and the call deadline is clamped instead of throwing', async () => {
  const sb = await cri.runPodSandbox(
    { metadata: { name: 'g', uid: 'ug', namespace: 'default', attempt: 0 }, labels: { 'io.kubernetes.pod.uid': 'ug' } },
    'default/g',
  );
  const id = await cri.createContainer(
    sb,
    { metadata: { name: 'c', attempt: 0 }, image: { image: 'x' }, labels: {} },
    { metadata: { name: 'g', uid: 'ug', namespace: 'default', attempt: 0 } },
    'default/g',
  );
  await cri.stopContainer(id, 1_000_000_000_000, 'default/g');
  const req = rt.calls.find((c) => c.method === 'StopContainer')!.req as { timeout: string };
  assert.equal(String(req.timeout), '1000000000000');
});
