// A controller work queue: keys wait once (a key added again while waiting
// keeps its first value, e.g. when its change was first seen) and are handled
// one at a time, in the order they came.
export class KeyQueue<V> {
  private readonly items = new Map<string, V>();
  private draining = false;

  constructor(private readonly handle: (key: string, value: V) => Promise<void>) {}

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
        const [key, value] = this.items.entries().next().value!;
        this.items.delete(key);
        await this.handle(key, value);
      }
    } finally {
      this.draining = false;
    }
  }
}
