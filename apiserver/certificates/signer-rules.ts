// What each built-in signer accepts, as kube-controller-manager's signers check a request before signing
// (pkg/apis/certificates helpers, signer.go), with upstream's messages. The approver and the signer both ask
// here, so a request one of them refuses the other refuses too. Stricter than upstream in one way: the kubelet
// signers take a subject of exactly one O and one CN, each its own name part.
import type { CertificateRequest } from './csr-request.js';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';
/** Signers the built-in csrsigning controller signs for (legacy-unknown is never signed). */
export const SIGNERS = [KUBELET_CLIENT_SIGNER, KUBELET_SERVING_SIGNER, CLIENT_SIGNER];

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
};
const usageList = (u: readonly string[]): string => `[${[...u].sort().join(' ')}]`;

/** The kubelet signers' subject: single-valued name parts holding only O and CN, one of each. */
function kubeletSubject(req: CertificateRequest): string | undefined {
  if (req.subject.some((rdn) => rdn.length > 1)) return 'subject name parts must each hold one attribute';
  const other = req.subject.flat().find((a) => a.type !== 'O' && a.type !== 'CN');
  if (other) return `subject may hold only O and CN, not ${other.type}`;
  if (req.subject.flat().filter((a) => a.type === 'CN').length > 1) return 'subject must hold one common name';
  return undefined;
}

const KUBELET_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['digital signature', 'client auth'];
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

/** Upstream's ValidateKubeletClientCSR. */
export function validateKubeletClient(req: CertificateRequest, usages: readonly string[]): string | undefined {
  const subject = kubeletSubject(req);
  if (subject) return subject;
  if (!sameSet(req.organizations, ['system:nodes']) || req.organizations.length !== 1)
    return 'subject organization is not system:nodes';
  if (req.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, KUBELET_CLIENT_USAGES_NO_RSA))
    return `usages did not match ${usageList(KUBELET_CLIENT_USAGES)}`;
  return undefined;
}

/** Upstream's ValidateKubeletServingCSR. */
export function validateKubeletServing(req: CertificateRequest, usages: readonly string[]): string | undefined {
  const subject = kubeletSubject(req);
  if (subject) return subject;
  if (!sameSet(req.organizations, ['system:nodes']) || req.organizations.length !== 1)
    return 'subject organization is not system:nodes';
  if (!req.dnsNames.length && !req.ipAddresses.length) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, KUBELET_SERVING_USAGES_NO_RSA))
    return `usages did not match ${usageList(KUBELET_SERVING_USAGES)}`;
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** Upstream's validAPIServerClientUsages, and CertificateSubjectRestriction's rule again before signing. */
export function validateApiServerClient(req: CertificateRequest, usages: readonly string[]): string | undefined {
  for (const u of usages)
    if (!['digital signature', 'key encipherment', 'client auth'].includes(u))
      return `invalid usage for client certificate: ${u}`;
  if (!usages.includes('client auth')) return 'missing required usage for client certificate: client auth';
  if (req.organizations.includes('system:masters'))
    return `use of ${CLIENT_SIGNER} signer with system:masters group is not allowed`;
  return undefined;
}

/**
 * Whether the built-in signer `signerName` takes this request: `undefined` for a signer it does not serve (left
 * alone), else the reason it is refused, or '' when it may be signed.
 */
export function signerVerdict(
  signerName: string,
  req: CertificateRequest,
  usages: readonly string[],
): string | undefined {
  switch (signerName) {
    case KUBELET_CLIENT_SIGNER:
      return validateKubeletClient(req, usages) ?? '';
    case KUBELET_SERVING_SIGNER:
      return validateKubeletServing(req, usages) ?? '';
    case CLIENT_SIGNER:
      return validateApiServerClient(req, usages) ?? '';
    default:
      return undefined;
  }
}
