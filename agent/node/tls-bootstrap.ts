// The kubelet's TLS bootstrap (--bootstrap-kubeconfig), as upstream's
// pkg/kubelet/certificate/bootstrap: when --kubeconfig is missing or its
// client certificate has expired, make a key, post a kubelet client CSR with
// the bootstrap credentials, wait for it to be approved and issued, keep the
// certificate and key in <cert-dir>/kubelet-client-<time>.pem behind the
// kubelet-client-current.pem link, and write --kubeconfig to use them.
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { stringify } from 'yaml';

import { type KObj, type KubeApi, KubeApiError, KubeClient } from '../../kube/client.js';
import { type ClusterAuth, loadKubeconfig } from '../../kube/kubeconfig.js';
import type { Logger } from '../../kube/log.js';

export const SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
/** Per certificate kind: signer, usages (an EC key: no key encipherment, as upstream) and file prefix. */
const KINDS = {
  client: { signer: SIGNER, usages: ['digital signature', 'client auth'], prefix: 'kubelet-client' },
  server: { signer: SERVING_SIGNER, usages: ['digital signature', 'server auth'], prefix: 'kubelet-server' },
} as const;
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

export interface TlsBootstrapOptions {
  nodeName: string;
  kubeconfig: string;
  bootstrapKubeconfig: string;
  certDir: string;
  /** How long to wait for the certificate (upstream waits an hour). */
  timeoutMs?: number;
  pollMs?: number;
}

/** Whether `file` is a kubeconfig whose client certificate is there and still valid (upstream's isClientConfigStillValid). */
export function clientConfigValid(file: string, now = Date.now()): boolean {
  let auth: ClusterAuth;
  try {
    auth = loadKubeconfig(file);
  } catch {
    return false;
  }
  if (auth.token || auth.tokenFile) return true;
  if (!auth.cert || !auth.key) return false;
  try {
    const c = new X509Certificate(auth.cert);
    return Date.parse(c.validFrom) <= now && now < Date.parse(c.validTo);
  } catch {
    return false;
  }
}

/** The kubeconfig upstream's kubelet writes after bootstrapping: the bootstrap cluster, the current certificate file. */
export function bootstrappedKubeconfig(
  cluster: { server: string; ca?: Buffer; insecureSkipTLSVerify?: boolean },
  certFile: string,
): string {
  return stringify({
    apiVersion: 'v1',
    clusters: [
      {
        cluster: {
          ...(cluster.ca ? { 'certificate-authority-data': cluster.ca.toString('base64') } : {}),
          ...(cluster.insecureSkipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
          server: cluster.server,
        },
        name: 'default-cluster',
      },
    ],
    contexts: [
      { context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' }, name: 'default-context' },
    ],
    'current-context': 'default-context',
    kind: 'Config',
    preferences: {},
    users: [{ name: 'default-auth', user: { 'client-certificate': certFile, 'client-key': certFile } }],
  });
}

/** kubelet-client-2026-12-03-07-30-00.pem (or kubelet-server-…), as upstream names them. */
export const certFileName = (d: Date, prefix = 'kubelet-client'): string =>
  `${prefix}-${d.toISOString().slice(0, 19).replace(/[T:]/g, '-')}.pem`;

function makeCsr(keyPem: string, nodeName: string, sans: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-bootstrap-'));
  try {
    fs.writeFileSync(path.join(dir, 'key.pem'), keyPem, { mode: 0o600 });
    return execFileSync(
      'openssl',
      [
        'req',
        '-new',
        '-key',
        path.join(dir, 'key.pem'),
        '-subj',
        `/O=system:nodes/CN=system:node:${nodeName}`,
        ...(sans.length ? ['-addext', `subjectAltName=${sans.join(',')}`] : []),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Gets a new kubelet certificate (client, or with `sans` a serving one) through a CSR posted with `client`'s
 * credentials (bootstrap or the current certificate), and keeps it as <cert-dir>/<prefix>-<time>.pem behind
 * <prefix>-current.pem. The link's path.
 */
export async function requestCertificate(
  client: KubeApi,
  o: Pick<TlsBootstrapOptions, 'nodeName' | 'certDir' | 'timeoutMs' | 'pollMs'> & {
    kind?: 'client' | 'server';
    sans?: string[];
  },
  log: Logger,
): Promise<string> {
  const k = KINDS[o.kind ?? 'client'];
  fs.mkdirSync(o.certDir, { recursive: true, mode: 0o750 });
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const csrPem = makeCsr(keyPem, o.nodeName, o.sans);
  // Named after the request's digest, as upstream: a retry with the same key finds its own CSR.
  const digest = createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .update(`system:node:${o.nodeName}`)
    .update(k.usages.join(','))
    .digest('base64url');
  const name = `${o.kind === 'server' ? 'csr' : 'node-csr'}-${digest}`;
  try {
    await client.create(CSRS, {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: Buffer.from(csrPem).toString('base64'), signerName: k.signer, usages: k.usages },
    });
  } catch (e) {
    if (!(e instanceof KubeApiError && e.code === 409))
      throw new Error(`cannot create certificate signing request ${name}: ${(e as Error).message}`, { cause: e });
  }
  log.info(`waiting for certificate signing request ${name} to be approved and issued`);
  const deadline = Date.now() + (o.timeoutMs ?? 3600_000);
  let csr: KObj;
  for (;;) {
    try {
      csr = await client.get(`${CSRS}/${name}`);
    } catch (e) {
      // A dropped connection (the client's credentials were just rotated, an apiserver restart) is not an answer:
      // keep waiting for this CSR rather than post another one someone would have to approve again.
      if ((e instanceof KubeApiError && e.code === 404) || Date.now() > deadline) throw e;
      log.debug(`certificate signing request ${name}: ${(e as Error).message}; polling again`);
      await new Promise((r) => setTimeout(r, o.pollMs ?? 1000));
      continue;
    }
    const denied = ((csr.status?.conditions ?? []) as KObj[]).find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (denied)
      throw new Error(
        `certificate signing request ${name} is ${denied.type === 'Denied' ? 'denied' : 'failed'}, reason: ${denied.reason ?? ''}, message: ${denied.message ?? ''}`,
      );
    if (csr.status?.certificate) break;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for certificate signing request ${name} to be approved and issued`);
    await new Promise((r) => setTimeout(r, o.pollMs ?? 1000));
  }
  const certPem = Buffer.from(String(csr.status.certificate), 'base64').toString('utf8');
  const current = storePair(o.certDir, k.prefix, certPem, keyPem);
  log.info(`certificate issued (${name}); ${current} -> ${path.basename(fs.readlinkSync(current))}`);
  return current;
}

/** Writes <prefix>-<time>.pem (certificate, then key) and points <prefix>-current.pem at it, atomically. */
export function storePair(certDir: string, prefix: string, certPem: string, keyPem: string): string {
  fs.mkdirSync(certDir, { recursive: true, mode: 0o700 });
  const file = path.join(certDir, certFileName(new Date(), prefix));
  fs.writeFileSync(file, `${certPem.trimEnd()}\n${keyPem}`, { mode: 0o600 });
  const current = path.join(certDir, `${prefix}-current.pem`);
  const tmpLink = `${current}.tmp`;
  fs.rmSync(tmpLink, { force: true });
  fs.symlinkSync(file, tmpLink);
  fs.renameSync(tmpLink, current);
  return current;
}

/** Bootstraps when needed; returns whether it did. Errors name the CSR and why it failed. */
export async function tlsBootstrap(o: TlsBootstrapOptions, log: Logger): Promise<boolean> {
  if (clientConfigValid(o.kubeconfig)) return false;
  const boot = loadKubeconfig(o.bootstrapKubeconfig);
  log.info(
    `tls-bootstrap: ${o.kubeconfig} is missing or its certificate is not valid; requesting a client certificate with ${o.bootstrapKubeconfig}`,
  );
  const client = new KubeClient(boot);
  try {
    const current = await requestCertificate(client, o, log).catch((e: Error) => {
      throw new Error(`tls-bootstrap: ${e.message}`);
    });
    fs.mkdirSync(path.dirname(o.kubeconfig), { recursive: true });
    fs.writeFileSync(`${o.kubeconfig}.tmp`, bootstrappedKubeconfig(boot, current), { mode: 0o600 });
    fs.renameSync(`${o.kubeconfig}.tmp`, o.kubeconfig);
    log.info(`tls-bootstrap: wrote ${o.kubeconfig}`);
    return true;
  } finally {
    client.close();
  }
}
