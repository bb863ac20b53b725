// rotateCertificates: the kubelet renews its client certificate before it
// expires, as upstream's certificate manager: at a random point between 70 %
// and 90 % of its lifetime it posts a new CSR with the current certificate
// (auto-approved as selfnodeclient), moves kubelet-client-current.pem to the
// new one and hands the new credentials to its API clients; pods are not
// touched. A failed attempt is retried with backoff.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { KubeClient } from '../../kube/client.js';
import { type ClusterAuth, loadKubeconfig } from '../../kube/kubeconfig.js';
import type { Logger } from '../../kube/log.js';
import { requestCertificate, storePair } from './tls-bootstrap.js';

/** When to renew: notBefore + lifetime x (0.7 + 0.2 x rand), upstream's jittered deadline. */
export function rotationDeadline(cert: X509Certificate, rand: number): number {
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  return from + (to - from) * (0.7 + 0.2 * rand);
}

/** Renews a certificate at its jittered deadline, retrying failures with backoff (1 s doubling to 5 min). */
export class CertificateRotator {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;
  rotations = 0;

  constructor(
    private readonly r: {
      what: string;
      current: () => X509Certificate | undefined;
      renew: () => Promise<void>;
      /** No current certificate means: get one now (the serving certificate before its first CSR was issued). */
      missingIsDue?: boolean;
      /** A current certificate that must be replaced at once, whatever its lifetime. */
      replaceNow?: () => boolean;
      rand?: () => number;
      now?: () => number;
    },
    protected readonly log: Logger,
  ) {}

  /** Milliseconds until the next renewal is due (0: now). */
  due(): number {
    const cert = this.r.current();
    if (!cert) return this.r.missingIsDue ? 0 : Infinity;
    if (this.r.replaceNow?.()) return 0;
    return Math.max(0, rotationDeadline(cert, (this.r.rand ?? Math.random)()) - (this.r.now ?? Date.now)());
  }

  start(): void {
    this.stopped = false;
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
      this.log.warn(
        `certificate rotation: ${this.r.what}: ${(e as Error).message}; retrying in ${Math.round(wait / 1000)}s`,
      );
      this.schedule(wait);
    }
  }

  /** Renews now. */
  async rotate(): Promise<void> {
    await this.r.renew();
    this.rotations++;
    this.log.info(`certificate rotation: ${this.r.what} renewed, valid until ${this.r.current()?.validTo ?? '?'}`);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
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

/**
 * The credentials the kubelet uses. A kubeconfig whose certificate is inline (kubeadm init's kubelet.conf) is a
 * starting point only, as upstream's certificate manager treats it: with rotation on, the pair in
 * <certDir>/kubelet-client-current.pem replaces it once there is one.
 */
export function clientCredentials(kubeconfig: string, certDir: string, rotate: boolean): ClusterAuth {
  const auth = loadKubeconfig(kubeconfig);
  const current = path.join(certDir, 'kubelet-client-current.pem');
  if (!rotate || !auth.certEmbedded || !fs.existsSync(current)) return auth;
  const pair = fs.readFileSync(current);
  return { ...auth, cert: pair, key: pair, certEmbedded: false };
}

/**
 * rotateCertificates: the client certificate, through a selfnodeclient CSR; the clients switch to it in place. An
 * inline certificate with no rotated pair yet is renewed at once ("rotated out immediately", as kubeadm expects:
 * its kubelet-finalize phase then points kubelet.conf at kubelet-client-current.pem).
 */
export class ClientCertRotation extends CertificateRotator {
  constructor(o: RotationOptions, log: Logger) {
    // As upstream's certificate store: the kubeconfig's inline pair becomes the current one at once (kubeadm's
    // kubelet-finalize looks for the file), and is replaced as soon as the signer answers.
    const inline = loadKubeconfig(o.kubeconfig);
    const inlineSerial = inline.certEmbedded && inline.cert ? new X509Certificate(inline.cert).serialNumber : undefined;
    if (
      inline.certEmbedded &&
      inline.cert &&
      inline.key &&
      !fs.existsSync(path.join(o.certDir, 'kubelet-client-current.pem'))
    ) {
      storePair(o.certDir, 'kubelet-client', inline.cert.toString('utf8'), inline.key.toString('utf8'));
    }
    const current = (): X509Certificate | undefined => {
      const auth = clientCredentials(o.kubeconfig, o.certDir, true);
      return auth.cert ? new X509Certificate(auth.cert) : undefined;
    };
    super(
      {
        what: 'client certificate',
        current,
        missingIsDue: true,
        replaceNow: () => inlineSerial !== undefined && current()?.serialNumber === inlineSerial,
        rand: o.rand,
        now: o.now,
        renew: async () => {
          const client = new KubeClient(clientCredentials(o.kubeconfig, o.certDir, true));
          try {
            await requestCertificate(client, { nodeName: o.nodeName, certDir: o.certDir, pollMs: o.pollMs }, log);
          } finally {
            client.close();
          }
          // The kubeconfig names the link (or is inline and gives way to it), which now points at the new file.
          const auth = clientCredentials(o.kubeconfig, o.certDir, true);
          for (const c of o.clients) c.setCredentials(auth);
        },
      },
      log,
    );
  }
}
