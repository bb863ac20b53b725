// Stopping every pod on the node when `up` or `join` ends (Ctrl-C, SIGTERM)
// or `reset` runs: each running container gets its pod's grace period
// (capped), then the sandboxes go. The kubelet has stopped syncing by then,
// so nothing starts them again; the next `up` makes new sandboxes and keeps
// the pods' volumes. A second Ctrl-C (force) kills what is still stopping.
import type { CriClient } from '../agent/cri/client.js';
import { A_POD_TERMINATION_GRACE, L_CONTAINER_NAME, L_POD_NAME, L_POD_NAMESPACE } from '../agent/pods/labels.js';

export interface CriObject {
  id: string;
  state: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface StopItem {
  id: string;
  /** namespace/name of the pod, or the runtime's id when it carries no kubelet labels. */
  pod: string;
  container: string;
  graceSec: number;
}

const podName = (o: CriObject): string =>
  o.labels[L_POD_NAME] ? `${o.labels[L_POD_NAMESPACE] ?? 'default'}/${o.labels[L_POD_NAME]}` : o.id.slice(0, 13);

/** The running containers to stop and how long each may take: its pod's terminationGracePeriodSeconds (30 when unknown), at most capSec. */
export function stopPlan(containers: CriObject[], capSec: number): StopItem[] {
  return containers
    .filter((c) => c.state !== 'CONTAINER_EXITED')
    .map((c) => {
      const g = Number(c.annotations[A_POD_TERMINATION_GRACE] ?? 30);
      return {
        id: c.id,
        pod: podName(c),
        container: c.labels[L_CONTAINER_NAME] ?? c.id.slice(0, 13),
        graceSec: Math.max(0, Math.min(Number.isFinite(g) ? g : 30, capSec)),
      };
    });
}

export interface StopResult {
  pods: number;
  containers: number;
  /** What could not be stopped or removed, each naming the pod and the runtime's error. */
  problems: string[];
}

/**
 * Stops every container (in parallel, each within its grace) and then stops and removes every sandbox.
 * `force` resolves when the user asks to stop waiting: containers still stopping are killed.
 */
export async function stopPods(
  cri: CriClient,
  o: { capSec: number; note: (s: string) => void; force?: Promise<void> },
): Promise<StopResult> {
  const problems: string[] = [];
  const [sandboxes, containers] = await Promise.all([cri.listPodSandbox(), cri.listContainers()]);
  const plan = stopPlan(containers as CriObject[], o.capSec);
  const pending = new Set(plan.map((p) => p.id));
  if (plan.length)
    o.note(
      `stopping ${plan.length} container(s) of ${new Set(plan.map((p) => p.pod)).size} pod(s), each within its grace period (at most ${o.capSec}s${o.force ? '; Ctrl-C again to kill them now' : ''})`,
    );
  const t0 = Date.now();
  const ticker = setInterval(
    () =>
      o.note(
        `still stopping ${pending.size} container(s) after ${Math.round((Date.now() - t0) / 1000)}s: ${[...new Set(plan.filter((p) => pending.has(p.id)).map((p) => p.pod))].join(', ')}`,
      ),
    5000,
  );
  void o.force?.then(() => {
    if (!pending.size) return;
    o.note(`killing ${pending.size} container(s) now`);
    for (const p of plan) if (pending.has(p.id)) void cri.stopContainer(p.id, 0, p.pod).catch(() => undefined);
  });
  try {
    await Promise.all(
      plan.map(async (p) => {
        try {
          await cri.stopContainer(p.id, p.graceSec, p.pod);
        } catch (e) {
          problems.push(`container ${p.container} of ${p.pod}: ${(e as Error).message}`);
        } finally {
          pending.delete(p.id);
        }
      }),
    );
  } finally {
    clearInterval(ticker);
  }
  for (const sb of sandboxes as CriObject[]) {
    const name = podName(sb);
    try {
      await cri.stopPodSandbox(sb.id, name);
      await cri.removePodSandbox(sb.id, name);
    } catch (e) {
      problems.push(`pod ${name} (sandbox ${sb.id.slice(0, 13)}): ${(e as Error).message}`);
    }
  }
  return { pods: sandboxes.length, containers: plan.length, problems };
}
