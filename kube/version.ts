// The Kubernetes release tskube's components are wire-compatible with, and how
// each reports it: `-tskube` marks the build, as distributions suffix theirs.
export const KUBERNETES_VERSION = 'v1.37.2';
export const TSKUBE_VERSION = `${KUBERNETES_VERSION}-tskube`;

/** Major and minor of a version like v1.37.2. */
export function majorMinor(v: string): { major: number; minor: number } {
  const m = /^v(\d+)\.(\d+)\./.exec(v);
  if (!m) throw new Error(`not a version: ${v}`);
  return { major: Number(m[1]), minor: Number(m[2]) };
}
