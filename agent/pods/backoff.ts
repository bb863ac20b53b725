// Per-key exponential backoff with upstream client-go flowcontrol.Backoff
// semantics: starts at `initial`, doubles to `max`, and an entry untouched
// for 2*max (10 min for crash loops) starts over.
export class Backoff {
  private readonly items = new Map<string, { backoffMs: number; lastUpdate: number }>();
  constructor(
    readonly initialMs = 10_000,
    readonly maxMs = 300_000,
    private readonly now: () => number = Date.now,
  ) {}

  private expired(at: number, lastUpdate: number): boolean {
    return at - lastUpdate > 2 * this.maxMs;
  }

  /** Record one more failure at `at` and grow the delay. */
  next(key: string, at = this.now()): number {
    const e = this.items.get(key);
    const backoffMs = !e || this.expired(at, e.lastUpdate) ? this.initialMs : Math.min(e.backoffMs * 2, this.maxMs);
    this.items.set(key, { backoffMs, lastUpdate: at });
    return backoffMs;
  }

  get(key: string): number {
    return this.items.get(key)?.backoffMs ?? 0;
  }

  /** True while `since` (e.g. the container's finish time) is within the current delay. */
  inBackoffSince(key: string, since: number): boolean {
    const e = this.items.get(key);
    if (!e) return false;
    const now = this.now();
    if (this.expired(now, e.lastUpdate)) return false;
    return now - since < e.backoffMs;
  }

  /** True while the last failure is within the current delay. */
  inBackoffSinceUpdate(key: string): boolean {
    const e = this.items.get(key);
    return e !== undefined && this.inBackoffSince(key, e.lastUpdate);
  }

  /** ms until the delay that started at `since` ends (0 if over). */
  remaining(key: string, since: number): number {
    const e = this.items.get(key);
    return e ? Math.max(0, since + e.backoffMs - this.now()) : 0;
  }

  reset(key: string): void {
    this.items.delete(key);
  }

  /** Drop entries for keys with this prefix (a pod that went away). */
  forgetPrefix(prefix: string): void {
    for (const k of this.items.keys()) if (k.startsWith(prefix)) this.items.delete(k);
  }
}
