// tcpSocket probes: a TCP connect from the node within the timeout.
import net from 'node:net';

import { clampDelay } from '../../kube/timers.js';
import type { ProbeOutcome } from './types.js';

export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const addr = `${host}:${port}`;
    const sock = net.connect({ host, port });
    const timer = setTimeout(
      () => finish({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` }),
      clampDelay(timeoutMs),
    );
    const finish = (o: ProbeOutcome): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(o);
    };
    sock.once('connect', () => finish({ result: 'success', output: '' }));
    sock.once('error', (e: Error & { code?: string }) =>
      finish({
        result: 'failure',
        output:
          e.code === 'ECONNREFUSED'
            ? `dial tcp ${addr}: connect: connection refused`
            : `dial tcp ${addr}: ${e.message}`,
      }),
    );
  });
}
