// PLEG: relists CRI state about once a second and reports which pods
// changed, so their workers wake up without polling on their own.
import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import type { Container, PodSandbox } from '../cri/types.js';
import { fingerprintsByPod } from './fingerprint.js';

export interface RuntimeSnapshot {
  sandboxes: PodSandbox[];
  containers: Container[];
  /** When the lists were answered, on the monotonic clock (performance.now(), ms): wall time may step back. */
  at: number;
  /** Each pod's fingerprint in these lists, by UID. */
  fingerprints: Map<string, string>;
}

export class Pleg {
  private timer: NodeJS.Timeout | undefined;
  private prev = new Map<string, string>();
  private relisting = false;
  snapshot: RuntimeSnapshot | undefined;
  lastRelistMs = 0;
  /** When the last relist began: a relist that hangs leaves it behind (the syncloop health check). */
  enteredAt = 0;
  /** Sees each successful relist's duration in seconds (metrics). */
  onRelisted: ((seconds: number) => void) | undefined;

  constructor(
    private readonly cri: CriClient,
    private readonly log: Logger,
    /** The pods whose fingerprint changed since the last relist, and the relist. */
    private readonly onChange: (uids: string[], snap: RuntimeSnapshot) => void,
    private readonly periodMs = 1000,
  ) {}

  start(): void {
    const tick = async (): Promise<void> => {
      await this.relist();
      if (this.timer !== undefined) this.timer = setTimeout(() => void tick(), this.periodMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  async relist(): Promise<RuntimeSnapshot | undefined> {
    if (this.relisting) return this.snapshot;
    this.relisting = true;
    this.enteredAt = Date.now();
    const t0 = performance.now();
    try {
      const [sandboxes, containers] = await Promise.all([this.cri.listPodSandbox(), this.cri.listContainers()]);
      const now = fingerprintsByPod(sandboxes, containers);
      const snap: RuntimeSnapshot = { sandboxes, containers, at: performance.now(), fingerprints: now };
      this.snapshot = snap;
      const changed: string[] = [];
      for (const [uid, fp] of now) if (this.prev.get(uid) !== fp) changed.push(uid);
      for (const uid of this.prev.keys()) if (!now.has(uid)) changed.push(uid);
      this.prev = now;
      this.lastRelistMs = performance.now() - t0;
      this.onRelisted?.(this.lastRelistMs / 1000);
      this.onChange(changed, snap);
      return snap;
    } catch (e) {
      this.log.warn(`PLEG relist failed: ${(e as Error).message}`);
      return undefined;
    } finally {
      this.relisting = false;
    }
  }
}
