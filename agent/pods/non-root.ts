// runAsNonRoot (upstream verifyRunAsNonRoot): with the effective
// runAsNonRoot set, a container may not run as uid 0, nor as an image user
// that cannot be told apart from root. Pure; the image's uid and username
// come from CRI ImageStatus (neither set means root, as upstream).
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

import { formatPod } from './format.js';

/** The container may not start as it is: CreateContainerConfigError, as upstream. */
export class NonRootError extends Error {}

/** Whether the image's user must be looked up: runAsNonRoot is on and no runAsUser decides it. */
export function needsImageUser(pod: Pod, c: Container): boolean {
  const nonRoot = c.securityContext?.runAsNonRoot ?? pod.spec?.securityContext?.runAsNonRoot;
  const user = c.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
  return nonRoot === true && (user === undefined || user === null);
}

/** Upstream's error text, or undefined when the container may start. */
export function verifyRunAsNonRoot(
  pod: Pod,
  c: Container,
  image?: { uid?: string | number; username?: string },
): string | undefined {
  const nonRoot = c.securityContext?.runAsNonRoot ?? pod.spec?.securityContext?.runAsNonRoot;
  if (nonRoot !== true) return undefined;
  const user = c.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
  if (user !== undefined && user !== null)
    return user === 0
      ? `container's runAsUser breaks non-root policy (pod: ${JSON.stringify(formatPod(pod))}, container: ${c.name})`
      : undefined;
  const uid = image?.uid === undefined || image.uid === '' ? undefined : Number(image.uid);
  const name = image?.username ?? '';
  if (uid === undefined && name)
    return `container has runAsNonRoot and image has non-numeric user (${name}), cannot verify user is non-root (pod: ${JSON.stringify(formatPod(pod))}, container: ${c.name})`;
  if ((uid ?? 0) === 0)
    return `container has runAsNonRoot and image will run as root (pod: ${JSON.stringify(formatPod(pod))}, container: ${c.name})`;
  return undefined;
}
