// The DaemonSet controller's decisions, kept pure (upstream pkg/controller/
// daemon): which nodes should run a daemon pod, the pod made for a node, what
// to create and delete on each node (manage), how a RollingUpdate replaces
// old pods within maxUnavailable or maxSurge, and the status counts.
import type { KObj } from '../../kube/client.js';
import { ANN_TEMPLATE_GENERATION } from '../api/apps.js';
import { LABEL_REVISION_HASH } from './controller-history.js';
import { matchesNodeSelector, type Taint, tolerates } from './scheduling.js';
import { isAvailable, isReady, scaled } from './workload-model.js';

/** extensions.DaemonSetTemplateGenerationKey, still set on daemon pods. */
export const LABEL_TEMPLATE_GENERATION = 'pod-template-generation';

/** util.AddOrUpdateDaemonPodTolerations: daemon pods survive node problems and cordons. */
export function daemonTolerations(spec: KObj): KObj[] {
  const wanted: KObj[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
    ...(spec.hostNetwork
      ? [{ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' }]
      : []),
  ];
  // AddOrUpdateTolerationInPodSpec: one with the same key and effect is replaced.
  const out = ((spec.tolerations ?? []) as KObj[]).filter(
    (t) => !wanted.some((w) => w.key === t.key && w.effect === t.effect),
  );
  return [...out, ...wanted];
}

/** nodeutil.GetTargetNodeName: where a daemon pod is, or is meant to be scheduled. */
export function targetNode(pod: KObj): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  for (const t of (pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
    ?.nodeSelectorTerms ?? []) as KObj[]) {
    const f = ((t.matchFields ?? []) as KObj[]).find(
      (e) => e.key === 'metadata.name' && e.operator === 'In' && (e.values ?? []).length === 1,
    );
    if (f) return f.values[0];
  }
  return undefined;
}

/** NodeShouldRunDaemonPod: shouldRun (a pod belongs here) and shouldContinueRunning (one already here may stay). */
export function nodeShouldRun(ds: KObj, node: KObj): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const tpl = ds.spec?.template?.spec ?? {};
  const pod = { spec: { ...tpl, tolerations: daemonTolerations(tpl) } };
  const fitsName = !tpl.nodeName || tpl.nodeName === node.metadata.name;
  if (!fitsName || !matchesNodeSelector(pod, node)) return { shouldRun: false, shouldContinueRunning: false };
  const taints = (node.spec?.taints ?? []) as Taint[];
  const untolerated = (effects: string[]): boolean =>
    taints.some((t) => effects.includes(t.effect) && !tolerates(pod.spec.tolerations, t));
  if (untolerated(['NoSchedule', 'NoExecute']))
    return { shouldRun: false, shouldContinueRunning: !untolerated(['NoExecute']) };
  return { shouldRun: true, shouldContinueRunning: true };
}

/** The pod for a node: the template, the daemon tolerations, node affinity to that node alone, and the revision labels. */
export function daemonPod(ds: KObj, nodeName: string, hash: string): KObj {
  const t = structuredClone(ds.spec?.template ?? {}) as KObj;
  const spec = (t.spec ?? {}) as KObj;
  spec.tolerations = daemonTolerations(spec);
  // ReplaceDaemonSetPodNodeNameNodeAffinity: the scheduler places it, on this node only.
  const term = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
  spec.affinity = {
    ...(spec.affinity ?? {}),
    nodeAffinity: {
      ...(spec.affinity?.nodeAffinity ?? {}),
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] },
    },
  };
  const generation = ds.metadata.annotations?.[ANN_TEMPLATE_GENERATION];
  const labels = {
    ...(t.metadata?.labels ?? {}),
    [LABEL_REVISION_HASH]: hash,
    ...(generation ? { [LABEL_TEMPLATE_GENERATION]: generation } : {}),
  };
  return { metadata: { ...(t.metadata ?? {}), labels }, spec };
}

/** util.IsPodUpdated: made from the current revision (by hash, or by template generation). */
export function isUpdated(ds: KObj, pod: KObj, hash: string): boolean {
  const gen = ds.metadata.annotations?.[ANN_TEMPLATE_GENERATION];
  return (
    pod.metadata.labels?.[LABEL_REVISION_HASH] === hash ||
    (gen !== undefined && pod.metadata.labels?.[LABEL_TEMPLATE_GENERATION] === gen)
  );
}

const terminal = (p: KObj): boolean => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';
/** podByCreationTimestampAndPhase: oldest first, running before pending on a tie. */
const oldestFirst = (a: KObj, b: KObj): number =>
  Date.parse(a.metadata.creationTimestamp ?? '') - Date.parse(b.metadata.creationTimestamp ?? '') ||
  String(a.metadata.name).localeCompare(String(b.metadata.name));

export interface DaemonPlan {
  /** Nodes that need a daemon pod made. */
  create: string[];
  /** Daemon pods to delete, with why (failed pods get a FailedDaemonPod event). */
  delete: { name: string; failed?: { node: string } }[];
  status: KObj;
}

export const allowsSurge = (ds: KObj): boolean =>
  ds.spec?.updateStrategy?.type === 'RollingUpdate' &&
  scaled(ds.spec.updateStrategy.rollingUpdate?.maxSurge, 1, true, '0') > 0;

/** One sync of a DaemonSet over all nodes and its pods (manage, rollingUpdate, updateDaemonSetStatus). */
export function planDaemonSet(ds: KObj, nodes: KObj[], pods: KObj[], hash: string, now = Date.now()): DaemonPlan {
  const byNode = new Map<string, KObj[]>();
  for (const p of pods) {
    const n = targetNode(p);
    if (n !== undefined) byNode.set(n, [...(byNode.get(n) ?? []), p]);
  }
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const surge = allowsSurge(ds);
  const create: string[] = [];
  const del: DaemonPlan['delete'] = [];
  const nodeNames = new Set(nodes.map((n) => n.metadata.name as string));
  const eligible = new Map<string, boolean>();
  for (const node of nodes) {
    const name = node.metadata.name as string;
    const { shouldRun, shouldContinueRunning } = nodeShouldRun(ds, node);
    eligible.set(name, shouldRun);
    const here = byNode.get(name) ?? [];
    if (shouldRun && here.length === 0) create.push(name);
    else if (shouldContinueRunning) {
      const running: KObj[] = [];
      for (const p of here) {
        if (p.metadata.deletionTimestamp) continue;
        if (p.status?.phase === 'Failed') del.push({ name: p.metadata.name, failed: { node: name } });
        else if (p.status?.phase === 'Succeeded') del.push({ name: p.metadata.name });
        else running.push(p);
      }
      running.sort(oldestFirst);
      if (!surge) {
        // More than one: all but the oldest go.
        for (const p of running.slice(1)) del.push({ name: p.metadata.name });
      } else if (running.length === 0) {
        if (shouldRun) create.push(name);
      } else if (running.length > 1) {
        // Surging: an old and a new pod may share the node until the new one is available.
        const newest = running.find((p) => isUpdated(ds, p, hash));
        const oldest = running.find((p) => !isUpdated(ds, p, hash));
        for (const p of running) if (p !== newest && p !== oldest) del.push({ name: p.metadata.name });
        if (newest && oldest) {
          if (!isReady(oldest)) del.push({ name: oldest.metadata.name });
          else if (isAvailable(newest, minReady, now)) del.push({ name: oldest.metadata.name });
        }
      }
    } else for (const p of here) if (!p.metadata.deletionTimestamp) del.push({ name: p.metadata.name });
  }
  // Unscheduled daemon pods meant for nodes that no longer exist.
  for (const [n, ps] of byNode)
    if (!nodeNames.has(n))
      for (const p of ps) if (!p.spec?.nodeName && !p.metadata.deletionTimestamp) del.push({ name: p.metadata.name });

  if (ds.spec?.updateStrategy?.type === 'RollingUpdate') {
    const r = rollingUpdate(ds, byNode, eligible, hash, now);
    for (const name of r.delete) if (!del.some((d) => d.name === name)) del.push({ name });
    for (const n of r.create) if (!create.includes(n)) create.push(n);
  }
  return { create, delete: del, status: daemonStatus(ds, nodes, byNode, eligible, hash, now) };
}

/** findUpdatedPodsOnNode: the node's one new and one old pod, or not ok when there are two of a kind. */
function updatedPodsOn(ds: KObj, pods: KObj[], hash: string): { ok: boolean; newPod?: KObj; oldPod?: KObj } {
  let newPod: KObj | undefined;
  let oldPod: KObj | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    if (isUpdated(ds, p, hash)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { ok: true, newPod, oldPod };
}

/** rollingUpdate: old pods deleted (maxSurge 0) or new ones made beside them (maxSurge > 0), within the budget. */
function rollingUpdate(
  ds: KObj,
  byNode: Map<string, KObj[]>,
  eligible: Map<string, boolean>,
  hash: string,
  now: number,
): { delete: string[]; create: string[] } {
  const minReady = ds.spec?.minReadySeconds ?? 0;
  const desired = [...eligible.values()].filter(Boolean).length;
  const ru = ds.spec?.updateStrategy?.rollingUpdate ?? {};
  const maxSurge = scaled(ru.maxSurge, desired, true, '0');
  let maxUnavailable = scaled(ru.maxUnavailable, desired, true, '1');
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  // The eligible nodes and every node with live daemon pods (terminating and finished ones left out).
  const nodes = new Map<string, KObj[]>();
  for (const [n, run] of eligible) if (run) nodes.set(n, []);
  for (const [n, ps] of byNode) {
    const live = ps.filter((p) => !p.metadata.deletionTimestamp && !terminal(p));
    if (live.length || nodes.has(n)) nodes.set(n, live);
  }
  const avail = (p: KObj): boolean => isAvailable(p, minReady, now);
  if (maxSurge === 0) {
    let numUnavailable = 0;
    const replace: string[] = [];
    const candidates: string[] = [];
    for (const pods of nodes.values()) {
      const { ok, newPod, oldPod } = updatedPodsOn(ds, pods, hash);
      if (!ok || (!oldPod && !newPod) || (oldPod && newPod)) numUnavailable++;
      else if (newPod) {
        if (!avail(newPod)) numUnavailable++;
      } else if (!avail(oldPod!)) {
        replace.push(oldPod!.metadata.name);
        numUnavailable++;
      } else if (numUnavailable < maxUnavailable) candidates.push(oldPod!.metadata.name);
    }
    const room = Math.min(Math.max(0, maxUnavailable - numUnavailable), candidates.length);
    return { delete: [...replace, ...candidates.slice(0, room)], create: [] };
  }
  let numSurge = 0;
  const del: string[] = [];
  const allowed: string[] = [];
  const candidates: string[] = [];
  for (const [n, pods] of nodes) {
    const { ok, newPod, oldPod } = updatedPodsOn(ds, pods, hash);
    if (!ok) {
      numSurge++;
      continue;
    }
    if (!oldPod) continue;
    if (!newPod) {
      if (!avail(oldPod)) allowed.push(n);
      else if (numSurge < maxSurge) candidates.push(n);
    } else if (!avail(newPod)) numSurge++;
    else del.push(oldPod.metadata.name);
  }
  const room = Math.min(Math.max(0, maxSurge - numSurge), candidates.length);
  return { delete: del, create: [...allowed, ...candidates.slice(0, room)] };
}

/** updateDaemonSetStatus's counts. */
function daemonStatus(
  ds: KObj,
  nodes: KObj[],
  byNode: Map<string, KObj[]>,
  eligible: Map<string, boolean>,
  hash: string,
  now: number,
): KObj {
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const pods = [...(byNode.get(node.metadata.name) ?? [])].sort(oldestFirst);
    if (!eligible.get(node.metadata.name)) {
      if (pods.length) misscheduled++;
      continue;
    }
    desired++;
    const pod = pods[0];
    if (!pod) continue;
    current++;
    if (isReady(pod)) {
      ready++;
      if (isAvailable(pod, ds.spec?.minReadySeconds ?? 0, now)) available++;
    }
    if (isUpdated(ds, pod, hash)) updated++;
  }
  const status: KObj = {
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    desiredNumberScheduled: desired,
    numberReady: ready,
    observedGeneration: ds.metadata.generation,
    updatedNumberScheduled: updated,
  };
  // Both omitted when zero, as upstream's omitempty.
  if (available) status.numberAvailable = available;
  if (desired - available) status.numberUnavailable = desired - available;
  if (ds.status?.collisionCount !== undefined) status.collisionCount = ds.status.collisionCount;
  if (ds.status?.conditions) status.conditions = ds.status.conditions;
  return status;
}
