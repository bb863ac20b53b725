// The scheduler's decisions, kept pure: which nodes fit a pod (and why the
// others do not, in kube-scheduler's words), and how well each fitting node
// scores (least requested). The controller around it only does I/O.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { hostPortConflict } from '../../kube/host-ports.js';
import { milliValue, parseQuantity } from '../../kube/quantity.js';
import type { Obj } from '../storage/store.js';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

export interface Resources {
  milliCpu: number;
  memory: number;
}

/** Upstream's default request used for scoring pods that ask for nothing. */
const NON_ZERO_CPU = 100;
const NON_ZERO_MEMORY = 200 * 1024 * 1024;

function containerRequest(c: Obj, nonZero: boolean): Resources {
  const req = c.resources?.requests ?? {};
  const lim = c.resources?.limits ?? {};
  const cpu = req.cpu ?? lim.cpu;
  const mem = req.memory ?? lim.memory;
  return {
    milliCpu: cpu !== undefined ? milliValue(cpu) : nonZero ? NON_ZERO_CPU : 0,
    memory: mem !== undefined ? parseQuantity(mem) : nonZero ? NON_ZERO_MEMORY : 0,
  };
}

/** What a pod asks for: the sum of its containers, or the largest init container if that is more (plus overhead). */
export function podRequest(pod: Obj, nonZero = false): Resources {
  const spec = pod.spec ?? {};
  const sum: Resources = { milliCpu: 0, memory: 0 };
  for (const c of (spec.containers ?? []) as Obj[]) {
    const r = containerRequest(c, nonZero);
    sum.milliCpu += r.milliCpu;
    sum.memory += r.memory;
  }
  for (const c of (spec.initContainers ?? []) as Obj[]) {
    const r = containerRequest(c, false);
    sum.milliCpu = Math.max(sum.milliCpu, r.milliCpu);
    sum.memory = Math.max(sum.memory, r.memory);
  }
  const oh = spec.overhead ?? {};
  if (oh.cpu !== undefined) sum.milliCpu += milliValue(oh.cpu);
  if (oh.memory !== undefined) sum.memory += parseQuantity(oh.memory);
  return sum;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** v1helper.ToleratesTaint. */
export function tolerates(tolerations: Obj[] | undefined, t: Taint): Obj | undefined {
  return (tolerations ?? []).find((tol) => {
    if (tol.effect && tol.effect !== t.effect) return false;
    if ((tol.operator ?? 'Equal') === 'Exists') return !tol.key || tol.key === t.key;
    return tol.key === t.key && (tol.value ?? '') === (t.value ?? '');
  });
}

const readyStatus = (node: Obj): string =>
  ((node.status?.conditions ?? []) as Obj[]).find((c) => c.type === 'Ready')?.status ?? 'Unknown';

/** The node's taints, plus the ones its Ready condition implies (TaintNodesByCondition), in case the controller has not added them yet. */
export function effectiveTaints(node: Obj): Taint[] {
  const taints = [...((node.spec?.taints ?? []) as Taint[])];
  const st = readyStatus(node);
  const implied = st === 'True' ? undefined : st === 'False' ? TAINT_NOT_READY : TAINT_UNREACHABLE;
  if (implied && !taints.some((t) => t.key === implied && t.effect === 'NoSchedule'))
    taints.push({ key: implied, effect: 'NoSchedule' });
  if (node.spec?.unschedulable && !taints.some((t) => t.key === TAINT_UNSCHEDULABLE))
    taints.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  return taints;
}

function matchExpr(e: Obj, value: string | undefined): boolean {
  const vals = (e.values ?? []) as string[];
  switch (e.operator) {
    case 'In':
      return value !== undefined && vals.includes(value);
    case 'NotIn':
      return value === undefined || !vals.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
      return value !== undefined && Number(value) > Number(vals[0]);
    case 'Lt':
      return value !== undefined && Number(value) < Number(vals[0]);
    default:
      return false;
  }
}

/** nodeSelector and required node affinity (terms are ORed, expressions ANDed). */
export function matchesNodeSelector(pod: Obj, node: Obj): boolean {
  const labels = (node.metadata?.labels ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries((pod.spec?.nodeSelector ?? {}) as Record<string, string>))
    if (labels[k] !== v) return false;
  const terms = (pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ??
    []) as Obj[];
  if (terms.length === 0) return true;
  return terms.some((t) => {
    const exprs = (t.matchExpressions ?? []) as Obj[];
    const fields = (t.matchFields ?? []) as Obj[];
    if (exprs.length === 0 && fields.length === 0) return false;
    return (
      exprs.every((e) => matchExpr(e, labels[e.key])) &&
      fields.every((e) => matchExpr(e, e.key === 'metadata.name' ? node.metadata?.name : undefined))
    );
  });
}

/** Why a pod does not fit a node (kube-scheduler's per-node reasons), or [] if it fits. */
export function unfit(pod: Obj, node: Obj, podsOnNode: Obj[]): string[] {
  const taint = effectiveTaints(node).find(
    (t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(pod.spec?.tolerations, t),
  );
  if (taint) {
    if (taint.key === TAINT_UNSCHEDULABLE && node.spec?.unschedulable) return ['node(s) were unschedulable'];
    return [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`];
  }
  if (!matchesNodeSelector(pod, node)) return ["node(s) didn't match Pod's node affinity/selector"];
  if (hostPortConflict(pod as Pod, podsOnNode as Pod[]))
    return ["node(s) didn't have free ports for the requested pod ports"];
  const reasons: string[] = [];
  const alloc = node.status?.allocatable ?? {};
  const maxPods = alloc.pods !== undefined ? Number(alloc.pods) : 110;
  if (podsOnNode.length + 1 > maxPods) reasons.push('Too many pods');
  const want = podRequest(pod);
  const have = podsOnNode
    .map((p) => podRequest(p))
    .reduce((a, b) => ({ milliCpu: a.milliCpu + b.milliCpu, memory: a.memory + b.memory }), { milliCpu: 0, memory: 0 });
  if (want.milliCpu > 0 && alloc.cpu !== undefined && have.milliCpu + want.milliCpu > milliValue(alloc.cpu))
    reasons.push('Insufficient cpu');
  if (want.memory > 0 && alloc.memory !== undefined && have.memory + want.memory > parseQuantity(alloc.memory))
    reasons.push('Insufficient memory');
  return reasons;
}

/** NodeResourcesFit LeastAllocated: 0..100, higher is emptier (cpu and memory weighted equally). */
export function leastAllocatedScore(pod: Obj, node: Obj, podsOnNode: Obj[]): number {
  const alloc = node.status?.allocatable ?? {};
  const cap = {
    milliCpu: alloc.cpu !== undefined ? milliValue(alloc.cpu) : 0,
    memory: alloc.memory !== undefined ? parseQuantity(alloc.memory) : 0,
  };
  const req = [pod, ...podsOnNode]
    .map((p) => podRequest(p, true))
    .reduce((a, b) => ({ milliCpu: a.milliCpu + b.milliCpu, memory: a.memory + b.memory }), { milliCpu: 0, memory: 0 });
  const one = (c: number, r: number): number => (c <= 0 || r > c ? 0 : ((c - r) * 100) / c);
  return Math.floor((one(cap.milliCpu, req.milliCpu) + one(cap.memory, req.memory)) / 2);
}

const RESOURCE_REASONS = new Set(['Too many pods', 'Insufficient cpu', 'Insufficient memory']);

/** FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) ... preemption: ...". */
export function fitErrorMessage(nodeCount: number, perNode: string[][]): string {
  if (nodeCount === 0) return 'no nodes available to schedule pods';
  const count = (reasons: string[]): string =>
    [...reasons.reduce((m, r) => m.set(r, (m.get(r) ?? 0) + 1), new Map<string, number>())]
      .map(([r, n]) => `${n} ${r}`)
      .sort()
      .join(', ');
  const preemption = perNode.map((rs) =>
    rs.every((r) => RESOURCE_REASONS.has(r))
      ? 'No preemption victims found for incoming pod'
      : 'Preemption is not helpful for scheduling',
  );
  return `0/${nodeCount} nodes are available: ${count(perNode.flat())}. preemption: 0/${nodeCount} nodes are available: ${count(preemption)}.`;
}

const priorityOf = (p: Obj): number => p.spec?.priority ?? 0;
const startOf = (p: Obj): number => Date.parse(p.status?.startTime ?? p.metadata?.creationTimestamp ?? '') || 0;

export interface PreemptionCandidate {
  node: string;
  victims: Obj[];
}

/**
 * DefaultPreemption's selectVictimsOnNode: if removing every lower-priority
 * pod (not already going) lets the pod fit, the victims are those that cannot
 * be reprieved, trying the highest priority first; else undefined.
 */
export function victimsOn(pod: Obj, node: Obj, podsOnNode: Obj[]): Obj[] | undefined {
  const lower = podsOnNode.filter((p) => priorityOf(p) < priorityOf(pod) && !p.metadata?.deletionTimestamp);
  if (!lower.length) return undefined;
  const kept = podsOnNode.filter((p) => !lower.includes(p));
  if (unfit(pod, node, kept).length) return undefined;
  const victims: Obj[] = [];
  for (const p of [...lower].sort((a, b) => priorityOf(b) - priorityOf(a) || startOf(a) - startOf(b))) {
    if (unfit(pod, node, [...kept, p]).length === 0) kept.push(p);
    else victims.push(p);
  }
  return victims.length ? victims : undefined;
}

/** pickOneNodeForPreemption: the lowest highest-victim priority, then the smallest priority sum, the fewest victims, the latest start. */
export function pickPreemptionNode(cands: PreemptionCandidate[]): PreemptionCandidate | undefined {
  const key = (c: PreemptionCandidate): number[] => [
    Math.max(...c.victims.map(priorityOf)),
    c.victims.reduce((s, p) => s + priorityOf(p) + 2147483648, 0),
    c.victims.length,
    -Math.max(...c.victims.filter((p) => priorityOf(p) === Math.max(...c.victims.map(priorityOf))).map(startOf)),
  ];
  return [...cands].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
    return a.node.localeCompare(b.node);
  })[0];
}
