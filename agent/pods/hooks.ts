// Lifecycle hooks (upstream pkg/kubelet/lifecycle): postStart runs right after
// a container starts, preStop before it is stopped, inside its grace period.
// exec runs through CRI ExecSync, httpGet as an httpGet probe would, sleep
// waits. A failure is returned as upstream's message; the caller decides.
import type { Container, LifecycleHandler, Pod } from 'kubernetes-types/core/v1.js';

import { clampDelay } from '../../kube/timers.js';
import type { CriClient } from '../cri/client.js';
import { httpProbe } from '../probes/http-probe.js';
import { httpGetURL, probeHeaders } from '../probes/prober.js';
import { formatPod } from './format.js';

export interface HookTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  podIP: string;
}

/** Runs one handler within `timeoutSec`; resolves to undefined on success, else upstream's failure message. */
export async function runHook(
  h: LifecycleHandler,
  t: HookTarget,
  cri: CriClient,
  timeoutSec: number,
): Promise<string | undefined> {
  const where = `for Container ${JSON.stringify(t.container.name)} in Pod ${JSON.stringify(formatPod(t.pod))}`;
  if (h.exec) {
    const cmd = h.exec.command ?? [];
    try {
      const r = await cri.execSync(t.containerId, cmd, Math.max(1, timeoutSec));
      if (r.exit_code === 0) return undefined;
      const out = Buffer.concat([Buffer.from(r.stdout ?? ''), Buffer.from(r.stderr ?? '')]).toString('utf8');
      return `Exec lifecycle hook ([${cmd.join(' ')}]) ${where} failed - error: command '${cmd.join(' ')}' exited with ${r.exit_code}: ${out}, message: ${JSON.stringify(out)}`;
    } catch (e) {
      return `Exec lifecycle hook ([${cmd.join(' ')}]) ${where} failed - error: ${(e as Error).message}, message: ""`;
    }
  }
  if (h.httpGet) {
    const g = h.httpGet;
    const r = await httpProbe({
      url: httpGetURL(g, t.podIP, t.container),
      headers: probeHeaders(g.httpHeaders),
      timeoutMs: Math.max(1, timeoutSec) * 1000,
    });
    return r.result === 'failure'
      ? `HTTP lifecycle hook (${g.path ?? '/'}) ${where} failed - error: ${r.output}, message: ""`
      : undefined;
  }
  if (h.sleep) {
    await new Promise((r) => setTimeout(r, clampDelay(Math.min(h.sleep!.seconds, timeoutSec) * 1000)));
    return undefined;
  }
  return `lifecycle hook ${where} failed - error: no handler (exec, httpGet or sleep) given`;
}
