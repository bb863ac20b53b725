// Upstream's format.Pod: how kubelet messages name a pod, "name_namespace(uid)".
import type { Pod } from 'kubernetes-types/core/v1.js';

export const formatPod = (p: Pod): string => `${p.metadata!.name!}_${p.metadata!.namespace!}(${p.metadata!.uid!})`;
