// kube-controller-manager's CSR controllers: csrapproving approves kubelet client CSRs
// (kubernetes.io/kube-apiserver-client-kubelet) that pass that signer's rules and whose requester may create
// certificatesigningrequests/nodeclient (bootstrap) or /selfnodeclient (a node renewing its own); csrsigning checks
// an approved CSR against its signer's rules again and signs it with the cluster CA, or marks it Failed.
// Serving certificates are approved by hand.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { rfc3339 } from '../../kube/time.js';
import { approved, decided, requestOf, signCsr } from '../certificates/csr.js';
import type { CertificateRequest } from '../certificates/csr-request.js';
import { KUBELET_CLIENT_SIGNER, signerVerdict, validateKubeletClient } from '../certificates/signer-rules.js';

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** Whether `user` may do `verb` on certificates.k8s.io certificatesigningrequests/<subresource> (a SubjectAccessReview). */
export type CsrAuthorizer = (user: { name: string; groups: string[] }, subresource: string) => boolean;

/** What the approver does with one CSR: approve (with upstream's message), or nothing and why. */
export function approvalDecision(
  csr: KObj,
  authorize: CsrAuthorizer,
  parse: (o: KObj) => CertificateRequest = requestOf,
): { approve: true; message: string } | { approve: false; why: string } {
  if (decided(csr)) return { approve: false, why: 'already decided' };
  if (csr.spec?.signerName !== KUBELET_CLIENT_SIGNER)
    return { approve: false, why: `signer ${csr.spec?.signerName} is not auto-approved` };
  let p: CertificateRequest;
  try {
    p = parse(csr);
  } catch (e) {
    return { approve: false, why: `unparsable request: ${(e as Error).message.split('\n')[0]}` };
  }
  const bad = validateKubeletClient(p, csr.spec?.usages ?? []);
  if (bad) return { approve: false, why: bad };
  const user = { name: String(csr.spec?.username ?? ''), groups: (csr.spec?.groups ?? []) as string[] };
  if (user.name === p.commonName && authorize(user, 'selfnodeclient'))
    return { approve: true, message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' };
  if (authorize(user, 'nodeclient'))
    return { approve: true, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' };
  return { approve: false, why: `${user.name} may not create certificatesigningrequests/nodeclient` };
}

const failed = (csr: KObj): boolean =>
  ((csr.status?.conditions ?? []) as KObj[]).some((c) => c.type === 'Failed' && c.status === 'True');

abstract class CsrWatcher {
  private readonly csrs: Informer;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    protected readonly client: KubeApi,
    protected readonly log: Logger,
    name: string,
  ) {
    const queue = (o: KObj): void => {
      this.pending = this.pending
        .then(() => this.handle(o))
        .catch((e: Error) => {
          if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409)))
            this.log.warn(`${name}: ${o.metadata.name}: ${e.message}`);
        });
    };
    this.csrs = new Informer(client, {
      path: CSRS,
      onAdd: queue,
      onUpdate: queue,
      onError: (e) => log.warn(`${name}: watch: ${e.message}`),
    });
  }

  protected abstract handle(csr: KObj): Promise<void>;

  async start(): Promise<void> {
    await this.csrs.start();
  }

  async stop(): Promise<void> {
    await this.csrs.stop();
    await this.pending;
  }
}

export class CsrApprover extends CsrWatcher {
  constructor(
    client: KubeApi,
    log: Logger,
    private readonly authorize: CsrAuthorizer,
  ) {
    super(client, log, 'csrapproving');
  }

  protected async handle(csr: KObj): Promise<void> {
    const d = approvalDecision(csr, this.authorize);
    if (!d.approve) return;
    const now = rfc3339();
    const conditions = [
      ...((csr.status?.conditions ?? []) as KObj[]),
      {
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message: d.message,
        lastUpdateTime: now,
        lastTransitionTime: now,
      },
    ];
    await this.client.update(`${CSRS}/${csr.metadata.name}/approval`, {
      ...csr,
      status: { ...csr.status, conditions },
    });
    this.log.info(`csrapproving: approved ${csr.metadata.name} for ${csr.spec?.username}`);
  }
}

export class CsrSigner extends CsrWatcher {
  constructor(
    client: KubeApi,
    log: Logger,
    private readonly pkiDir: string,
    /** --cluster-signing-duration, seconds. */
    private readonly maxSeconds = 365 * 86400,
  ) {
    super(client, log, 'csrsigning');
  }

  protected async handle(csr: KObj): Promise<void> {
    if (!approved(csr) || csr.status?.certificate || failed(csr)) return;
    let pem: string;
    try {
      const verdict = signerVerdict(String(csr.spec?.signerName ?? ''), requestOf(csr), csr.spec?.usages ?? []);
      // A signer this controller does not serve: left for its own signer, as upstream.
      if (verdict === undefined) return;
      if (verdict) throw new Error(verdict);
      pem = signCsr(csr, this.pkiDir, this.maxSeconds);
    } catch (e) {
      const now = rfc3339();
      const conditions = [
        ...((csr.status?.conditions ?? []) as KObj[]),
        {
          type: 'Failed',
          status: 'True',
          reason: 'SignerValidationFailure',
          message: (e as Error).message.split('\n')[0],
          lastUpdateTime: now,
          lastTransitionTime: now,
        },
      ];
      await this.client.update(`${CSRS}/${csr.metadata.name}/status`, {
        ...csr,
        status: { ...csr.status, conditions },
      });
      this.log.warn(
        `csrsigning: ${csr.metadata.name} (${csr.spec?.signerName}) not signed: ${(e as Error).message.split('\n')[0]}`,
      );
      return;
    }
    await this.client.update(`${CSRS}/${csr.metadata.name}/status`, {
      ...csr,
      status: { ...csr.status, certificate: Buffer.from(pem).toString('base64') },
    });
    this.log.info(`csrsigning: signed ${csr.metadata.name} (${csr.spec?.signerName})`);
  }
}
