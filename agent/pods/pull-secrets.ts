// imagePullSecrets (upstream pkg/credentialprovider): docker config secrets
// (kubernetes.io/dockerconfigjson's {"auths": {...}} and the older
// kubernetes.io/dockercfg map) become registry credentials, matched against
// the image's registry host and path as upstream's keyring does. Pure.

/** CRI AuthConfig. server_address stays empty, as upstream sends it (containerd would otherwise parse it as a URL). */
export interface RegistryAuth {
  username?: string;
  password?: string;
  identity_token?: string;
}

type Obj = Record<string, any>;

/** The registry host and path of an image reference (Docker Hub when there is no host part). */
export function imageLocation(image: string): { host: string; path: string } {
  const noDigest = image.split('@')[0]!;
  const slash = noDigest.indexOf('/');
  const first = slash < 0 ? '' : noDigest.slice(0, slash);
  const isHost = first.includes('.') || first.includes(':') || first === 'localhost';
  const host = isHost ? first : 'docker.io';
  let rest = isHost ? noDigest.slice(slash + 1) : noDigest;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) rest = rest.slice(0, colon);
  return { host, path: rest };
}

/** A keyring key ("https://host:port/path", "host/path", "*.example.com") as host and path prefix. */
function parseKey(key: string): { host: string; path: string } {
  // As upstream's keyring: the scheme goes, and /v1/ or /v2/ stand for the host itself.
  let k = key
    .trim()
    .replace(/^[a-z]+:\/\//i, '')
    .replace(/\/+$/, '')
    .replace(/^([^/]+)\/v[12](\/|$)/, '$1$2')
    .replace(/\/+$/, '');
  if (k === 'index.docker.io/v1' || k === 'index.docker.io' || k === 'registry-1.docker.io') k = 'docker.io';
  const slash = k.indexOf('/');
  return slash < 0 ? { host: k, path: '' } : { host: k.slice(0, slash), path: k.slice(slash + 1) };
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === host) return true;
  // Wildcards stand for one DNS label each, as upstream's URLsMatch (ports must be equal).
  const [ph, pp] = pattern.split(':');
  const [hh, hp] = host.split(':');
  if (pp !== hp || !ph!.includes('*')) return false;
  const pl = ph!.split('.');
  const hl = hh!.split('.');
  return pl.length === hl.length && pl.every((l, i) => l === '*' || l === hl[i]);
}

/** The credentials in one pull secret, by keyring key; bad data is an empty list (the pull then goes anonymous). */
export function secretCredentials(secret: Obj): { key: string; auth: RegistryAuth }[] {
  const data = (secret?.data ?? {}) as Record<string, string>;
  let entries: Record<string, Obj> = {};
  try {
    if (secret.type === 'kubernetes.io/dockerconfigjson' && data['.dockerconfigjson'])
      entries = JSON.parse(Buffer.from(data['.dockerconfigjson'], 'base64').toString('utf8')).auths ?? {};
    else if (secret.type === 'kubernetes.io/dockercfg' && data['.dockercfg'])
      entries = JSON.parse(Buffer.from(data['.dockercfg'], 'base64').toString('utf8'));
  } catch {
    return [];
  }
  return Object.entries(entries).map(([key, e]) => {
    let { username, password } = e as { username?: string; password?: string };
    if ((!username || !password) && typeof e.auth === 'string') {
      const [u, ...p] = Buffer.from(e.auth, 'base64').toString('utf8').split(':');
      username ||= u;
      password ||= p.join(':');
    }
    return { key, auth: { username, password, ...(e.identitytoken ? { identity_token: e.identitytoken } : {}) } };
  });
}

/** Credentials for an image from the pod's pull secrets, best match first (longest path prefix), as upstream's Lookup. */
export function credentialsFor(image: string, secrets: Obj[]): RegistryAuth[] {
  const want = imageLocation(image);
  const found: { score: number; auth: RegistryAuth }[] = [];
  for (const s of secrets) {
    for (const { key, auth } of secretCredentials(s)) {
      const k = parseKey(key);
      if (!hostMatches(k.host, want.host)) continue;
      if (k.path && !(want.path === k.path || want.path.startsWith(`${k.path}/`))) continue;
      found.push({ score: k.path.length, auth });
    }
  }
  return found.sort((a, b) => b.score - a.score).map((f) => f.auth);
}
