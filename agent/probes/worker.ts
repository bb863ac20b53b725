// One probe of one container (upstream prober worker): runs every
// periodSeconds on a fixed schedule, keeps results per container ID, applies
// initialDelaySeconds and the success/failure thresholds, and holds off after
// a liveness or startup failure until the container is replaced.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { clampDelay } from '../../kube/timers.js';
import type { ProbeOutcome, ProbeResult, ProbeSpec, ProbeType } from './types.js';

/** What a probe worker needs to know about its container right now. */
export interface ContainerView {
  pod: Pod;
  container: Container;
  id: string;
  running: boolean;
  /** ms since epoch */
  startedAt: number;
  podIP: string;
  /** The startup probe (if any) has succeeded. */
  started: boolean;
}

export interface WorkerHost {
  view(): ContainerView | undefined;
  run(spec: ProbeSpec, v: ContainerView): Promise<ProbeOutcome & { error?: string }>;
  /** A new result was set (after thresholds) for a container ID. */
  set(id: string, result: ProbeResult, previous: ProbeResult | undefined): void;
  /** Every run, with its raw outcome (events, metrics). */
  observed(v: ContainerView, outcome: ProbeOutcome & { error?: string }, ms: number): void;
  now?: () => number;
}

/** Upstream initial values: not ready until proven; alive until proven otherwise; startup unknown. */
export const INITIAL: Record<ProbeType, ProbeResult> = {
  Readiness: 'failure',
  Liveness: 'success',
  Startup: 'unknown',
};

export class ProbeWorker {
  private timer: NodeJS.Timeout | undefined;
  private containerId = '';
  /** The result as last set (after thresholds). */
  private lastResult: ProbeResult | undefined;
  /** The last raw run result, and how many runs in a row gave it. */
  private lastRunResult: ProbeResult | undefined;
  private run = 0;
  private onHold = false;
  private busy = false;
  private stopped = false;
  private nextAt = 0;
  lastRunAt = 0;
  runs = 0;

  constructor(
    readonly type: ProbeType,
    readonly spec: ProbeSpec,
    private readonly host: WorkerHost,
  ) {}

  private get now(): number {
    return (this.host.now ?? Date.now)();
  }

  /** jitterMs spreads the first run so that workers started together do not probe together. */
  start(jitterMs: number): void {
    this.nextAt = this.now + jitterMs;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), clampDelay(this.nextAt - this.now));
    this.timer.unref();
  }

  /** The last run stopped at the startup probe's gate. */
  private gated = false;

  /** Probe now if there is something new to learn (a new container, startup done), without moving the schedule. */
  poke(): void {
    if (this.stopped || this.busy) return;
    const v = this.host.view();
    // A new container, or one whose startup probe has just let this probe run (upstream probes at once then).
    if (!v?.running || (v.id === this.containerId && !(this.gated && v.started)) || this.onHold) return;
    const ready = v.startedAt + this.spec.initialDelaySeconds * 1000;
    if (ready > this.now) return; // the schedule will get there
    void this.probe();
  }

  private async tick(): Promise<void> {
    const period = this.spec.periodSeconds * 1000;
    // A fixed grid: lateness of one run does not push the next ones.
    this.nextAt += period;
    if (this.nextAt <= this.now) this.nextAt = this.now + period;
    this.arm();
    await this.probe();
  }

  /** One doProbe: returns after setting a result (or deciding to skip). */
  async probe(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      await this.doProbe();
    } finally {
      this.busy = false;
    }
  }

  private async doProbe(): Promise<void> {
    const v = this.host.view();
    if (!v || !v.id) return; // not created yet
    if (v.id !== this.containerId) {
      const prev = this.lastResult;
      this.containerId = v.id;
      this.lastResult = INITIAL[this.type];
      this.lastRunResult = undefined;
      this.run = 0;
      this.onHold = false;
      this.host.set(v.id, INITIAL[this.type], prev);
    }
    if (this.onHold) return;
    if (!v.running) {
      if (this.type !== 'Liveness' && this.lastResult !== 'failure') this.setResult(v.id, 'failure');
      return;
    }
    if (this.type === 'Startup' && v.started) return; // done: startup probes stop after success
    this.gated = this.type !== 'Startup' && !v.started;
    if (this.gated) return; // gated by the startup probe
    if (this.now - v.startedAt < this.spec.initialDelaySeconds * 1000) return;
    const t0 = performance.now();
    this.lastRunAt = this.now;
    this.runs++;
    const outcome = await this.host.run(this.spec, v);
    this.host.observed(v, outcome, performance.now() - t0);
    if (outcome.error || this.stopped) return; // an errored probe leaves the last result
    // The container may have been replaced while we probed; the result belongs to the old one.
    if (this.host.view()?.id !== v.id) return;
    const result: ProbeResult = outcome.result === 'warning' ? 'success' : outcome.result;
    this.run = result === this.lastRunResult ? this.run + 1 : 1;
    this.lastRunResult = result;
    if (
      (result === 'failure' && this.run < this.spec.failureThreshold) ||
      (result === 'success' && this.run < this.spec.successThreshold)
    )
      return;
    this.setResult(v.id, result);
    if ((this.type === 'Liveness' || this.type === 'Startup') && result === 'failure') {
      // The container is about to be killed: no more probing until it is replaced.
      this.onHold = true;
      this.run = 0;
    }
  }

  private setResult(id: string, r: ProbeResult): void {
    const prev = this.lastResult;
    this.lastResult = r;
    if (prev !== r) this.host.set(id, r, prev);
  }
}
