// What the PLEG compares between relists: for each pod, its sandboxes' and
// containers' IDs and states as the runtime lists them. A pod whose
// fingerprint changed has an event; a pod worker that has already acted on a
// read with the same fingerprint skips it (worker.ts). Pure.
import { L_POD_UID } from '../pods/labels.js';

interface Listed {
  id: string;
  state: string;
  labels: Record<string, string>;
}

/** One pod's fingerprint from the runtime's lists of its sandboxes and containers ('' when it has none). */
export function podFingerprint(sandboxes: Omit<Listed, 'labels'>[], containers: Omit<Listed, 'labels'>[]): string {
  return [...sandboxes.map((s) => `s:${s.id}:${s.state}`), ...containers.map((c) => `c:${c.id}:${c.state}`)]
    .sort()
    .join(',');
}

/** Every pod's fingerprint from a relist of the whole node, by pod UID. */
export function fingerprintsByPod(sandboxes: Listed[], containers: Listed[]): Map<string, string> {
  const byPod = new Map<string, { sandboxes: Listed[]; containers: Listed[] }>();
  const of = (uid: string): { sandboxes: Listed[]; containers: Listed[] } => {
    let p = byPod.get(uid);
    if (!p) byPod.set(uid, (p = { sandboxes: [], containers: [] }));
    return p;
  };
  for (const s of sandboxes) if (s.labels[L_POD_UID]) of(s.labels[L_POD_UID]).sandboxes.push(s);
  for (const c of containers) if (c.labels[L_POD_UID]) of(c.labels[L_POD_UID]).containers.push(c);
  return new Map([...byPod].map(([uid, p]) => [uid, podFingerprint(p.sandboxes, p.containers)]));
}
