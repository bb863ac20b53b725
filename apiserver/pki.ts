// First-start PKI for the dev apiserver, made with the openssl CLI: a CA, a
// serving certificate (SANs 127.0.0.1, localhost, the node IP), client
// certificates, and kubeconfigs for admin, each node, the proxy and the cluster DNS.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface Identity {
  file: string; // kubeconfig file name
  cn: string;
  orgs: string[];
}

export const adminIdentity: Identity = { file: 'admin.kubeconfig', cn: 'kubernetes-admin', orgs: ['system:masters'] };
export const proxyIdentity: Identity = { file: 'kube-proxy.kubeconfig', cn: 'system:kube-proxy', orgs: [] };
/** The cluster DNS server's user; its permissions come with the DNS add-on (`tskube up`), as kubeadm's system:coredns. */
export const dnsIdentity: Identity = { file: 'coredns.kubeconfig', cn: 'system:coredns', orgs: [] };
export const nodeIdentity = (node: string): Identity => ({
  file: `node-${node}.kubeconfig`,
  cn: `system:node:${node}`,
  orgs: ['system:nodes'],
});

const openssl = (args: string[], cwd: string): void => {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
};

export interface Pki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
}

function ecKey(dir: string, name: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`], dir);
  fs.chmodSync(path.join(dir, `${name}.key`), 0o600);
}

function rsaKey(dir: string, name: string): void {
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', `${name}.key`], dir);
  fs.chmodSync(path.join(dir, `${name}.key`), 0o600);
}

function sign(dir: string, name: string, subj: string, ext: string, rsa = false): void {
  if (rsa) rsaKey(dir, name);
  else ecKey(dir, name);
  openssl(['req', '-new', '-key', `${name}.key`, '-subj', subj, '-out', `${name}.csr`], dir);
  fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '3650',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  fs.rmSync(path.join(dir, `${name}.csr`));
  fs.rmSync(path.join(dir, `${name}.ext`));
}

const subject = (id: Identity): string => `/CN=${id.cn}${id.orgs.map((o) => `/O=${o}`).join('')}`;

/** Creates what is missing; existing keys and certificates are kept across restarts. */
export function ensurePki(dataDir: string, sans: { ips: string[]; dns: string[] }): Pki {
  const dir = path.join(dataDir, 'pki');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!fs.existsSync(path.join(dir, 'ca.crt'))) {
    ecKey(dir, 'ca');
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-key',
        'ca.key',
        '-subj',
        '/CN=tskube-ca',
        '-days',
        '3650',
        '-sha256',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
        '-out',
        'ca.crt',
      ],
      dir,
    );
  }
  const sanLine = [...sans.dns.map((d) => `DNS:${d}`), ...sans.ips.map((i) => `IP:${i}`)].join(',');
  const sanFile = path.join(dir, 'apiserver.sans');
  // RSA 2048 for the serving key, kubeadm's default, which the widest range of in-cluster clients speaks.
  const want = `rsa ${sanLine}`;
  if (
    !fs.existsSync(path.join(dir, 'apiserver.crt')) ||
    (fs.existsSync(sanFile) ? fs.readFileSync(sanFile, 'utf8') : '') !== want
  ) {
    sign(
      dir,
      'apiserver',
      '/CN=kube-apiserver',
      `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=${sanLine}\n`,
      true,
    );
    fs.writeFileSync(sanFile, want);
  }
  return {
    dir,
    caCert: path.join(dir, 'ca.crt'),
    serverCert: path.join(dir, 'apiserver.crt'),
    serverKey: path.join(dir, 'apiserver.key'),
  };
}

/** The ServiceAccount token signing key pair, kubeadm's sa.key/sa.pub (EC P-256, ES256). */
export function ensureServiceAccountKey(pki: Pki): { key: string; pub: string } {
  const key = path.join(pki.dir, 'sa.key');
  const pub = path.join(pki.dir, 'sa.pub');
  if (!fs.existsSync(key)) ecKey(pki.dir, 'sa');
  if (!fs.existsSync(pub)) openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], pki.dir);
  return { key, pub };
}

export function ensureClientCert(pki: Pki, id: Identity): { cert: string; key: string } {
  const name = id.file.replace(/\.kubeconfig$/, '');
  if (!fs.existsSync(path.join(pki.dir, `${name}.crt`)))
    sign(
      pki.dir,
      name,
      subject(id),
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
    );
  return { cert: path.join(pki.dir, `${name}.crt`), key: path.join(pki.dir, `${name}.key`) };
}

const b64 = (f: string): string => fs.readFileSync(f).toString('base64');

/** Writes a kubeconfig with embedded client certificate; returns its path. */
export function writeKubeconfig(dataDir: string, pki: Pki, id: Identity, server: string): string {
  const { cert, key } = ensureClientCert(pki, id);
  const file = path.join(dataDir, id.file);
  const text = `apiVersion: v1
kind: Config
clusters:
- name: tskube
  cluster:
    server: ${server}
    certificate-authority-data: ${b64(pki.caCert)}
users:
- name: ${id.cn}
  user:
    client-certificate-data: ${b64(cert)}
    client-key-data: ${b64(key)}
contexts:
- name: tskube
  context:
    cluster: tskube
    user: ${id.cn}
current-context: tskube
`;
  fs.writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/** Static bearer tokens (token,user,uid,"group1,group2" as upstream --token-auth-file). */
export function ensureTokens(dataDir: string, ids: Identity[]): Map<string, { user: string; groups: string[] }> {
  const file = path.join(dataDir, 'tokens.csv');
  const map = new Map<string, { user: string; groups: string[] }>();
  if (fs.existsSync(file)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const m = /^([^,]+),([^,]+),([^,]*)(?:,"?([^"]*)"?)?$/.exec(line.trim());
      if (m) map.set(m[1]!, { user: m[2]!, groups: m[4] ? m[4].split(',') : [] });
    }
  }
  const have = new Set([...map.values()].map((v) => v.user));
  for (const id of ids) {
    if (have.has(id.cn)) continue;
    map.set(randomBytes(24).toString('base64url'), { user: id.cn, groups: id.orgs });
  }
  fs.writeFileSync(
    file,
    [...map].map(([t, v]) => `${t},${v.user},${v.user},"${v.groups.join(',')}"`).join('\n') + '\n',
    { mode: 0o600 },
  );
  return map;
}
