// Progress lines for long-running commands (`tskube up`): one numbered line
// per step with how long it took, readable at a glance.
export class Progress {
  private n = 0;

  constructor(
    private readonly total: number,
    private readonly out: (s: string) => void = (s) => process.stdout.write(s),
  ) {}

  /** Runs one step; prints its title, then its outcome and duration. */
  async step<T>(title: string, fn: (note: (detail: string) => void) => Promise<T>): Promise<T> {
    const i = ++this.n;
    const t0 = Date.now();
    const head = `[${i}/${this.total}] ${title}`;
    this.out(`${head} ...\n`);
    const note = (detail: string): void => this.out(`      ${detail}\n`);
    try {
      const r = await fn(note);
      this.out(`[${i}/${this.total}] ${title}: done (${((Date.now() - t0) / 1000).toFixed(1)}s)\n`);
      return r;
    } catch (e) {
      this.out(
        `[${i}/${this.total}] ${title}: FAILED after ${((Date.now() - t0) / 1000).toFixed(1)}s: ${(e as Error).message}\n`,
      );
      throw e;
    }
  }
}
