// A controller work queue: keys wait once (a key added again while waiting
// keeps its first value, e.g. when its change was first seen) and are handled
// one at a time, in the order they came.
export class KeyQueue<V> {
  private readonly items = new Map<string, V>();
  private draining = false;

  /** `before(a, b)`: whether key a should be handled before key b (else arrival order), e.g. by pod priority. */
  constructor(
    private readonly handle: (key: string, value: V) => Promise<void>,
    private readonly before?: (a: string, b: string) => boolean,
  ) {}

  add(key: string, value: V): void {
    if (!this.items.has(key)) this.items.set(key, value);
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => void this.drain());
  }

  delete(key: string): void {
    this.items.delete(key);
  }

  private async drain(): Promise<void> {
    try {
      while (this.items.size) {
        let [key, value] = this.items.entries().next().value!;
        if (this.before) for (const [k, v] of this.items) if (this.before(k, key)) [key, value] = [k, v];
        this.items.delete(key);
        await this.handle(key, value);
      }
    } finally {
      this.draining = false;
    }
  }
}

/**
 * A KeyQueue whose handler is retried a second later when it throws (409s
 * and 404s quietly: another writer won, or the object went), with delayed
 * re-adds for time-based work such as minReadySeconds and progress deadlines.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class RetryingQueue {
  /** One timer per key, the earliest asked for: the sync it runs asks again if it needs to. */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  private readonly queue: KeyQueue<undefined>;

  constructor(name: string, log: { warn(m: string): void }, sync: (key: string) => Promise<void>) {
    this.queue = new KeyQueue<undefined>(async (key) => {
      try {
        await sync(key);
      } catch (e) {
        const code = (e as { code?: number }).code;
        if (code !== 409 && code !== 404) log.warn(`${name}: ${key}: ${(e as Error).message}; retrying`);
        this.later(key, 1000);
      }
    });
  }

  add(key: string): void {
    this.queue.add(key, undefined);
  }

  later(key: string, wanted: number): void {
    // Node runs longer timers at once; a sync that comes early asks again.
    const ms = Math.min(wanted, MAX_TIMER_MS);
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { timer, at });
  }

  stop(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
