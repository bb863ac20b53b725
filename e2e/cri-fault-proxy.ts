// For the fault-injection e2e: a CRI proxy on a unix socket between the
// kubelet and containerd. It forwards every RuntimeService and ImageService
// call as raw bytes, and fails (UNAVAILABLE) a chosen share of chosen calls or
// holds every call for a while, as a runtime under load or restarting would.
import fs from 'node:fs';

import * as grpc from '@grpc/grpc-js';

import { loadCri } from '../agent/cri/fake-runtime.js';

export interface Faults {
  /** Method name (PodSandboxStatus, ContainerStatus, ListContainers, ...) -> share of calls to fail, 0..1. */
  fail: Record<string, number>;
  /** While set (ms since epoch), every call waits until then before it is forwarded. */
  stallUntil: number;
}

const raw = (b: Buffer): Buffer => b;

export class CriFaultProxy {
  readonly faults: Faults = { fail: {}, stallUntil: 0 };
  readonly injected: Record<string, number> = {};
  private readonly server = new grpc.Server({
    'grpc.max_receive_message_length': 16 << 20,
    'grpc.max_send_message_length': 16 << 20,
  });
  private readonly upstream: grpc.Client;

  constructor(
    private readonly listen: string,
    target: string,
  ) {
    this.upstream = new grpc.Client(`unix://${target}`, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 << 20,
    });
  }

  private async delay(): Promise<void> {
    const wait = this.faults.stallUntil - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  private injectedFault(method: string): boolean {
    const share = this.faults.fail[method] ?? 0;
    if (share <= 0 || Math.random() >= share) return false;
    this.injected[method] = (this.injected[method] ?? 0) + 1;
    return true;
  }

  async start(): Promise<void> {
    const cri = loadCri() as unknown as {
      runtime: {
        v1: Record<
          string,
          { service: Record<string, { path: string; requestStream: boolean; responseStream: boolean }> }
        >;
      };
    };
    for (const svc of ['RuntimeService', 'ImageService']) {
      for (const [name, m] of Object.entries(cri.runtime.v1[svc]!.service)) {
        if (m.requestStream) continue;
        if (m.responseStream) {
          // GetContainerEvents: passed through as it is.
          this.server.register(
            m.path,
            (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
              const up = this.upstream.makeServerStreamRequest(m.path, raw, raw, call.request);
              up.on('data', (d: Buffer) => call.write(d));
              up.on('end', () => call.end());
              up.on('error', (e: grpc.ServiceError) => call.destroy(e));
              call.on('cancelled', () => up.cancel());
            },
            raw,
            raw,
            'serverStream',
          );
          continue;
        }
        this.server.register(
          m.path,
          (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
            void this.delay().then(() => {
              if (this.injectedFault(name))
                return cb({ code: grpc.status.UNAVAILABLE, details: `injected fault in ${name}` });
              this.upstream.makeUnaryRequest(m.path, raw, raw, call.request, (err, res) => cb(err, res));
            });
          },
          raw,
          raw,
          'unary',
        );
      }
    }
    fs.rmSync(this.listen, { force: true });
    await new Promise<void>((resolve, reject) =>
      this.server.bindAsync(`unix://${this.listen}`, grpc.ServerCredentials.createInsecure(), (e) =>
        e ? reject(e) : resolve(),
      ),
    );
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server.tryShutdown(() => r()));
    this.upstream.close();
    fs.rmSync(this.listen, { force: true });
  }
}
