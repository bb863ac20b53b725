// Garbage collection choices, kept pure: keep the newest exited instance of
// each container (for `logs --previous`), drop older ones and containers
// stuck in created, and drop dead sandboxes that no longer hold containers.
import { L_CONTAINER_NAME, L_POD_UID } from '../pods/labels.js';
import type { RuntimeSnapshot } from './relist.js';

export interface Garbage {
  containers: string[];
  sandboxes: string[];
}

/** `active` are pod UIDs that have a live worker; everything else is unowned. */
export function selectGarbage(snap: Pick<RuntimeSnapshot, 'sandboxes' | 'containers'>, active: Set<string>): Garbage {
  const containers: string[] = [];
  const byKey = new Map<string, RuntimeSnapshot['containers']>();
  for (const c of snap.containers) {
    const uid = c.labels[L_POD_UID] ?? '';
    if (!active.has(uid)) {
      // Nobody owns it: anything not running goes (a container stuck in created included).
      if (c.state === 'CONTAINER_EXITED' || c.state === 'CONTAINER_CREATED') containers.push(c.id);
      continue;
    }
    const key = `${uid}/${c.labels[L_CONTAINER_NAME] ?? ''}`;
    const l = byKey.get(key) ?? [];
    l.push(c);
    byKey.set(key, l);
  }
  // Per container of a live pod: the newest instance stays (it may be starting), and so does the newest exited one
  // (`logs --previous`); older exited instances and containers stuck in created go.
  for (const l of byKey.values()) {
    l.sort((a, b) => Number(b.created_at) - Number(a.created_at));
    const newestExited = l.find((c) => c.state === 'CONTAINER_EXITED');
    for (const c of l.slice(1))
      if (c !== newestExited && (c.state === 'CONTAINER_EXITED' || c.state === 'CONTAINER_CREATED'))
        containers.push(c.id);
  }
  const removed = new Set(containers);
  const holding = new Set(snap.containers.filter((c) => !removed.has(c.id)).map((c) => c.pod_sandbox_id));
  const newestByUid = new Map<string, string>();
  for (const s of [...snap.sandboxes].sort((a, b) => Number(b.created_at) - Number(a.created_at))) {
    const uid = s.labels[L_POD_UID] ?? '';
    if (!newestByUid.has(uid)) newestByUid.set(uid, s.id);
  }
  const sandboxes = snap.sandboxes
    .filter((s) => s.state !== 'SANDBOX_READY' && !holding.has(s.id))
    .filter((s) => !active.has(s.labels[L_POD_UID] ?? '') || newestByUid.get(s.labels[L_POD_UID] ?? '') !== s.id)
    .map((s) => s.id);
  return { containers, sandboxes };
}
