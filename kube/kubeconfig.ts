// kubeconfig loading: the current context's cluster and user, with
// certificate/key/CA as files or inline data, and bearer tokens.
import fs from 'node:fs';
import path from 'node:path';

import { parse as parseYaml } from 'yaml';

export interface ClusterAuth {
  server: string;
  ca?: Buffer;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  cert?: Buffer;
  key?: Buffer;
  token?: string;
  /** A file re-read on each use (projected ServiceAccount tokens rotate). */
  tokenFile?: string;
  /** Whether the client certificate is inline (client-certificate-data) rather than a file. */
  certEmbedded?: boolean;
}

type Obj = Record<string, any>;

function readData(base: string, data: unknown, file: unknown, what: string, where: string): Buffer | undefined {
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64');
  if (typeof file === 'string' && file) {
    const p = path.isAbsolute(file) ? file : path.join(base, file);
    try {
      return fs.readFileSync(p);
    } catch (e) {
      throw new Error(`${where}: cannot read ${what} ${p}: ${(e as Error).message}`, { cause: e });
    }
  }
  return undefined;
}

export function loadKubeconfig(file: string, contextName?: string): ClusterAuth {
  let doc: Obj;
  try {
    doc = parseYaml(fs.readFileSync(file, 'utf8')) as Obj;
  } catch (e) {
    throw new Error(`${file}: cannot load kubeconfig: ${(e as Error).message}`, { cause: e });
  }
  const ctxName = contextName ?? doc['current-context'];
  const ctx = (doc.contexts ?? []).find((c: Obj) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`${file}: context "${String(ctxName)}" not found`);
  const cluster = (doc.clusters ?? []).find((c: Obj) => c.name === ctx.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`${file}: cluster "${String(ctx.cluster)}" has no server`);
  const user = (doc.users ?? []).find((u: Obj) => u.name === ctx.user)?.user ?? {};
  const base = path.dirname(path.resolve(file));
  return {
    server: String(cluster.server).replace(/\/+$/, ''),
    ca: readData(
      base,
      cluster['certificate-authority-data'],
      cluster['certificate-authority'],
      'certificate-authority',
      file,
    ),
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: cluster['tls-server-name'],
    cert: readData(base, user['client-certificate-data'], user['client-certificate'], 'client-certificate', file),
    key: readData(base, user['client-key-data'], user['client-key'], 'client-key', file),
    certEmbedded: typeof user['client-certificate-data'] === 'string' && user['client-certificate-data'] !== '',
    token: user.token,
    tokenFile: user.tokenFile
      ? path.isAbsolute(user.tokenFile)
        ? user.tokenFile
        : path.join(base, user.tokenFile)
      : undefined,
  };
}
