// Graceful node shutdown (upstream's nodeshutdown manager, systemd
// variant): with shutdownGracePeriod set, the kubelet holds a systemd-logind
// "delay" inhibitor lock; when logind announces PrepareForShutdown, the node
// reports NotReady, new pods are refused, regular pods get
// shutdownGracePeriod − shutdownGracePeriodCriticalPods to stop, then critical
// pods get the rest, and the lock is released. logind is reached through its
// CLIs (systemd-inhibit, busctl); where it is not running, the kubelet says
// that graceful shutdown is unavailable and runs without it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';

import type { Pod } from 'kubernetes-types/core/v1.js';

import type { Logger } from '../../kube/log.js';

export const SHUTDOWN_REASON = 'Terminated';
export const SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
export const SHUTDOWN_NOT_ADMITTED = {
  reason: 'NodeShutdown',
  message: 'Pod was rejected as the node is shutting down.',
};

/** The two phases: regular pods first with what critical pods do not need, then critical pods. */
export function shutdownPlan<T extends { critical: boolean }>(
  pods: T[],
  totalSec: number,
  criticalSec: number,
): { pods: T[]; graceSec: number }[] {
  const regular = pods.filter((p) => !p.critical);
  const critical = pods.filter((p) => p.critical);
  return [
    { pods: regular, graceSec: Math.max(0, totalSec - criticalSec) },
    { pods: critical, graceSec: criticalSec },
  ].filter((g) => g.pods.length);
}

export interface ShutdownDeps {
  /** Pods running here, and how to end one with the shutdown reason; resolves once it has stopped. */
  pods(): { pod: Pod; critical: boolean; terminate(graceSec: number): Promise<void> }[];
  log: Logger;
}

export class NodeShutdownManager {
  private inhibitor: ChildProcess | undefined;
  private monitor: ChildProcess | undefined;
  shuttingDown = false;

  constructor(
    private readonly totalSec: number,
    private readonly criticalSec: number,
    private readonly d: ShutdownDeps,
  ) {}

  /** Why graceful shutdown cannot work here, or undefined when logind is there to ask. */
  static unavailable(): string | undefined {
    if (!fs.existsSync('/run/systemd/system')) return 'systemd is not the init system (no /run/systemd/system)';
    const r = spawnSync('busctl', ['--system', 'status', 'org.freedesktop.login1'], {
      encoding: 'utf8',
      timeout: 5000,
    });
    if (r.error || r.status !== 0) return `systemd-logind is not reachable: ${r.error?.message ?? r.stderr.trim()}`;
    return undefined;
  }

  start(): void {
    if (this.totalSec <= 0) return;
    const why = NodeShutdownManager.unavailable();
    if (why) {
      this.d.log.warn(`graceful node shutdown is unavailable: ${why}; shutdownGracePeriod is ignored`);
      return;
    }
    this.ensureInhibitDelay();
    // A delay lock lasts as long as this child does.
    this.inhibitor = spawn(
      'systemd-inhibit',
      [
        '--what=shutdown',
        '--mode=delay',
        '--who=kubelet',
        '--why=Kubelet needs time for critical node shutdown',
        'sleep',
        'infinity',
      ],
      { stdio: 'ignore' },
    );
    this.monitor = spawn(
      'busctl',
      [
        '--system',
        'monitor',
        '--json=short',
        '--match',
        "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForShutdown'",
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let buf = '';
    this.monitor.stdout!.on('data', (b: Buffer) => {
      buf += b.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (/PrepareForShutdown/.test(line) && /"data"\s*:\s*\[\s*true\s*\]/.test(line)) void this.shutdown();
      }
    });
    this.d.log.info(
      `graceful node shutdown: holding a logind delay lock for ${this.totalSec}s (${this.criticalSec}s of it for critical pods)`,
    );
  }

  /** logind must let a delay lock hold as long as shutdownGracePeriod (upstream writes the same drop-in). */
  private ensureInhibitDelay(): void {
    const r = spawnSync(
      'busctl',
      [
        '--system',
        'get-property',
        'org.freedesktop.login1',
        '/org/freedesktop/login1',
        'org.freedesktop.login1.Manager',
        'InhibitDelayMaxUSec',
      ],
      { encoding: 'utf8', timeout: 5000 },
    );
    const usec = Number(/\d+/.exec(r.stdout ?? '')?.[0] ?? 0);
    if (usec >= this.totalSec * 1e6) return;
    try {
      fs.mkdirSync('/etc/systemd/logind.conf.d', { recursive: true });
      fs.writeFileSync(
        '/etc/systemd/logind.conf.d/99-kubelet.conf',
        `# Written by the kubelet (tskube) for shutdownGracePeriod\n[Login]\nInhibitDelayMaxSec=${this.totalSec}\n`,
      );
      spawnSync('systemctl', ['kill', '-s', 'HUP', 'systemd-logind'], { timeout: 5000 });
    } catch (e) {
      this.d.log.warn(`graceful node shutdown: cannot raise logind's InhibitDelayMaxSec: ${(e as Error).message}`);
    }
  }

  /** PrepareForShutdown(true): stop the pods in their two phases, then let the shutdown go on. */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.d.log.info('node is shutting down: stopping pods');
    for (const phase of shutdownPlan(this.d.pods(), this.totalSec, this.criticalSec)) {
      await Promise.race([
        Promise.all(phase.pods.map((p) => p.terminate(phase.graceSec))),
        new Promise((r) => setTimeout(r, (phase.graceSec + 2) * 1000)),
      ]);
    }
    this.stop();
  }

  stop(): void {
    this.monitor?.kill();
    this.inhibitor?.kill();
    this.monitor = this.inhibitor = undefined;
  }
}
