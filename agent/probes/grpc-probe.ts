// grpc probes: grpc.health.v1.Health/Check on podIP:port with the optional
// service name; SERVING is success. Messages follow upstream pkg/probe/grpc.
import * as grpc from '@grpc/grpc-js';

import { assetPath } from '../../kube/assets.js';
import { loadGrpcPackage } from '../cri/grpc-services.js';
import type { ProbeOutcome } from './types.js';

const PROTO_DIR = assetPath('proto');

type CheckFn = (
  req: { service: string },
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
) => void;
type HealthClient = grpc.Client & { Check: CheckFn };
let Health: (new (target: string, creds: grpc.ChannelCredentials, opts?: object) => HealthClient) | undefined;

function healthClientClass(): NonNullable<typeof Health> {
  if (!Health) {
    const pkg = loadGrpcPackage('grpc/health/v1/health.proto', PROTO_DIR) as unknown as {
      grpc: { health: { v1: { Health: NonNullable<typeof Health> } } };
    };
    Health = pkg.grpc.health.v1.Health;
  }
  return Health;
}

export function grpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<ProbeOutcome> {
  const Client = healthClientClass();
  const target = `${host}:${port}`;
  const client = new Client(target, grpc.credentials.createInsecure(), { 'grpc.initial_reconnect_backoff_ms': 100 });
  const secs = `${timeoutMs / 1000}s`;
  return new Promise((resolve) => {
    const deadline = new Date(Date.now() + timeoutMs);
    client.waitForReady(deadline, (err) => {
      if (err) {
        client.close();
        return resolve({
          result: 'failure',
          output: `timeout: failed to connect service "${target}" within ${secs}: ${err.message}`,
        });
      }
      client.Check({ service }, new grpc.Metadata(), { deadline }, (e, res) => {
        client.close();
        if (e) {
          if (e.code === grpc.status.UNIMPLEMENTED)
            return resolve({
              result: 'failure',
              output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}`,
            });
          if (e.code === grpc.status.DEADLINE_EXCEEDED)
            return resolve({ result: 'failure', output: `timeout: health rpc did not complete within ${secs}` });
          return resolve({ result: 'failure', output: `error: health rpc probe failed: ${e.details || e.message}` });
        }
        if (res?.status !== 'SERVING')
          return resolve({
            result: 'failure',
            output: `service unhealthy (responded with "${res?.status ?? 'UNKNOWN'}")`,
          });
        resolve({ result: 'success', output: '' });
      });
    });
  });
}
