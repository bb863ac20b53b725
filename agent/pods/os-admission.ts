// upstream's OS checks of pod admission (lifecycle/predicate.go), run before any other: a pod whose kubernetes.io/os
// label or spec.os names another OS than the node's is rejected for good.
import type { Pod } from 'kubernetes-types/core/v1.js';

const NODE_OS = 'linux';

export function admitPodOs(pod: Pod): { reason: string; message: string } | undefined {
  const label = pod.metadata?.labels?.['kubernetes.io/os'];
  if (label !== undefined && label !== NODE_OS)
    return {
      reason: 'PodOSSelectorNodeLabelDoesNotMatch',
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    };
  const os = pod.spec?.os?.name;
  if (os !== undefined && os !== NODE_OS)
    return { reason: 'PodOSNotSupported', message: "Failed to admit pod as the OS field doesn't match node OS" };
  return undefined;
}
