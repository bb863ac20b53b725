// GET /containerLogs/{ns}/{pod}/{container}: the query as v1.PodLogOptions,
// the container instance (current or --previous) picked as upstream does,
// and its CRI log file streamed to the client.
import type { ServerResponse } from 'node:http';
import path from 'node:path';

import { CriError } from '../cri/client.js';
import { podLogDir } from '../pods/cri-config.js';
import { containerInstances, findPod, HttpError, type ServerHost } from './host.js';
import { type LogOptions, streamLog, tailRange } from './logs.js';

function boolParam(q: URLSearchParams, k: string): boolean {
  const v = q.get(k);
  if (v === null || v === '') return false;
  if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(v)) return true;
  if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(v)) return false;
  throw new HttpError(400, `${k}: Invalid value: ${JSON.stringify(v)}: must be a boolean`);
}

function intParam(q: URLSearchParams, k: string, min: number): number | undefined {
  const v = q.get(k);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!/^-?\d+$/.test(v)) throw new HttpError(400, `${k}: Invalid value: ${JSON.stringify(v)}: must be an integer`);
  if (n < min) throw new HttpError(400, `${k}: Invalid value: ${n}: must be greater than or equal to ${min}`);
  return n;
}

export interface ParsedLogQuery extends LogOptions {
  previous: boolean;
}

/** v1.PodLogOptions from the query, validated as the apiserver validates them. */
export function parseLogQuery(q: URLSearchParams, now = Date.now()): ParsedLogQuery {
  const tail = q.get('tail') === 'all' ? undefined : intParam(q, 'tailLines', 0);
  const sinceSeconds = intParam(q, 'sinceSeconds', 1);
  const sinceTime = q.get('sinceTime') || undefined;
  if (sinceSeconds !== undefined && sinceTime)
    throw new HttpError(400, 'at most one of `sinceTime` or `sinceSeconds` may be specified');
  let sinceMs: number | undefined;
  if (sinceTime) {
    // RFC 3339 only: Date.parse alone would take "-1" or "2020" as a time.
    sinceMs = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(sinceTime)
      ? Date.parse(sinceTime)
      : NaN;
    if (Number.isNaN(sinceMs))
      throw new HttpError(400, `sinceTime: Invalid value: ${JSON.stringify(sinceTime)}: must be an RFC3339 time`);
  } else if (sinceSeconds !== undefined) sinceMs = now - sinceSeconds * 1000;
  return {
    follow: boolParam(q, 'follow'),
    previous: boolParam(q, 'previous'),
    timestamps: boolParam(q, 'timestamps'),
    tailLines: tail,
    limitBytes: intParam(q, 'limitBytes', 1),
    sinceMs,
  };
}

export async function serveContainerLogs(
  host: ServerHost,
  res: ServerResponse,
  ns: string,
  podName: string,
  container: string,
  q: URLSearchParams,
): Promise<void> {
  const o = parseLogQuery(q);
  const pod = findPod(host, ns, podName);
  if (!pod) throw new HttpError(404, `pod ${JSON.stringify(podName)} does not exist`);
  const spec = pod.spec!;
  if (
    ![...spec.containers, ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].some(
      (c) => c.name === container,
    )
  )
    throw new HttpError(404, `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(podName)}`);
  const instances = await containerInstances(host, pod, container);
  const pick = o.previous ? instances[1] : instances[0];
  if (!pick) {
    if (o.previous)
      throw new HttpError(
        400,
        `previous terminated container ${JSON.stringify(container)} in pod ${JSON.stringify(podName)} not found`,
      );
    const why = host.waitingReason(pod.metadata!.uid!, container) ?? 'ContainerCreating';
    throw new HttpError(
      400,
      `container ${JSON.stringify(container)} in pod ${JSON.stringify(podName)} is waiting to start: ${why}`,
    );
  }
  const file = path.join(podLogDir(host.podLogsDir, pod), container, `${pick.restartCount}.log`);
  const { start, end } =
    o.tailLines === undefined
      ? { start: 0, end: Infinity }
      : await tailRange(file, o.tailLines).catch(() => ({ start: -1, end: -1 }));
  if (start < 0)
    throw new HttpError(
      404,
      `log file of container ${JSON.stringify(container)} in pod ${JSON.stringify(podName)} not found: ${file}`,
    );
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' });
  let closed = false;
  res.on('close', () => (closed = true));
  // Only the current, running instance can grow; a finished one is read to its end.
  const follow = o.follow && !o.previous && pick.state === 'running';
  // A runtime error other than NotFound (a busy containerd's deadline) keeps the stream going a few times in a row,
  // as upstream's waitLogs retries its watcher's errors: a follow that ends on one slow call looks like an exit.
  let errors = 0;
  const alive = async (): Promise<boolean> => {
    if (closed) return false;
    try {
      const running = (await host.cri.containerStatus(pick.id)).state === 'CONTAINER_RUNNING';
      errors = 0;
      return running;
    } catch (e) {
      return !(e instanceof CriError && e.notFound) && ++errors <= 5;
    }
  };
  await streamLog(
    file,
    start,
    { ...o, follow },
    {
      write: (b) => res.write(b),
      get closed() {
        return closed;
      },
      drain: () => new Promise((r) => (closed ? r() : res.once('drain', r).once('close', r))),
    },
    alive,
    end,
  );
  res.end();
}
