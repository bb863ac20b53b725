// `tskube token create|list|delete`: bootstrap tokens for joining nodes, as
// `kubeadm token` manages them (Secrets in kube-system), talking to the
// apiserver with --kubeconfig or the admin kubeconfig under --data-dir.
import { createHash, X509Certificate } from 'node:crypto';
import path from 'node:path';

import { parse as parseYaml } from 'yaml';

import { CLUSTER_INFO, PUBLIC_NAMESPACE } from '../apiserver/bootstrap/cluster-info.js';
import {
  field,
  NAMESPACE,
  newTokenSecret,
  parseToken,
  SECRET_PREFIX,
  SECRET_TYPE,
} from '../apiserver/bootstrap/tokens.js';
import { type KObj, KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { durationFlag, parseFlags, splitArgs } from './flags.js';
import { ensureJoinSupport, joinSupportObjects } from './join-support.js';

export const TOKEN_FLAGS: Record<string, string> = {
  kubeconfig: 'kubeconfig of a user allowed to manage Secrets in kube-system. Default <data-dir>/pki/admin.kubeconfig',
  'data-dir': 'the data dir of `tskube up`, for its admin kubeconfig. Default /var/lib/tskube',
  ttl: 'create: how long the token is valid (0: forever), as kubeadm. Default 24h0m0s',
  description: 'create: a human-readable description of the token',
  groups: 'create: extra groups the token authenticates as. Default system:bootstrappers:kubeadm:default-node-token',
  'print-join-command': 'create: print the whole `tskube join` line instead of the token. Default false',
};
const BOOLEANS = ['print-join-command'];

const SECRETS = `/api/v1/namespaces/${NAMESPACE}/secrets`;

/** sha256 of the CA certificate's SubjectPublicKeyInfo, as kubeadm's --discovery-token-ca-cert-hash. */
export function caCertHash(caPem: string | Buffer): string {
  const spki = new X509Certificate(caPem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

/** kubeadm token list's row: TOKEN TTL EXPIRES USAGES DESCRIPTION EXTRA GROUPS. */
export function tokenRow(s: KObj, now = Date.now()): string[] {
  const id = field(s, 'token-id') ?? '';
  const exp = field(s, 'expiration');
  const ttl = exp ? `${Math.max(0, Math.round((Date.parse(exp) - now) / 3600_000))}h` : '<forever>';
  const usages = Object.keys(s.data ?? {})
    .filter((k) => k.startsWith('usage-bootstrap-') && field(s, k) === 'true')
    .map((k) => k.slice('usage-bootstrap-'.length))
    .sort()
    .join(',');
  return [
    `${id}.${field(s, 'token-secret') ?? ''}`,
    ttl,
    exp ?? '<never>',
    usages || '<none>',
    field(s, 'description') ?? '<none>',
    field(s, 'auth-extra-groups') ?? '',
  ];
}

const table = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3)))
        .join('')
        .trimEnd(),
    )
    .join('\n');
};

export async function runToken(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
  note: (s: string) => void = (s) => process.stderr.write(s),
): Promise<void> {
  const [sub, ...rest] = argv;
  const { positional, flags: flagArgs } = splitArgs(rest, BOOLEANS);
  const f = parseFlags(flagArgs, TOKEN_FLAGS);
  const kubeconfig =
    f.get('kubeconfig') ?? path.join(path.resolve(f.get('data-dir') ?? '/var/lib/tskube'), 'pki', 'admin.kubeconfig');
  const auth = loadKubeconfig(kubeconfig);
  const client = new KubeClient(auth);
  try {
    switch (sub) {
      case 'create': {
        const ttlMs = durationFlag(f, 'ttl', '24h');
        const groups = f
          .get('groups')
          ?.split(',')
          .map((g) => g.trim())
          .filter(Boolean);
        const { token, secret } = newTokenSecret({
          ttlSeconds: ttlMs / 1000,
          description: f.get('description'),
          groups,
          token: positional[0],
        });
        // A control plane kubeadm's bootstrap-token phase never ran on lacks what join needs: add it, and say so.
        if (!auth.ca)
          throw new Error(`${kubeconfig}: no certificate-authority data for the cluster, needed for cluster-info`);
        for (const what of await ensureJoinSupport(client, joinSupportObjects(auth.server, auth.ca.toString('utf8'))))
          note(`created ${what}, as kubeadm init does for joining nodes\n`);
        await client.create(SECRETS, secret);
        if (f.get('print-join-command') !== 'true') return out(`${token}\n`);
        const cm = await client.get(`/api/v1/namespaces/${PUBLIC_NAMESPACE}/configmaps/${CLUSTER_INFO}`);
        const cluster = (
          parseYaml(String(cm.data?.kubeconfig ?? '')) as {
            clusters?: { cluster: { server: string; 'certificate-authority-data': string } }[];
          }
        ).clusters?.[0]?.cluster;
        if (!cluster)
          throw new Error(
            `${PUBLIC_NAMESPACE}/${CLUSTER_INFO} holds no cluster; is this a tskube or kubeadm control plane?`,
          );
        return out(
          `tskube join ${cluster.server} --token ${token} --discovery-token-ca-cert-hash ${caCertHash(Buffer.from(cluster['certificate-authority-data'], 'base64'))}\n`,
        );
      }
      case 'list': {
        const list = await client.get(SECRETS, { fieldSelector: `type=${SECRET_TYPE}` });
        const rows = (list.items as KObj[])
          .filter((s) => s.metadata.name.startsWith(SECRET_PREFIX))
          .map((s) => tokenRow(s));
        return out(`${table([['TOKEN', 'TTL', 'EXPIRES', 'USAGES', 'DESCRIPTION', 'EXTRA GROUPS'], ...rows])}\n`);
      }
      case 'delete': {
        if (!positional.length) throw new Error('token delete: give the token id or the whole token');
        for (const p of positional) {
          const id = parseToken(p)?.id ?? (/^[a-z0-9]{6}$/.test(p) ? p : undefined);
          if (!id)
            throw new Error(`token delete: ${JSON.stringify(p)} is neither a token id ([a-z0-9]{6}) nor a token`);
          await client.delete(`${SECRETS}/${SECRET_PREFIX}${id}`);
          out(`bootstrap token "${id}" deleted\n`);
        }
        return;
      }
      default:
        throw new Error(
          `usage: tskube token create [token] [--ttl 24h] [--description …] [--print-join-command] | list | delete <id>`,
        );
    }
  } finally {
    client.close();
  }
}
