// Runs the sync function on request, at most `burst` times back to back and
// then at most once per minSyncPeriod (upstream BoundedFrequencyRunner):
// requests while a sync runs or waits are coalesced into one.
export class SyncRunner {
  private tokens: number;
  private refilledAt: number;
  /** The scheduled sync, cancellable. */
  private timer: { cancel(): void } | undefined;
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
    this.timer?.cancel();
  }

  private schedule(delayMs: number): void {
    this.refill();
    const wait = this.tokens > 0 ? delayMs : Math.max(delayMs, this.refilledAt + this.minMs - this.now());
    this.timer?.cancel();
    // A sync due now runs at the next turn of the event loop: setTimeout(0) waits at least a millisecond.
    if (wait <= 0) {
      const i = setImmediate(() => void this.fire());
      this.timer = { cancel: () => clearImmediate(i) };
    } else {
      const t = setTimeout(() => void this.fire(), wait);
      this.timer = { cancel: () => clearTimeout(t) };
    }
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
