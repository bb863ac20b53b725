// Runs the sync function on request, at most `burst` times back to back and
// then at most once per minSyncPeriod (upstream BoundedFrequencyRunner):
// requests while a sync runs or waits are coalesced into one.
export class SyncRunner {
  private tokens: number;
  private refilledAt: number;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private pending = false;
  private stopped = false;

  constructor(
    private readonly fn: () => Promise<void>,
    private readonly minMs: number,
    private readonly burst = 2,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  private refill(): void {
    if (this.minMs <= 0) {
      this.tokens = this.burst;
      return;
    }
    const t = this.now();
    const add = Math.floor((t - this.refilledAt) / this.minMs);
    if (add > 0) {
      this.tokens = Math.min(this.burst, this.tokens + add);
      this.refilledAt = this.tokens === this.burst ? t : this.refilledAt + add * this.minMs;
    }
  }

  /** Ask for a sync soon. */
  run(): void {
    if (this.stopped) return;
    this.pending = true;
    if (this.running) return;
    this.schedule(0);
  }

  /** Ask for a sync after `ms` (after a failure), unless one comes sooner. */
  retryAfter(ms: number): void {
    if (this.stopped) return;
    this.pending = true;
    if (!this.running && !this.timer) this.schedule(ms);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    this.refill();
    const wait = this.tokens > 0 ? delayMs : Math.max(delayMs, this.refilledAt + this.minMs - this.now());
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.fire(), wait);
  }

  private async fire(): Promise<void> {
    this.timer = undefined;
    this.refill();
    if (this.tokens <= 0) return this.schedule(0);
    this.tokens--;
    this.pending = false;
    this.running = true;
    try {
      await this.fn();
    } finally {
      this.running = false;
      if (this.pending && !this.stopped) this.schedule(0);
    }
  }
}
