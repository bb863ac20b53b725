// The clusterTrustBundle projected volume source (certificates.k8s.io/v1 ClusterTrustBundle, GA in v1.37): the
// trust anchors of one bundle by name, or of every bundle of a signer whose labels a selector matches, deduplicated
// and written as PEM, as upstream's clustertrustbundle manager normalizes them.
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';

import { decodePem, encodePem } from '../../kube/pem.js';
import { labelSelectorMatches } from '../../kube/selectors.js';

/** The fields of a ClusterTrustBundle the kubelet reads (kubernetes-types stops at v1.30). */
export interface ClusterTrustBundle {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { signerName?: string; trustBundle?: string };
}

/** A projected volume's clusterTrustBundle source. */
export interface ClusterTrustBundleProjection {
  name?: string;
  signerName?: string;
  labelSelector?: LabelSelector | null;
  optional?: boolean;
  path: string;
}

/** The certificates of the bundles, each once, in a stable order (upstream shuffles; any order is a valid bundle). */
export function normalizeTrustAnchors(bundles: ClusterTrustBundle[]): Buffer {
  const ders = new Map<string, Buffer>();
  for (const b of bundles)
    for (const block of decodePem(b.spec?.trustBundle ?? '')) ders.set(block.bytes.toString('base64'), block.bytes);
  const sorted = [...ders.keys()].sort();
  return Buffer.from(sorted.map((k) => encodePem({ type: 'CERTIFICATE', bytes: ders.get(k)! })).join(''));
}

/**
 * The bundles of `signerName` whose labels the selector matches: a missing (null) selector matches none, an empty one
 * every bundle of the signer, as LabelSelectorAsSelector.
 */
export function bundlesOfSigner(
  all: ClusterTrustBundle[],
  signerName: string,
  selector: LabelSelector | null | undefined,
): ClusterTrustBundle[] {
  if (!selector) return [];
  return all.filter(
    (b) => b.spec?.signerName === signerName && labelSelectorMatches(selector, b.metadata?.labels ?? {}),
  );
}

/** upstream's errors for a clusterTrustBundle source that names nothing that exists. */
export const NO_SIGNER_MATCH = 'combination of signerName and labelSelector matched zero ClusterTrustBundles';
