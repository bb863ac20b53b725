// The built-in controllers of the dev control plane, run in-process against
// the Api through LocalClient. --controllers follows kube-controller-manager:
// "*" for all, "-name" to turn one off.
import { ApiEventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import type { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { NodeLifecycle, type NodeLifecycleOptions } from './node-lifecycle.js';
import { Scheduler } from './scheduler.js';

export const CONTROLLER_NAMES = ['scheduler', 'node-lifecycle-controller'] as const;

export interface ControllerOptions extends NodeLifecycleOptions {
  /** e.g. ['*'], ['*', '-scheduler'], ['scheduler'] */
  controllers: string[];
  schedulerRetryMs?: number;
}

export function enabledControllers(list: string[]): Set<string> {
  const out = new Set<string>();
  const off: string[] = [];
  for (const raw of list.map((n) => n.trim()).filter(Boolean)) {
    const name = raw.replace(/^-/, '');
    if (name !== '*' && !(CONTROLLER_NAMES as readonly string[]).includes(name)) throw new Error(`--controllers: unknown controller "${name}" (known: ${CONTROLLER_NAMES.join(', ')})`);
    if (raw.startsWith('-')) off.push(name);
    else if (name === '*') CONTROLLER_NAMES.forEach((c) => out.add(c));
    else out.add(name);
  }
  for (const n of off) out.delete(n);
  return out;
}

export interface RunningControllers {
  scheduler?: Scheduler;
  nodeLifecycle?: NodeLifecycle;
  stop(): Promise<void>;
}

export async function startControllers(api: Api, o: ControllerOptions, log: Logger): Promise<RunningControllers> {
  const on = enabledControllers(o.controllers);
  const stops: (() => Promise<void>)[] = [];
  const out: RunningControllers = { stop: async () => void (await Promise.all(stops.map((s) => s()))) };
  if (on.has('scheduler')) {
    const client = new LocalClient(api, { name: 'system:kube-scheduler', groups: [] });
    const s = new Scheduler(client, log, new ApiEventRecorder(client, { component: 'default-scheduler' }, log), { retryMs: o.schedulerRetryMs });
    await s.start();
    stops.push(() => s.stop());
    out.scheduler = s;
  }
  if (on.has('node-lifecycle-controller')) {
    const client = new LocalClient(api, { name: 'system:serviceaccount:kube-system:node-controller', groups: [] });
    const c = new NodeLifecycle(client, log, new ApiEventRecorder(client, { component: 'node-controller' }, log), o);
    await c.start();
    stops.push(() => c.stop());
    out.nodeLifecycle = c;
  }
  return out;
}
