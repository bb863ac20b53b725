// The kubelet's serving certificate: --tls-cert-file/--tls-private-key-file
// when given, otherwise a self-signed pair kept in --cert-dir as
// kubelet.crt/kubelet.key (upstream's names), made once with the openssl CLI.
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

import { decodePem, encodePem } from '../../kube/pem.js';

export interface ServingCert {
  cert: Buffer;
  key: Buffer;
  certFile: string;
}

export async function loadServingCert(o: {
  certFile?: string;
  keyFile?: string;
  certDir: string;
  hostnames: string[];
  ips: string[];
}): Promise<ServingCert> {
  if (o.certFile || o.keyFile) {
    if (!o.certFile || !o.keyFile) throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
    const read = (f: string, flag: string): Buffer => {
      try {
        return fs.readFileSync(f);
      } catch (e) {
        throw new Error(`${flag} ${f}: ${(e as Error).message}`, { cause: e });
      }
    };
    return {
      cert: read(o.certFile, '--tls-cert-file'),
      key: read(o.keyFile, '--tls-private-key-file'),
      certFile: o.certFile,
    };
  }
  const certFile = path.join(o.certDir, 'kubelet.crt');
  const keyFile = path.join(o.certDir, 'kubelet.key');
  if (!fs.existsSync(certFile) || !fs.existsSync(keyFile)) {
    fs.mkdirSync(o.certDir, { recursive: true, mode: 0o700 });
    const sans = [...new Set(o.hostnames)]
      .map((h) => `DNS:${h}`)
      .concat([...new Set(o.ips)].filter((i) => net.isIP(i)).map((i) => `IP:${i}`));
    const tmpKey = `${keyFile}.tmp`;
    // Asynchronous: the event loop is not held for openssl's run (the runtime's replies, the health port).
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      tmpKey,
      '-out',
      `${certFile}.tmp`,
      '-days',
      '365',
      '-sha256',
      '-subj',
      `/CN=${o.hostnames[0] ?? 'kubelet'}@${Math.floor(Date.now() / 1000)}`,
      '-addext',
      `subjectAltName=${sans.join(',')}`,
      '-addext',
      'extendedKeyUsage=serverAuth',
    ]);
    fs.chmodSync(tmpKey, 0o600);
    fs.renameSync(tmpKey, keyFile);
    fs.renameSync(`${certFile}.tmp`, certFile);
  }
  return { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile), certFile };
}

/** The serving certificate serverTLSBootstrap got (<cert-dir>/kubelet-server-current.pem), when it is there and valid. */
export function loadBootstrappedServingCert(certDir: string, now = Date.now()): ServingCert | undefined {
  const certFile = path.join(certDir, 'kubelet-server-current.pem');
  let pem: string;
  try {
    pem = fs.readFileSync(certFile, 'utf8');
  } catch {
    return undefined;
  }
  const blocks = decodePem(pem);
  const cert = blocks.find((b) => b.type === 'CERTIFICATE');
  const key = blocks.find((b) => ['PRIVATE KEY', 'EC PRIVATE KEY', 'RSA PRIVATE KEY'].includes(b.type));
  if (!cert || !key) return undefined;
  const x = new X509Certificate(cert.bytes);
  if (now < Date.parse(x.validFrom) || now >= Date.parse(x.validTo)) return undefined;
  return { cert: Buffer.from(encodePem(cert)), key: Buffer.from(encodePem(key)), certFile };
}
