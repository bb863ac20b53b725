// An in-memory CRI runtime served over grpc-js on a unix socket, for unit
// tests of the kubelet against the real wire protocol.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as grpc from '@grpc/grpc-js';

import { assetPath } from '../../kube/assets.js';
import type { ProtoGrpcType } from '../../proto/gen/api.js';
import { loadGrpcPackage } from './grpc-services.js';

/** The CRI services as grpc-js classes (only: ProtoGrpcType's message type definitions are not there). */
export function loadCri(): ProtoGrpcType {
  return loadGrpcPackage('cri/api.proto', assetPath('proto')) as unknown as ProtoGrpcType;
}

interface FakeSandbox {
  id: string;
  config: Record<string, any>;
  state: 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
  createdAt: bigint;
  ip: string;
  runtimeHandler: string;
}

interface FakeContainer {
  id: string;
  sandboxId: string;
  config: Record<string, any>;
  state: 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED';
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  imageRef: string;
}

type Handler = (req: any) => unknown;

let clock = 1n;
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n + clock++;

export class FakeRuntime {
  readonly sandboxes = new Map<string, FakeSandbox>();
  /** Runtime handlers besides the default, as containerd's configured runtimes. */
  readonly runtimeHandlerNames = new Set<string>(['runc']);
  readonly containers = new Map<string, FakeContainer>();
  /** image name -> id; names not here and not in `pullable` fail to pull */
  readonly images = new Map<string, { id: string; size: number }>();
  readonly pullable = new Set<string>();
  readonly calls: { method: string; req: any }[] = [];
  /** Exit code a container gets right after start, per container name; undefined = keeps running. */
  readonly exitOnStart = new Map<string, number>();
  /** Per-method hook run before the default; throw a grpc error object to fail the call. */
  readonly hooks = new Map<string, Handler>();
  delayMs = 0;
  /** Base URL Exec, Attach and PortForward answer with, as containerd's streaming server would. */
  streamingBase = 'http://127.0.0.1:1';
  private server = new grpc.Server({ 'grpc.max_send_message_length': 64 * 1024 * 1024 });
  private seq = 0;
  socket = '';
  private ipSeq = 2;

  async start(): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-fakecri-'));
    this.socket = path.join(dir, 'cri.sock');
    const pkg = loadCri().runtime.v1;
    const wrap =
      (method: string, fn: Handler) => (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
        this.calls.push({ method, req: call.request });
        const run = (): void => {
          try {
            const hook = this.hooks.get(method);
            if (hook) {
              const r = hook(call.request);
              if (r !== undefined) return cb(null, r);
            }
            cb(null, fn(call.request));
          } catch (e) {
            const err = e as grpc.ServiceError;
            cb({ code: err.code ?? grpc.status.UNKNOWN, details: err.details ?? err.message } as grpc.ServiceError);
          }
        };
        if (this.delayMs) setTimeout(run, this.delayMs);
        else run();
      };
    const impl = (o: Record<string, Handler>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, wrap(k, v)]));
    this.server.addService(pkg.RuntimeService.service, impl(this.runtimeHandlers()));
    this.server.addService(pkg.ImageService.service, impl(this.imageHandlers()));
    await new Promise<void>((res, rej) =>
      this.server.bindAsync(`unix://${this.socket}`, grpc.ServerCredentials.createInsecure(), (e) =>
        e ? rej(e) : res(),
      ),
    );
    return this.socket;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server.tryShutdown(() => r()));
    fs.rmSync(path.dirname(this.socket), { recursive: true, force: true });
  }

  count(method: string): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  /** Simulate a container process exiting. */
  exit(id: string, code: number): void {
    const c = this.containers.get(id);
    if (!c) throw new Error(`no container ${id}`);
    c.state = 'CONTAINER_EXITED';
    c.exitCode = code;
    c.finishedAt = nowNs();
  }

  private notFound(what: string): never {
    throw Object.assign(new Error(`${what} not found`), { code: grpc.status.NOT_FOUND, details: `${what} not found` });
  }

  private matches(labels: Record<string, string>, sel?: Record<string, string>): boolean {
    return Object.entries(sel ?? {}).every(([k, v]) => labels[k] === v);
  }

  private containerStatus(c: FakeContainer): object {
    return {
      id: c.id,
      metadata: c.config.metadata,
      state: c.state,
      created_at: c.createdAt.toString(),
      started_at: c.startedAt.toString(),
      finished_at: c.finishedAt.toString(),
      exit_code: c.exitCode,
      image: c.config.image,
      image_ref: c.imageRef,
      reason: c.state === 'CONTAINER_EXITED' ? (c.exitCode === 0 ? 'Completed' : 'Error') : '',
      labels: c.config.labels,
      annotations: c.config.annotations,
      // containerd reports the full path: the sandbox's log directory joined with the container's log path.
      log_path: path.join(this.sandboxes.get(c.sandboxId)?.config.log_directory ?? '', c.config.log_path ?? ''),
      mounts: c.config.mounts ?? [],
      // As containerd: the resources of the container's spec, updated by UpdateContainerResources.
      ...(c.config.linux?.resources ? { resources: { linux: c.config.linux.resources } } : {}),
    };
  }

  private runtimeHandlers(): Record<string, Handler> {
    return {
      Version: () => ({ version: '0.1.0', runtime_name: 'fake', runtime_version: '1.0.0', runtime_api_version: 'v1' }),
      Status: () => ({
        status: {
          conditions: [
            { type: 'RuntimeReady', status: true },
            { type: 'NetworkReady', status: true },
          ],
        },
      }),
      RunPodSandbox: (req) => {
        const id = `sb${++this.seq}`;
        const host = req.config?.linux?.security_context?.namespace_options?.network === 'NODE';
        if (req.runtime_handler && !this.runtimeHandlerNames.has(req.runtime_handler))
          throw Object.assign(new Error(`no runtime for "${req.runtime_handler}" is configured`), {
            code: grpc.status.UNKNOWN,
            details: `no runtime for "${req.runtime_handler}" is configured`,
          });
        this.sandboxes.set(id, {
          id,
          config: req.config,
          state: 'SANDBOX_READY',
          createdAt: nowNs(),
          ip: host ? '' : `10.88.0.${this.ipSeq++}`,
          runtimeHandler: req.runtime_handler ?? '',
        });
        return { pod_sandbox_id: id };
      },
      StopPodSandbox: (req) => {
        const s = this.sandboxes.get(req.pod_sandbox_id);
        if (s) {
          s.state = 'SANDBOX_NOTREADY';
          for (const c of this.containers.values())
            if (c.sandboxId === s.id && c.state !== 'CONTAINER_EXITED') this.exit(c.id, 137);
        }
        return {};
      },
      RemovePodSandbox: (req) => {
        for (const c of [...this.containers.values()])
          if (c.sandboxId === req.pod_sandbox_id) this.containers.delete(c.id);
        this.sandboxes.delete(req.pod_sandbox_id);
        return {};
      },
      PodSandboxStatus: (req) => {
        const s = this.sandboxes.get(req.pod_sandbox_id) ?? this.notFound(`sandbox ${req.pod_sandbox_id}`);
        return {
          status: {
            id: s.id,
            metadata: s.config.metadata,
            state: s.state,
            created_at: s.createdAt.toString(),
            network: { ip: s.ip },
            runtime_handler: s.runtimeHandler,
            linux: { namespaces: { options: s.config.linux?.security_context?.namespace_options ?? {} } },
            labels: s.config.labels,
            annotations: s.config.annotations,
          },
        };
      },
      ListPodSandbox: (req) => ({
        items: [...this.sandboxes.values()]
          .filter(
            (s) =>
              this.matches(s.config.labels ?? {}, req.filter?.label_selector) &&
              (!req.filter?.id || req.filter.id === s.id),
          )
          .map((s) => ({
            id: s.id,
            metadata: s.config.metadata,
            state: s.state,
            created_at: s.createdAt.toString(),
            labels: s.config.labels,
            annotations: s.config.annotations,
          })),
      }),
      CreateContainer: (req) => {
        if (!this.sandboxes.has(req.pod_sandbox_id)) this.notFound(`sandbox ${req.pod_sandbox_id}`);
        const id = `c${++this.seq}`;
        this.containers.set(id, {
          id,
          sandboxId: req.pod_sandbox_id,
          config: req.config,
          state: 'CONTAINER_CREATED',
          createdAt: nowNs(),
          startedAt: 0n,
          finishedAt: 0n,
          exitCode: 0,
          imageRef: req.config.image.image,
        });
        return { container_id: id };
      },
      UpdateContainerResources: (req) => {
        const c = this.containers.get(req.container_id) ?? this.notFound(`container ${req.container_id}`);
        c.config.linux = { ...(c.config.linux ?? {}), resources: req.linux };
        return {};
      },
      StartContainer: (req) => {
        const c = this.containers.get(req.container_id) ?? this.notFound(`container ${req.container_id}`);
        c.state = 'CONTAINER_RUNNING';
        c.startedAt = nowNs();
        const code = this.exitOnStart.get(c.config.metadata.name);
        if (code !== undefined) this.exit(c.id, code);
        return {};
      },
      StopContainer: (req) => {
        const c = this.containers.get(req.container_id);
        if (c && c.state !== 'CONTAINER_EXITED') this.exit(c.id, 143);
        return {};
      },
      RemoveContainer: (req) => {
        this.containers.delete(req.container_id);
        return {};
      },
      ListContainers: (req) => ({
        containers: [...this.containers.values()]
          .filter((c) => this.matches(c.config.labels ?? {}, req.filter?.label_selector))
          .map((c) => ({
            id: c.id,
            pod_sandbox_id: c.sandboxId,
            metadata: c.config.metadata,
            image: c.config.image,
            image_ref: c.imageRef,
            state: c.state,
            created_at: c.createdAt.toString(),
            labels: c.config.labels,
            annotations: c.config.annotations,
          })),
      }),
      ContainerStatus: (req) => ({
        status: this.containerStatus(
          this.containers.get(req.container_id) ?? this.notFound(`container ${req.container_id}`),
        ),
      }),
      ExecSync: (req) => ({ stdout: Buffer.from(req.cmd.join(' ')), stderr: Buffer.alloc(0), exit_code: 0 }),
      Exec: (req) =>
        this.containers.has(req.container_id)
          ? { url: `${this.streamingBase}/exec/t${++this.seq}` }
          : this.notFound(`container ${req.container_id}`),
      Attach: (req) =>
        this.containers.has(req.container_id)
          ? { url: `${this.streamingBase}/attach/t${++this.seq}` }
          : this.notFound(`container ${req.container_id}`),
      PortForward: (req) =>
        this.sandboxes.has(req.pod_sandbox_id)
          ? { url: `${this.streamingBase}/portforward/t${++this.seq}` }
          : this.notFound(`sandbox ${req.pod_sandbox_id}`),
      ReopenContainerLog: (req) =>
        this.containers.has(req.container_id) ? {} : this.notFound(`container ${req.container_id}`),
      ListContainerStats: () => ({
        stats: [...this.containers.values()]
          .filter((c) => c.state === 'CONTAINER_RUNNING')
          .map((c, i) => ({
            attributes: {
              id: c.id,
              metadata: c.config.metadata,
              labels: c.config.labels,
              annotations: c.config.annotations,
            },
            cpu: {
              timestamp: nowNs().toString(),
              usage_core_nano_seconds: { value: String(1e9 * (i + 1)) },
              usage_nano_cores: { value: String(1e6 * (i + 1)) },
            },
            memory: {
              timestamp: nowNs().toString(),
              working_set_bytes: { value: String(1 << 20) },
              usage_bytes: { value: String(2 << 20) },
            },
            writable_layer: { timestamp: nowNs().toString(), used_bytes: { value: '4096' } },
          })),
      }),
    };
  }

  private imageHandlers(): Record<string, Handler> {
    return {
      ImageStatus: (req) => {
        const name = req.image.image;
        const img = this.images.get(name) ?? [...this.images.values()].find((i) => i.id === name);
        return { image: img ? { id: img.id, repo_tags: [name], size: String(img.size) } : null };
      },
      PullImage: (req) => {
        const name = req.image.image;
        if (!this.pullable.has(name)) {
          throw Object.assign(new Error('not found'), {
            code: grpc.status.UNKNOWN,
            details: `failed to pull and unpack image "${name}": not found`,
          });
        }
        const id = `sha256:${Buffer.from(name).toString('hex').padEnd(64, '0').slice(0, 64)}`;
        this.images.set(name, { id, size: 1234 });
        return { image_ref: id };
      },
      ListImages: () => ({
        images: [...this.images.entries()].map(([n, i]) => ({ id: i.id, repo_tags: [n], size: String(i.size) })),
      }),
      RemoveImage: (req) => {
        this.images.delete(req.image.image);
        return {};
      },
    };
  }
}
