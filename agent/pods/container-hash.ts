// A container's hash, kept in its CRI annotations: a running container whose hash
// differs from its spec's was made from another definition and is replaced.
import type { Container } from 'kubernetes-types/core/v1.js';

import { canonicalJson, fnv32aHex } from '../../kube/hash.js';

/**
 * Upstream's HashContainer since 1.31: only the name and the image. Every other field of a pod's container is
 * immutable in the API, and a static pod's new content is a new pod, so hashing more only restarts containers
 * when a default appears (an apiserver or kubectl upgrade) or another kubelet made them.
 */
export function containerHash(c: Container): string {
  return fnv32aHex(canonicalJson({ image: c.image ?? '', name: c.name }));
}

/** The rule of tskube releases before it: the whole container but its resources. Containers they started are adopted. */
export function legacyContainerHash(c: Container): string {
  const { resources: _r, ...rest } = c;
  return fnv32aHex(canonicalJson(rest));
}
