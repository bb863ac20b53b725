// Runs one probe of a container: picks the handler, resolves host and port
// as upstream's prober does, and retries an errored run up to 3 times.
import type { Container, HTTPGetAction, Pod } from 'kubernetes-types/core/v1.js';

import type { CriClient } from '../cri/client.js';
import { KUBELET_VERSION } from '../node/node-object.js';
import { httpProbe } from './http-probe.js';
import { tcpProbe } from './tcp-probe.js';
import type { ProbeOutcome, ProbeSpec } from './types.js';

export interface ProbeTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  /** The pod IP, or the node IP for hostNetwork pods. */
  podIP: string;
}

/** kube-probe/<major.minor> */
export const PROBE_USER_AGENT = `kube-probe/${/^v?(\d+\.\d+)/.exec(KUBELET_VERSION)?.[1] ?? '0.0'}`;

/** IntOrString port: a number, a container port name, or a number written as a string. */
export function resolvePort(port: number | string | undefined, c: Container): number {
  if (typeof port === 'number') return port;
  const named = (c.ports ?? []).find((p) => p.name === port);
  if (named) return named.containerPort;
  if (port !== undefined && /^\d+$/.test(port)) return Number(port);
  throw new Error(`couldn't find port: ${String(port)} in ${JSON.stringify(c.ports ?? [])}`);
}

/** Default headers, then the user's; a user header with an empty value removes the default. */
export function probeHeaders(list: { name: string; value: string }[] = []): Record<string, string> {
  const h: Record<string, string> = { 'User-Agent': PROBE_USER_AGENT, Accept: '*/*' };
  for (const { name, value } of list) {
    const existing = Object.keys(h).find((k) => k.toLowerCase() === name.toLowerCase());
    if (existing) delete h[existing];
    if (value !== '') h[name] = value;
  }
  return h;
}

/** The URL of an httpGet action (probes and lifecycle hooks): scheme, host (else the pod IP), port by number or name, path. */
export function httpGetURL(g: HTTPGetAction, podIP: string, c: Container): URL {
  const host = g.host || podIP;
  const p = g.path ?? '/';
  return new URL(
    `${(g.scheme ?? 'HTTP').toLowerCase()}://${host.includes(':') ? `[${host}]` : host}:${resolvePort(g.port, c)}${p.startsWith('/') ? p : `/${p}`}`,
  );
}

/** URL and headers of an httpGet probe, built once per probe spec and pod IP (probes run every second). */
const httpTargets = new WeakMap<ProbeSpec, { ip: string; url: URL; headers: Record<string, string> }>();
function httpTarget(spec: ProbeSpec, t: ProbeTarget): { url: URL; headers: Record<string, string> } {
  const hit = httpTargets.get(spec);
  if (hit && hit.ip === t.podIP) return hit;
  const g = spec.httpGet!;
  const entry = { ip: t.podIP, url: httpGetURL(g, t.podIP, t.container), headers: probeHeaders(g.httpHeaders) };
  httpTargets.set(spec, entry);
  return entry;
}

async function once(spec: ProbeSpec, t: ProbeTarget, cri: CriClient): Promise<ProbeOutcome> {
  const timeoutMs = spec.timeoutSeconds * 1000;
  if (spec.exec) {
    const cmd = spec.exec.command ?? [];
    try {
      const r = await cri.execSync(t.containerId, cmd, spec.timeoutSeconds);
      const out = Buffer.concat([Buffer.from(r.stdout ?? ''), Buffer.from(r.stderr ?? '')]).toString('utf8');
      return r.exit_code === 0 ? { result: 'success', output: out } : { result: 'failure', output: out };
    } catch (e) {
      const msg = (e as Error).message;
      if (/deadline|timeout|timed out/i.test(msg))
        return { result: 'failure', output: `command ${JSON.stringify(cmd.join(' '))} timed out` };
      throw e;
    }
  }
  if (spec.httpGet) return httpProbe({ ...httpTarget(spec, t), timeoutMs });
  if (spec.tcpSocket)
    return tcpProbe(spec.tcpSocket.host || t.podIP, resolvePort(spec.tcpSocket.port, t.container), timeoutMs);
  // grpc-js is loaded only by a node whose pods have gRPC probes.
  if (spec.grpc)
    return (await import('./grpc-probe.js')).grpcProbe(t.podIP, spec.grpc.port, spec.grpc.service ?? '', timeoutMs);
  return { result: 'unknown', output: 'missing probe handler' };
}

/** Upstream runProbeWithRetries: an error (not a failure) is retried, 3 tries in all. */
export async function runProbe(
  spec: ProbeSpec,
  t: ProbeTarget,
  cri: CriClient,
): Promise<ProbeOutcome & { error?: string }> {
  let last: Error | undefined;
  for (let i = 0; i < 3; i++) {
    try {
      return await once(spec, t, cri);
    } catch (e) {
      last = e as Error;
    }
  }
  return { result: 'unknown', output: '', error: last!.message };
}
