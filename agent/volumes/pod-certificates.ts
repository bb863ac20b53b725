// The podCertificate projected volume source (certificates.k8s.io/v1 PodCertificateRequest, upstream's
// podcertificate manager): for each source of each pod the kubelet makes a key, asks the source's signer for a
// certificate with a PodCertificateRequest, and projects the key and the issued chain; from the certificate's
// beginRefreshAt it asks again, keeping the current credentials until the new ones are issued.
import type { Pod } from 'kubernetes-types/core/v1.js';

import { decodePem, encodePem } from '../../kube/pem.js';
import { keyAndStubRequest } from './stub-csr.js';
import { VolumeError } from './volume-error.js';

/** A projected volume's podCertificate source (v1.35+; kubernetes-types stops at v1.30). */
export interface PodCertificateSource {
  signerName: string;
  keyType: string;
  maxExpirationSeconds?: number;
  credentialBundlePath?: string;
  keyPath?: string;
  certificateChainPath?: string;
  userAnnotations?: Record<string, string>;
}

/** The fields of a PodCertificateRequest the kubelet reads. */
export interface PodCertificateRequest {
  metadata?: { name?: string; creationTimestamp?: string };
  status?: {
    conditions?: { type: string; status?: string; reason?: string; message?: string }[];
    certificateChain?: string;
    beginRefreshAt?: string;
    notAfter?: string;
  };
}

/** What the manager asks of the apiserver (ApiObjects). */
export interface PodCertificateApi {
  serviceAccountUid(namespace: string, name: string): Promise<string>;
  nodeUid(name: string): Promise<string>;
  createPodCertificateRequest(namespace: string, body: object): Promise<PodCertificateRequest>;
  podCertificateRequest(namespace: string, name: string): Promise<PodCertificateRequest | undefined>;
}

export interface Credentials {
  key: Buffer;
  chain: Buffer;
}

interface Issued extends Credentials {
  beginRefreshAt: number;
}

interface ProjectionRecord {
  issued?: Issued;
  /** The request waiting for its signer, with the key it was made for. */
  pending?: { name: string; keyPem: string; abandonAt: number };
  /** Why the signer refused the first request (Denied or Failed): the pod keeps waiting with it. */
  refused?: string;
}

/** A request not seen for this long after it was made is taken as deleted and made again (upstream: 10 minutes). */
const ASSUME_DELETED_MS = 10 * 60_000;

/** Only the CERTIFICATE blocks of a chain, without headers or text between them (upstream cleanCertificateChain). */
export function cleanCertificateChain(chain: string): Buffer {
  return Buffer.from(
    decodePem(chain)
      .map((b) => encodePem({ type: 'CERTIFICATE', bytes: b.bytes }))
      .join(''),
  );
}

/** The terminal condition of a request, if it has one. */
export function requestOutcome(pcr: PodCertificateRequest): { issued: Issued } | { refused: string } | undefined {
  for (const c of pcr.status?.conditions ?? []) {
    if (c.type === 'Issued')
      return {
        issued: {
          key: Buffer.alloc(0),
          chain: cleanCertificateChain(pcr.status?.certificateChain ?? ''),
          beginRefreshAt: Date.parse(pcr.status?.beginRefreshAt ?? '') || Number.MAX_SAFE_INTEGER,
        },
      };
    if (c.type === 'Denied' || c.type === 'Failed')
      return {
        refused: `PodCertificateRequest ${pcr.metadata?.name ?? ''} ${c.type === 'Denied' ? 'was denied' : 'failed'}, reason=${JSON.stringify(c.reason ?? '')}, message=${JSON.stringify(c.message ?? '')}`,
      };
  }
  return undefined;
}

export class PodCertificates {
  private readonly records = new Map<string, ProjectionRecord>();

  constructor(
    private readonly api: PodCertificateApi,
    private readonly nodeName: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The key and chain of one source; until the first certificate is issued a VolumeError (the pod's volume is set
   * up again shortly, as for a missing ConfigMap).
   */
  async credentials(pod: Pod, volume: string, index: number, src: PodCertificateSource): Promise<Credentials> {
    const md = pod.metadata!;
    const id = `${md.uid}/${volume}/${index}`;
    const rec = this.records.get(id) ?? {};
    this.records.set(id, rec);
    if (rec.pending) {
      const pcr = await this.api.podCertificateRequest(md.namespace!, rec.pending.name);
      const outcome = pcr && requestOutcome(pcr);
      if (outcome && 'issued' in outcome) {
        rec.issued = { ...outcome.issued, key: Buffer.from(rec.pending.keyPem) };
        rec.pending = undefined;
        rec.refused = undefined;
      } else if (outcome) {
        rec.pending = undefined;
        if (!rec.issued) rec.refused = outcome.refused;
      } else if (!pcr && this.now() > rec.pending.abandonAt) rec.pending = undefined;
    }
    const due = !rec.issued || this.now() >= rec.issued.beginRefreshAt;
    if (due && !rec.pending && !rec.refused) rec.pending = await this.request(pod, src);
    if (rec.issued) return rec.issued;
    throw new VolumeError(rec.refused ?? `no credentials yet for podCertificate source ${index} of volume "${volume}"`);
  }

  private async request(pod: Pod, src: PodCertificateSource): Promise<ProjectionRecord['pending']> {
    const md = pod.metadata!;
    const sa = pod.spec?.serviceAccountName || 'default';
    const { keyPem, requestDer } = keyAndStubRequest(src.keyType);
    const pcr = await this.api.createPodCertificateRequest(md.namespace!, {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'PodCertificateRequest',
      metadata: {
        generateName: 'req-',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: md.name, uid: md.uid }],
      },
      spec: {
        signerName: src.signerName,
        podName: md.name,
        podUID: md.uid,
        serviceAccountName: sa,
        serviceAccountUID: await this.api.serviceAccountUid(md.namespace!, sa),
        nodeName: this.nodeName,
        nodeUID: await this.api.nodeUid(this.nodeName),
        ...(src.maxExpirationSeconds !== undefined ? { maxExpirationSeconds: src.maxExpirationSeconds } : {}),
        stubPKCS10Request: requestDer.toString('base64'),
        ...(src.userAnnotations ? { unverifiedUserAnnotations: src.userAnnotations } : {}),
      },
    });
    return { name: pcr.metadata!.name!, keyPem, abandonAt: this.now() + ASSUME_DELETED_MS };
  }

  forgetPod(uid: string): void {
    for (const k of this.records.keys()) if (k.startsWith(`${uid}/`)) this.records.delete(k);
  }
}
