// ConfigMaps, Secrets and ServiceAccount tokens for volumes and env, read
// from the apiserver (which, under the Node authorizer, lets a kubelet read
// only what its pods reference). A standalone kubelet has none of these.
import { type KObj, type KubeApi, KubeApiError } from '../../kube/client.js';

export class MissingObjectError extends Error {}

/** A token, with when to get a new one (80% of its TTL or 24 h, whichever is first). */
interface CachedToken {
  token: string;
  refreshAt: number;
}

export class ApiObjects {
  private readonly tokens = new Map<string, CachedToken>();
  /** The last copy of each ConfigMap and Secret read, by path. */
  private readonly lastKnown = new Map<string, KObj>();
  /** Reads under way, shared by whoever asks for the same path meanwhile (30 pods starting read one kube-root-ca.crt). */
  private readonly inflight = new Map<string, Promise<KObj | undefined>>();
  /** During a resync pass, each path is read once for all pods (see inPass). */
  private pass: Map<string, Promise<KObj | undefined>> | undefined;

  constructor(private readonly client?: KubeApi) {}

  private need(what: string): KubeApi {
    if (!this.client)
      throw new MissingObjectError(
        `${what}: this kubelet has no apiserver (--kubeconfig), so it cannot read API objects`,
      );
    return this.client;
  }

  private get(path: string, what: string): Promise<KObj | undefined> {
    const memo = this.pass?.get(path) ?? this.inflight.get(path);
    if (memo) {
      this.pass?.set(path, memo);
      return memo;
    }
    const p = this.read(path, what).finally(() => this.inflight.delete(path));
    this.inflight.set(path, p);
    this.pass?.set(path, p);
    return p;
  }

  /** Runs one resync pass over every pod's volumes, reading each object once: 110 pods of a namespace share their kube-root-ca.crt. */
  async inPass<T>(fn: () => Promise<T>): Promise<T> {
    this.pass = new Map();
    try {
      return await fn();
    } finally {
      this.pass = undefined;
    }
  }

  private async read(path: string, what: string): Promise<KObj | undefined> {
    try {
      const o = await this.need(what).get(path);
      this.lastKnown.set(path, o);
      return o;
    } catch (e) {
      if (e instanceof KubeApiError && e.code === 404) {
        this.lastKnown.delete(path);
        return undefined;
      }
      // The apiserver is away: the last copy read keeps a crash-looping container restartable (upstream's
      // cache-based ConfigMap/Secret managers do the same).
      const cached = this.lastKnown.get(path);
      if (cached && !(e instanceof MissingObjectError)) return cached;
      throw e;
    }
  }

  configMap(ns: string, name: string): Promise<KObj | undefined> {
    return this.get(`/api/v1/namespaces/${ns}/configmaps/${name}`, `configmap "${name}"`);
  }

  secret(ns: string, name: string): Promise<KObj | undefined> {
    return this.get(`/api/v1/namespaces/${ns}/secrets/${name}`, `secret "${name}"`);
  }

  claim(ns: string, name: string): Promise<KObj | undefined> {
    return this.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`, `persistentvolumeclaim "${name}"`);
  }

  volume(name: string): Promise<KObj | undefined> {
    return this.get(`/api/v1/persistentvolumes/${name}`, `persistentvolume "${name}"`);
  }

  /** A ClusterTrustBundle by name (certificates.k8s.io/v1; system:node may read them all). */
  clusterTrustBundle(name: string): Promise<KObj | undefined> {
    return this.get(`/apis/certificates.k8s.io/v1/clustertrustbundles/${name}`, `ClusterTrustBundle "${name}"`);
  }

  /** Every ClusterTrustBundle (a signer's are chosen by the caller: the API has no selector on spec.signerName for lists before v1.37). */
  async clusterTrustBundles(): Promise<KObj[]> {
    const list = await this.get('/apis/certificates.k8s.io/v1/clustertrustbundles', 'ClusterTrustBundles');
    return (list?.items ?? []) as KObj[];
  }

  /** The UID of a ServiceAccount (a PodCertificateRequest names it). */
  async serviceAccountUid(ns: string, name: string): Promise<string> {
    const sa = await this.get(`/api/v1/namespaces/${ns}/serviceaccounts/${name}`, `serviceaccount "${name}"`);
    if (!sa) throw new MissingObjectError(`serviceaccount "${name}" not found`);
    return sa.metadata.uid as string;
  }

  /** The UID of a Node. */
  async nodeUid(name: string): Promise<string> {
    const node = await this.get(`/api/v1/nodes/${name}`, `node "${name}"`);
    if (!node) throw new MissingObjectError(`node "${name}" not found`);
    return node.metadata.uid as string;
  }

  createPodCertificateRequest(ns: string, body: object): Promise<KObj> {
    return this.need('PodCertificateRequest').create(
      `/apis/certificates.k8s.io/v1/namespaces/${ns}/podcertificaterequests`,
      body,
    );
  }

  podCertificateRequest(ns: string, name: string): Promise<KObj | undefined> {
    return this.get(
      `/apis/certificates.k8s.io/v1/namespaces/${ns}/podcertificaterequests/${name}`,
      `PodCertificateRequest "${name}"`,
    );
  }

  /** A ServiceAccount token bound to the pod (TokenRequest), cached until 80% of its lifetime. */
  async token(pod: KObj, audience: string | undefined, expirationSeconds: number, now = Date.now()): Promise<string> {
    const md = pod.metadata;
    const sa = pod.spec?.serviceAccountName || 'default';
    const key = `${md.uid}/${sa}/${audience ?? ''}/${expirationSeconds}`;
    const hit = this.tokens.get(key);
    if (hit && now < hit.refreshAt) return hit.token;
    const tr = await this.need(`token for service account "${sa}"`).create(
      `/api/v1/namespaces/${md.namespace}/serviceaccounts/${sa}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: {
          ...(audience ? { audiences: [audience] } : {}),
          expirationSeconds,
          boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: md.name, uid: md.uid },
        },
      },
    );
    const exp = Date.parse(tr.status?.expirationTimestamp ?? '') || now + expirationSeconds * 1000;
    const ttl = exp - now;
    this.tokens.set(key, { token: tr.status.token, refreshAt: now + Math.min(ttl * 0.8, 24 * 3600 * 1000) });
    return tr.status.token;
  }

  forgetPod(uid: string): void {
    for (const k of this.tokens.keys()) if (k.startsWith(`${uid}/`)) this.tokens.delete(k);
  }
}
