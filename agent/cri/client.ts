// Typed CRI client: every call has a deadline, a 16 MiB message limit, and
// errors that name the call and (when known) the pod.
import { assetPath } from '../../kube/assets.js';
import { clampDelay } from '../../kube/timers.js';
import { loadServices, type ProtoMethod } from './proto-methods.js';
import type * as T from './types.js';
import { GrpcCallError, Status, UnaryChannel } from './unary-channel.js';

export const MAX_MSG_BYTES = 16 * 1024 * 1024;
const PROTO_DIR = assetPath('proto');

type Service = 'RuntimeService' | 'ImageService';
let methods: Map<string, Map<string, ProtoMethod>> | undefined;
function method(service: Service, name: string): ProtoMethod {
  methods ??= loadServices('cri/api.json', PROTO_DIR);
  const m = methods.get(`runtime.v1.${service}`)?.get(name);
  if (!m) throw new Error(`unknown CRI call ${name}`);
  return m;
}

export class CriError extends Error {
  constructor(
    readonly call: string,
    /** The gRPC status code, when the runtime (or the connection) gave one. */
    readonly code: number | undefined,
    readonly detail: string,
    readonly pod?: string,
  ) {
    super(`CRI ${call}${pod ? ` for pod ${pod}` : ''} failed: ${detail}`);
    this.name = 'CriError';
  }
  get notFound(): boolean {
    return this.code === Status.NOT_FOUND;
  }
}

export interface CriClientOptions {
  /** unix socket path or unix:// URL */
  endpoint: string;
  /** default per-call deadline */
  timeoutMs?: number;
}

/** One connection to a CRI runtime (RuntimeService + ImageService on the same socket). */
export class CriClient {
  private readonly channel: UnaryChannel;
  private readonly timeoutMs: number;
  /** Counts per call, for metrics and benchmarks. */
  readonly calls = new Map<string, number>();
  /** Sees every call's method, duration and outcome (metrics). */
  observer: ((method: string, seconds: number, ok: boolean) => void) | undefined;

  constructor(opts: CriClientOptions) {
    const socketPath = opts.endpoint.replace(/^unix:(\/\/)?/, '');
    this.channel = new UnaryChannel({ socketPath, maxMessageBytes: MAX_MSG_BYTES });
    this.timeoutMs = opts.timeoutMs ?? 2 * 60_000;
  }

  close(): void {
    this.channel.close();
  }

  private async call<Req, Res>(svc: Service, name: string, req: Req, pod?: string, timeoutMs?: number): Promise<Res> {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
    const m = method(svc, name);
    const t0 = performance.now();
    try {
      const res = m.deserialize(
        await this.channel.call(m.path, m.serialize(req as object), clampDelay(timeoutMs ?? this.timeoutMs)),
      ) as Res;
      this.observer?.(name, (performance.now() - t0) / 1000, true);
      return res;
    } catch (e) {
      this.observer?.(name, (performance.now() - t0) / 1000, false);
      if (e instanceof GrpcCallError) throw new CriError(name, e.code, e.details, pod);
      throw new CriError(name, undefined, (e as Error).message, pod);
    }
  }

  version(): Promise<T.VersionResponse> {
    return this.call('RuntimeService', 'Version', { version: 'v1' }, undefined, 10_000);
  }
  status(): Promise<T.StatusResponse> {
    return this.call('RuntimeService', 'Status', { verbose: false }, undefined, 10_000);
  }
  /** The runtime's cgroup driver, from its verbose status (containerd's runc SystemdCgroup option); undefined when it does not say. */
  async cgroupDriver(): Promise<'systemd' | 'cgroupfs' | undefined> {
    const st: T.StatusResponse = await this.call('RuntimeService', 'Status', { verbose: true }, undefined, 10_000);
    return runtimeCgroupDriver(st.info ?? {});
  }
  async runPodSandbox(config: T.PodSandboxConfigIn, pod: string, runtimeHandler = ''): Promise<string> {
    const r = await this.call<T.RunPodSandboxRequest, T.RunPodSandboxResponse>(
      'RuntimeService',
      'RunPodSandbox',
      { config, runtime_handler: runtimeHandler },
      pod,
      4 * 60_000,
    );
    return r.pod_sandbox_id;
  }
  async stopPodSandbox(id: string, pod?: string): Promise<void> {
    await this.call('RuntimeService', 'StopPodSandbox', { pod_sandbox_id: id }, pod);
  }
  async removePodSandbox(id: string, pod?: string): Promise<void> {
    await this.call('RuntimeService', 'RemovePodSandbox', { pod_sandbox_id: id }, pod);
  }
  podSandboxStatus(id: string, pod?: string): Promise<T.PodSandboxStatusResponse> {
    return this.call('RuntimeService', 'PodSandboxStatus', { pod_sandbox_id: id, verbose: false }, pod);
  }
  async listPodSandbox(filter?: T.PodSandboxFilterIn): Promise<T.PodSandbox[]> {
    const r = await this.call<T.ListPodSandboxRequest, T.ListPodSandboxResponse>('RuntimeService', 'ListPodSandbox', {
      filter: filter ?? null,
    });
    return r.items;
  }
  async createContainer(
    sandboxId: string,
    config: T.ContainerConfigIn,
    sandboxConfig: T.PodSandboxConfigIn,
    pod: string,
  ): Promise<string> {
    const r = await this.call<T.CreateContainerRequest, T.CreateContainerResponse>(
      'RuntimeService',
      'CreateContainer',
      { pod_sandbox_id: sandboxId, config, sandbox_config: sandboxConfig },
      pod,
    );
    return r.container_id;
  }
  async startContainer(id: string, pod?: string): Promise<void> {
    await this.call('RuntimeService', 'StartContainer', { container_id: id }, pod);
  }
  /** timeoutSec is the grace period; the deadline leaves room for the runtime's SIGKILL. */
  async stopContainer(id: string, timeoutSec: number, pod?: string): Promise<void> {
    await this.call(
      'RuntimeService',
      'StopContainer',
      { container_id: id, timeout: String(timeoutSec) },
      pod,
      (timeoutSec + 30) * 1000,
    );
  }
  async removeContainer(id: string, pod?: string): Promise<void> {
    await this.call('RuntimeService', 'RemoveContainer', { container_id: id }, pod);
  }
  async listContainers(filter?: T.ContainerFilterIn): Promise<T.Container[]> {
    const r = await this.call<T.ListContainersRequest, T.ListContainersResponse>('RuntimeService', 'ListContainers', {
      filter: filter ?? null,
    });
    return r.containers;
  }
  async containerStatus(id: string, pod?: string): Promise<T.ContainerStatus> {
    const r = await this.call<T.ContainerStatusRequest, T.ContainerStatusResponse>(
      'RuntimeService',
      'ContainerStatus',
      { container_id: id, verbose: false },
      pod,
    );
    if (!r.status)
      throw new CriError('ContainerStatus', undefined, `runtime returned no status for container ${id}`, pod);
    return r.status;
  }
  /** In-place resize: new cgroup limits for a running container (idempotent). */
  async updateContainerResources(id: string, linux: T.LinuxContainerResourcesIn, pod?: string): Promise<void> {
    await this.call('RuntimeService', 'UpdateContainerResources', { container_id: id, linux }, pod);
  }
  async execSync(id: string, cmd: string[], timeoutSec: number, pod?: string): Promise<T.ExecSyncResponse> {
    return this.call(
      'RuntimeService',
      'ExecSync',
      { container_id: id, cmd, timeout: String(timeoutSec) },
      pod,
      (timeoutSec + 10) * 1000,
    );
  }
  /** Exec, Attach and PortForward return a URL on the runtime's streaming server, which the kubelet proxies to. */
  async exec(req: T.ExecRequest, pod?: string): Promise<string> {
    return (await this.call<T.ExecRequest, { url: string }>('RuntimeService', 'Exec', req, pod, 30_000)).url;
  }
  async attach(req: T.AttachRequest, pod?: string): Promise<string> {
    return (await this.call<T.AttachRequest, { url: string }>('RuntimeService', 'Attach', req, pod, 30_000)).url;
  }
  async portForward(sandboxId: string, ports: number[], pod?: string): Promise<string> {
    return (
      await this.call<object, { url: string }>(
        'RuntimeService',
        'PortForward',
        { pod_sandbox_id: sandboxId, port: ports },
        pod,
        30_000,
      )
    ).url;
  }
  /** After a log file was rotated: the runtime writes to a new file at the same path. */
  async reopenContainerLog(id: string): Promise<void> {
    await this.call('RuntimeService', 'ReopenContainerLog', { container_id: id });
  }
  async listContainerStats(filter?: T.ContainerStatsFilterIn): Promise<T.ContainerStats[]> {
    return (
      await this.call<object, { stats: T.ContainerStats[] }>('RuntimeService', 'ListContainerStats', {
        filter: filter ?? null,
      })
    ).stats;
  }

  async imageStatus(image: string, pod?: string): Promise<T.Image | null> {
    const r = await this.call<T.ImageStatusRequest, T.ImageStatusResponse>(
      'ImageService',
      'ImageStatus',
      { image: { image }, verbose: false },
      pod,
    );
    return r.image;
  }
  async pullImage(
    image: string,
    sandboxConfig: T.PodSandboxConfigIn | null,
    pod?: string,
    auth?: T.AuthConfig,
  ): Promise<string> {
    const r = await this.call<T.PullImageRequest, T.PullImageResponse>(
      'ImageService',
      'PullImage',
      { image: { image }, sandbox_config: sandboxConfig, ...(auth ? { auth } : {}) },
      pod,
      10 * 60_000,
    );
    return r.image_ref;
  }
  /** The filesystems holding the runtime's images (their mountpoints). */
  async imageFsInfo(): Promise<string[]> {
    const r: { image_filesystems: { fs_id: { mountpoint: string } | null }[] } = await this.call(
      'ImageService',
      'ImageFsInfo',
      {},
      undefined,
      10_000,
    );
    return r.image_filesystems.map((f) => f.fs_id?.mountpoint ?? '').filter(Boolean);
  }
  /** The sandbox (pause) image the runtime uses, from its verbose status (containerd's sandboxImage). */
  async sandboxImage(): Promise<string | undefined> {
    const st: T.StatusResponse = await this.call('RuntimeService', 'Status', { verbose: true }, undefined, 10_000);
    try {
      return (JSON.parse(st.info?.config ?? '{}') as { sandboxImage?: string }).sandboxImage || undefined;
    } catch {
      return undefined;
    }
  }
  async listImages(): Promise<T.Image[]> {
    const r = await this.call<T.ListImagesRequest, T.ListImagesResponse>('ImageService', 'ListImages', {
      filter: null,
    });
    return r.images;
  }
  async removeImage(image: string): Promise<void> {
    await this.call('ImageService', 'RemoveImage', { image: { image } });
  }
}

/** containerd's CRI config (Status info "config"): SystemdCgroup of the default runtime's options. */
export function runtimeCgroupDriver(info: Record<string, string>): 'systemd' | 'cgroupfs' | undefined {
  if (!info.config) return undefined;
  try {
    const cfg = JSON.parse(info.config) as {
      containerd?: { defaultRuntimeName?: string; runtimes?: Record<string, { options?: Record<string, unknown> }> };
    };
    const c = cfg.containerd;
    const rt = c?.runtimes?.[c.defaultRuntimeName ?? 'runc'];
    if (!rt) return undefined;
    return rt.options?.SystemdCgroup === true ? 'systemd' : 'cgroupfs';
  } catch {
    return undefined;
  }
}
