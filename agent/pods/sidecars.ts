// Native sidecars (upstream SidecarContainers): init containers with
// restartPolicy Always run beside the regular containers, with their probes.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

/** Upstream isRestartableInitContainer. */
export const isSidecar = (c: Container): boolean => c.restartPolicy === 'Always';

export const sidecarsOf = (pod: Pod): Container[] => (pod.spec?.initContainers ?? []).filter(isSidecar);

/** The containers that keep running and are probed: the sidecars, then the regular containers. */
export const probedContainers = (pod: Pod): Container[] => [...sidecarsOf(pod), ...(pod.spec?.containers ?? [])];

/** The field path events about a container name (spec.initContainers{x} for init containers and sidecars, spec.ephemeralContainers{x}). */
export function containerFieldPath(pod: Pod, name: string): string {
  if ((pod.spec?.initContainers ?? []).some((c) => c.name === name)) return `spec.initContainers{${name}}`;
  if ((pod.spec?.ephemeralContainers ?? []).some((c) => c.name === name)) return `spec.ephemeralContainers{${name}}`;
  return `spec.containers{${name}}`;
}
