// upstream's eviction admission: under memory pressure only BestEffort pods
// (that do not tolerate the memory-pressure taint) are refused; under disk or
// PID pressure every pod is; critical pods always get in.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { podQos } from '../../kube/pod-qos.js';
import type { NodeCondition } from './decide.js';

const CRITICAL_PRIORITY = 2_000_000_000;

/** Static and mirror pods, and pods at system-critical priority: never evicted, never refused for pressure. */
export function isCriticalPod(pod: Pod, isStatic: boolean): boolean {
  return (
    isStatic ||
    (pod.spec?.priority ?? 0) >= CRITICAL_PRIORITY ||
    ['system-node-critical', 'system-cluster-critical'].includes(pod.spec?.priorityClassName ?? '')
  );
}

export function admitUnderPressure(
  pod: Pod,
  pressure: Set<NodeCondition>,
  critical: boolean,
): { reason: string; message: string } | undefined {
  if (!pressure.size || critical) return undefined;
  const conds = [...pressure].sort(
    (a, b) =>
      ['MemoryPressure', 'DiskPressure', 'PIDPressure'].indexOf(a) -
      ['MemoryPressure', 'DiskPressure', 'PIDPressure'].indexOf(b),
  );
  if (conds.length === 1 && conds[0] === 'MemoryPressure') {
    if (podQos(pod) !== 'BestEffort') return undefined;
    const tolerates = (pod.spec?.tolerations ?? []).some(
      (t) =>
        (t.key === 'node.kubernetes.io/memory-pressure' || (!t.key && t.operator === 'Exists')) &&
        (!t.effect || t.effect === 'NoSchedule'),
    );
    if (tolerates) return undefined;
  }
  return { reason: 'Evicted', message: `The node had condition: [${conds.join(', ')}]. ` };
}
