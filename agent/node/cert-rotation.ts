// rotateCertificates: the kubelet renews its client certificate before it
// expires, as upstream's certificate manager: at a random point between 70 %
// and 90 % of its lifetime it posts a new CSR with the current certificate
// (auto-approved as selfnodeclient), moves kubelet-client-current.pem to the
// new one and hands the new credentials to its API clients; pods are not
// touched. A failed attempt is retried with backoff.
import { X509Certificate } from 'node:crypto';
import { KubeClient } from '../../kube/client.js';
import { loadKubeconfig } from '../../kube/kubeconfig.js';
import type { Logger } from '../../kube/log.js';
import { requestCertificate } from './tls-bootstrap.js';

/** When to renew: notBefore + lifetime x (0.7 + 0.2 x rand), upstream's jittered deadline. */
export function rotationDeadline(cert: X509Certificate, rand: number): number {
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  return from + (to - from) * (0.7 + 0.2 * rand);
}

export interface RotationOptions {
  kubeconfig: string;
  nodeName: string;
  certDir: string;
  /** Clients that must use the new certificate (the kubelet's and its Lease's). */
  clients: KubeClient[];
  rand?: () => number;
  now?: () => number;
  pollMs?: number;
}

export class ClientCertRotation {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;
  rotations = 0;

  constructor(
    private readonly o: RotationOptions,
    private readonly log: Logger,
  ) {}

  private current(): X509Certificate | undefined {
    const auth = loadKubeconfig(this.o.kubeconfig);
    return auth.cert ? new X509Certificate(auth.cert) : undefined;
  }

  /** Milliseconds until the next renewal is due (0: now). */
  due(): number {
    const cert = this.current();
    if (!cert) return Infinity;
    return Math.max(0, rotationDeadline(cert, (this.o.rand ?? Math.random)()) - (this.o.now ?? Date.now)());
  }

  start(): void {
    this.schedule(this.due());
  }

  private schedule(ms: number): void {
    if (this.stopped || ms === Infinity) return;
    clearTimeout(this.timer);
    // setTimeout holds at most ~24.8 days: a far deadline is looked at again then.
    this.timer = setTimeout(() => void this.tick(ms > 2 ** 31 - 1), Math.min(ms, 2 ** 31 - 1));
    this.timer.unref();
  }

  private async tick(recheck: boolean): Promise<void> {
    if (recheck) return this.schedule(this.due());
    try {
      await this.rotate();
      this.failures = 0;
      this.schedule(this.due());
    } catch (e) {
      this.failures++;
      const wait = Math.min(2 ** this.failures * 1000, 5 * 60_000);
      this.log.warn(`certificate rotation: ${(e as Error).message}; retrying in ${Math.round(wait / 1000)}s`);
      this.schedule(wait);
    }
  }

  /** Renews now. */
  async rotate(): Promise<void> {
    const client = new KubeClient(loadKubeconfig(this.o.kubeconfig));
    try {
      await requestCertificate(client, { nodeName: this.o.nodeName, certDir: this.o.certDir, pollMs: this.o.pollMs }, this.log);
    } finally {
      client.close();
    }
    // The kubeconfig names the link, which now points at the new file.
    const auth = loadKubeconfig(this.o.kubeconfig);
    for (const c of this.o.clients) c.setCredentials(auth);
    this.rotations++;
    const cert = this.current();
    this.log.info(`certificate rotation: client certificate renewed, valid until ${cert?.validTo ?? '?'}`);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
