// Token discovery for `tskube join`, as kubeadm's: read kube-public/cluster-info
// without trusting the server yet, check its jws-kubeconfig-<id> signature with
// the token (only the token's holder could have signed it) and the CA against the
// pinned hash, then write a bootstrap kubeconfig that trusts that CA.
import { createHmac, timingSafeEqual } from 'node:crypto';

import { parse as parseYaml, stringify } from 'yaml';

import { CLUSTER_INFO, PUBLIC_NAMESPACE } from '../apiserver/bootstrap/cluster-info.js';
import { JWS_PREFIX, parseToken } from '../apiserver/bootstrap/tokens.js';
import { type KObj, KubeApiError, KubeClient } from '../kube/client.js';
import { caCertHash } from './token.js';

export interface DiscoveredCluster {
  server: string;
  caPem: string;
}

/** Whether a detached JWS (header..signature) over `content` is HS256 by token `id` with `secret`. */
export function detachedJwsValid(jws: string, content: string, id: string, secret: string): boolean {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts[1] !== '') return false;
  let header: { alg?: string; kid?: string };
  try {
    header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as typeof header;
  } catch {
    return false;
  }
  if (header.alg !== 'HS256' || header.kid !== id) return false;
  const want = createHmac('sha256', secret)
    .update(`${parts[0]}.${Buffer.from(content).toString('base64url')}`)
    .digest();
  const got = Buffer.from(parts[2]!, 'base64url');
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * Checks cluster-info's data against the token and the pins; the cluster it describes, or an
 * error with kubeadm's wording. `pins` empty means --discovery-token-unsafe-skip-ca-verification.
 */
export function verifyClusterInfo(data: Record<string, string>, token: string, pins: string[]): DiscoveredCluster {
  const t = parseToken(token);
  if (!t) throw new Error(`the bootstrap token "${token}" was not of the form "[a-z0-9]{6}.[a-z0-9]{16}"`);
  const kubeconfig = data.kubeconfig;
  if (!kubeconfig) throw new Error(`there is no "kubeconfig" key in the ${CLUSTER_INFO} ConfigMap`);
  const jws = data[`${JWS_PREFIX}${t.id}`];
  if (!jws)
    throw new Error(
      `could not find a JWS signature in the ${CLUSTER_INFO} ConfigMap for token ID "${t.id}": the token is wrong or has expired; create a new one on the control plane with \`tskube token create --print-join-command\``,
    );
  if (!detachedJwsValid(jws, kubeconfig, t.id, t.secret))
    throw new Error(
      `failed to verify JWS signature of received cluster info object, can't trust this API Server (is the token's secret right?)`,
    );
  const cluster = (
    parseYaml(kubeconfig) as {
      clusters?: { cluster?: { server?: string; 'certificate-authority-data'?: string } }[];
    } | null
  )?.clusters?.[0]?.cluster;
  if (!cluster?.server || !cluster['certificate-authority-data'])
    throw new Error(`the ${CLUSTER_INFO} kubeconfig holds no cluster server and CA`);
  const caPem = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
  if (pins.length) {
    let hash: string;
    try {
      hash = caCertHash(caPem);
    } catch (e) {
      throw new Error(`cluster CA found in ${CLUSTER_INFO} ConfigMap is invalid: ${(e as Error).message}`, {
        cause: e,
      });
    }
    if (!pins.includes(hash))
      throw new Error(
        `cluster CA found in ${CLUSTER_INFO} ConfigMap is invalid: none of the public keys "${hash}" are pinned (check --discovery-token-ca-cert-hash)`,
      );
  }
  return { server: cluster.server, caPem };
}

/** --discovery-token-ca-cert-hash values: sha256:<64 hex>. */
export function parsePins(values: string[]): string[] {
  return values.map((v) => {
    const p = v.trim().toLowerCase();
    if (!/^sha256:[0-9a-f]{64}$/.test(p))
      throw new Error(`--discovery-token-ca-cert-hash: "${v}" is not of the form sha256:<64 hex digits>`);
    return p;
  });
}

/** GET cluster-info from `server`: without a trusted CA (insecure) for discovery, or with `ca` to confirm it. */
export async function fetchClusterInfo(
  server: string,
  ca?: string,
  timeoutMs = 10_000,
): Promise<Record<string, string>> {
  const path = `/api/v1/namespaces/${PUBLIC_NAMESPACE}/configmaps/${CLUSTER_INFO}`;
  const client = new KubeClient(ca ? { server, ca: Buffer.from(ca) } : { server, insecureSkipTLSVerify: true });
  let cm: KObj | undefined;
  try {
    cm = await client.request('GET', path, { timeoutMs });
  } catch (e) {
    if (e instanceof KubeApiError) throw e;
    throw new Error(`cannot reach the apiserver at ${server}: ${(e as Error).message}`, { cause: e });
  } finally {
    client.close();
  }
  if (!cm || typeof cm !== 'object') throw new Error(`GET ${server}${path}: not a ConfigMap`);
  return (cm.data ?? {}) as Record<string, string>;
}

/** kubeadm's bootstrap-kubelet.conf: the discovered cluster and the token. */
export function bootstrapKubeconfig(c: DiscoveredCluster, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'kubernetes',
        cluster: { server: c.server, 'certificate-authority-data': Buffer.from(c.caPem).toString('base64') },
      },
    ],
    contexts: [
      {
        name: 'tls-bootstrap-token-user@kubernetes',
        context: { cluster: 'kubernetes', user: 'tls-bootstrap-token-user' },
      },
    ],
    'current-context': 'tls-bootstrap-token-user@kubernetes',
    users: [{ name: 'tls-bootstrap-token-user', user: { token } }],
  });
}
