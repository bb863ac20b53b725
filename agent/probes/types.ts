// Probe kinds, results and the upstream defaults for a container's probe spec.
import type { Container, Probe } from 'kubernetes-types/core/v1.js';

export type ProbeType = 'Liveness' | 'Readiness' | 'Startup';

/** Result of one probe run (upstream probe.Result). Warning counts as success. */
export type ProbeResult = 'success' | 'warning' | 'failure' | 'unknown';

export interface ProbeOutcome {
  result: ProbeResult;
  output: string;
}

/** A probe with every timing field defaulted as the apiserver would. */
export interface ProbeSpec extends Probe {
  initialDelaySeconds: number;
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
}

export function probeOf(c: Container, type: ProbeType): Probe | undefined {
  return type === 'Liveness' ? c.livenessProbe : type === 'Readiness' ? c.readinessProbe : c.startupProbe;
}

/** Upstream defaults: delay 0, period 10 s, timeout 1 s, success 1, failure 3. */
export function withDefaults(p: Probe): ProbeSpec {
  return {
    ...p,
    initialDelaySeconds: p.initialDelaySeconds ?? 0,
    periodSeconds: p.periodSeconds || 10,
    timeoutSeconds: p.timeoutSeconds || 1,
    successThreshold: p.successThreshold || 1,
    failureThreshold: p.failureThreshold || 3,
  };
}

/** Field errors in a probe, as the apiserver's validation reports them (path like spec.containers[0].livenessProbe). */
export function validateProbe(p: Probe, type: ProbeType, path: string): string[] {
  const errs: string[] = [];
  const handlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'].filter(
    (k) => (p as Record<string, unknown>)[k] !== undefined,
  );
  if (handlers.length === 0) errs.push(`${path}: Required value: must specify a handler type`);
  if (handlers.length > 1) errs.push(`${path}.${handlers[1]}: Forbidden: may not specify more than 1 handler type`);
  for (const f of [
    'initialDelaySeconds',
    'timeoutSeconds',
    'periodSeconds',
    'successThreshold',
    'failureThreshold',
  ] as const) {
    const v = p[f];
    if (v !== undefined && (!Number.isInteger(v) || v < 0))
      errs.push(`${path}.${f}: Invalid value: ${JSON.stringify(v)}: must be greater than or equal to 0`);
  }
  if (type !== 'Readiness' && p.successThreshold !== undefined && p.successThreshold !== 1)
    errs.push(`${path}.successThreshold: Invalid value: ${p.successThreshold}: must be 1`);
  if (type === 'Readiness' && p.terminationGracePeriodSeconds !== undefined)
    errs.push(
      `${path}.terminationGracePeriodSeconds: Invalid value: ${p.terminationGracePeriodSeconds}: must not be set for readinessProbes`,
    );
  return errs;
}
