// /healthz as upstream's healthz handler answers it: "ok" when every check
// passes ("[+]name ok" lines and "healthz check passed" with ?verbose); a
// 500 listing the checks, the failed ones "reason withheld", when one fails;
// /healthz/<check> for a single check. The kubelet's checks are ping, log and
// syncloop.
export interface HealthCheck {
  name: string;
  /** Why the check fails, or undefined when it passes. */
  check(): string | undefined;
}

export interface HealthAnswer {
  code: number;
  body: string;
  /** The failures with their reasons, for the log (the body withholds them). */
  failures: string[];
}

/** The answer for a /healthz path, or undefined when the path is not one. */
export function healthz(checks: HealthCheck[], path: string, verbose: boolean): HealthAnswer | undefined {
  if (path === '/healthz' || path === '/healthz/') {
    const results = checks.map((c) => ({ name: c.name, error: c.check() }));
    const failures = results.filter((r) => r.error !== undefined).map((r) => `${r.name}: ${r.error!}`);
    const lines = results.map((r) =>
      r.error === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`,
    );
    if (failures.length) return { code: 500, body: `${lines.join('\n')}\nhealthz check failed\n`, failures };
    return { code: 200, body: verbose ? `${lines.join('\n')}\nhealthz check passed\n` : 'ok', failures };
  }
  const one = checks.find((c) => path === `/healthz/${c.name}`);
  if (!one) return undefined;
  const error = one.check();
  return error === undefined
    ? { code: 200, body: 'ok', failures: [] }
    : { code: 500, body: `internal server error: ${error}\n`, failures: [`${one.name}: ${error}`] };
}

/** Upstream's syncloop check: the loop entered an iteration within max(2 × syncFrequency, 5 min). */
export function syncLoopCheck(lastEnteredMs: () => number, syncFrequencyMs: number): HealthCheck {
  const limit = Math.max(2 * syncFrequencyMs, 5 * 60_000);
  return {
    name: 'syncloop',
    check: () => {
      const entered = lastEnteredMs();
      return entered > 0 && Date.now() - entered > limit ? 'sync Loop took longer than expected' : undefined;
    },
  };
}

export const alwaysOk = (name: string): HealthCheck => ({ name, check: () => undefined });
