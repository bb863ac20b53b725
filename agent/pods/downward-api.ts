// The downward API: pod fields (fieldRef) and container resources
// (resourceFieldRef) as strings, for env vars and downwardAPI volumes.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { milliValue, parseQuantity } from '../../kube/quantity.js';

export interface DownwardContext {
  podIP: string;
  /** All the pod's IPs (dual stack), podIP first; unset: podIP. */
  podIPs?: string[];
  hostIP: string;
  /** Both families' node addresses (dual stack); unset: hostIP. */
  hostIPs?: string[];
  /** Node allocatable, used when a container sets no limit (upstream's default). */
  allocatable?: Record<string, string>;
}

export class DownwardError extends Error {}

/** Go's FormatMap: sorted `key="value"` lines. */
function formatMap(m: Record<string, string> = {}): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}`)
    .join('\n');
}

export function fieldValue(pod: Pod, fieldPath: string, ctx: DownwardContext): string {
  const md = pod.metadata!;
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (sub) return (sub[1] === 'labels' ? md.labels : md.annotations)?.[sub[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
    case 'metadata.labels':
      return formatMap(md.labels);
    case 'metadata.annotations':
      return formatMap(md.annotations);
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.podIP':
      return ctx.podIP;
    case 'status.podIPs':
      return ctx.podIPs?.join(',') ?? ctx.podIP;
    case 'status.hostIP':
      return ctx.hostIP;
    case 'status.hostIPs':
      return ctx.hostIPs?.join(',') ?? ctx.hostIP;
    default:
      throw new DownwardError(`unsupported fieldPath: ${fieldPath}`);
  }
}

/** limits.cpu, requests.memory, … of one container, divided by `divisor` and rounded up, as upstream. */
export function resourceValue(
  pod: Pod,
  containerName: string,
  resource: string,
  divisor: string | undefined,
  ctx: DownwardContext,
): string {
  const c = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
    (x) => x.name === containerName,
  );
  if (!c) throw new DownwardError(`container ${containerName} not found in pod ${pod.metadata?.name ?? ''}`);
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage)$/.exec(resource);
  if (!m) throw new DownwardError(`unsupported container resource: ${resource}`);
  const [, kind, name] = m as unknown as [string, 'limits' | 'requests', string];
  let q = (kind === 'limits' ? c.resources?.limits : c.resources?.requests)?.[name];
  if (q === undefined && kind === 'limits') q = ctx.allocatable?.[name];
  if (q === undefined) q = '0';
  if (name === 'cpu') {
    const d = milliValue(divisor ?? '1') || 1000;
    return String(Math.ceil(milliValue(q) / d));
  }
  const d = parseQuantity(divisor ?? '1') || 1;
  return String(Math.ceil(parseQuantity(q) / d));
}
