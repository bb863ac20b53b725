// kube-apiserver's CSR admission plugins, on by default as upstream's:
// - CertificateSubjectRestriction: no kubernetes.io/kube-apiserver-client request for the system:masters group;
// - CertificateApproval: approving or denying needs `approve` on signers/<signerName> (or <domain>/*);
// - CertificateSigning: setting status.certificate needs `sign` on the same.
// Messages are upstream's.
import type { AdmissionPlugin, Attributes, User } from '../api/admission.js';
import { errors } from '../api/errors.js';
import type { AuthorizerChain } from '../authz/authorizer.js';
import { requestOf } from '../certificates/csr.js';
import { CLIENT_SIGNER } from '../certificates/signer-rules.js';

const GROUP = 'certificates.k8s.io';
const isCsr = (a: Attributes): boolean =>
  a.resource.group === GROUP && a.resource.resource === 'certificatesigningrequests';

/** Upstream's IsAuthorizedForSignerName: `verb` on signers/<signerName>, else on signers/<domain>/*. */
export function authorizedForSigner(authz: AuthorizerChain, user: User, verb: string, signerName: string): boolean {
  if (user.groups.includes('system:masters')) return true;
  const ask = (name: string): boolean =>
    authz.authorize({
      user,
      verb,
      resourceRequest: true,
      apiGroup: GROUP,
      resource: 'signers',
      subresource: '',
      namespace: '',
      name,
      path: '',
    }).allowed;
  return ask(signerName) || ask(`${signerName.split('/')[0]}/*`);
}

export const certificateSubjectRestriction: AdmissionPlugin = {
  name: 'CertificateSubjectRestriction',
  admit(a): void {
    if (!isCsr(a) || a.operation !== 'CREATE' || a.subresource !== '' || a.object?.spec?.signerName !== CLIENT_SIGNER)
      return;
    let organizations: string[];
    try {
      organizations = requestOf(a.object).organizations;
    } catch (e) {
      throw errors.forbiddenObject(a.resource.resource, GROUP, a.name, `failed to parse CSR: ${(e as Error).message}`);
    }
    if (organizations.includes('system:masters'))
      throw errors.forbiddenObject(
        a.resource.resource,
        GROUP,
        a.name,
        `use of ${CLIENT_SIGNER} signer with system:masters group is not allowed`,
      );
  },
};

export function certificateApproval(authz: AuthorizerChain): AdmissionPlugin {
  return {
    name: 'CertificateApproval',
    admit(a): void {
      if (!isCsr(a) || a.operation !== 'UPDATE' || a.subresource !== 'approval') return;
      // The stored object's signer, in case the request tries to change it.
      const signer = String(a.oldObject?.spec?.signerName ?? '');
      if (!authorizedForSigner(authz, a.user, 'approve', signer))
        throw errors.forbiddenObject(
          a.resource.resource,
          GROUP,
          a.name,
          `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`,
        );
    },
  };
}

export function certificateSigning(authz: AuthorizerChain): AdmissionPlugin {
  return {
    name: 'CertificateSigning',
    admit(a): void {
      if (!isCsr(a) || a.operation !== 'UPDATE' || a.subresource !== 'status') return;
      if ((a.object?.status?.certificate ?? '') === (a.oldObject?.status?.certificate ?? '')) return;
      const signer = String(a.oldObject?.spec?.signerName ?? '');
      if (!authorizedForSigner(authz, a.user, 'sign', signer))
        throw errors.forbiddenObject(
          a.resource.resource,
          GROUP,
          a.name,
          `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`,
        );
    },
  };
}
