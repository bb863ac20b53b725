// kube-proxy's health (upstream ProxierHealthServer): unhealthy when a queued
// rules update has waited longer than healthTimeout (2 x syncPeriod) without
// a successful sync; /healthz is also unhealthy when the node is being deleted.
export interface HealthState {
  healthy: boolean;
  lastUpdated: Date;
  currentTime: Date;
}

export class ProxyHealth {
  private lastUpdated = 0;
  private oldestQueued = 0;
  /** False when the node is going away (deletionTimestamp or ToBeDeletedByClusterAutoscaler). */
  nodeEligible = true;

  constructor(
    readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A sync was asked for. */
  queued(): void {
    if (!this.oldestQueued) this.oldestQueued = this.now();
  }

  /** A sync succeeded. */
  updated(): void {
    this.lastUpdated = this.now();
    this.oldestQueued = 0;
  }

  /** The livez view: only the rules' freshness. */
  state(): HealthState {
    const t = this.now();
    const healthy = !this.oldestQueued || t - this.oldestQueued < this.timeoutMs;
    return { healthy, lastUpdated: new Date(this.lastUpdated), currentTime: new Date(t) };
  }
}

/** Go's time.Time.String() in UTC ("2006-01-02 15:04:05.999999999 +0000 UTC"), as upstream's body prints times. */
export function goTime(d: Date): string {
  const iso = d.toISOString(); // 2026-12-02T17:00:00.123Z
  const frac = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ''} +0000 UTC`;
}
