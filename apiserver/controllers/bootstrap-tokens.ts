// kube-controller-manager's bootstrap token controllers: tokencleaner deletes
// bootstrap-token Secrets once they expire; bootstrapsigner keeps one
// jws-kubeconfig-<id> signature in kube-public/cluster-info per token that
// may sign (usage-bootstrap-signing, not expired), and none for others.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { CLUSTER_INFO, PUBLIC_NAMESPACE } from '../bootstrap/cluster-info.js';
import { detachedSignature, expired, field, JWS_PREFIX, NAMESPACE, SECRET_TYPE } from '../bootstrap/tokens.js';

const SECRETS = `/api/v1/namespaces/${NAMESPACE}/secrets`;
const ignore404 = (e: unknown): void => {
  if (!(e instanceof KubeApiError && (e.code === 404 || e.code === 409))) throw e;
};

/** The cluster-info data a set of token Secrets calls for: the kubeconfig and one signature per signing token. */
export function signedClusterInfo(
  data: Record<string, string>,
  tokens: KObj[],
  now = Date.now(),
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data)) if (!k.startsWith(JWS_PREFIX)) out[k] = v;
  const content = data.kubeconfig;
  if (content === undefined) return out;
  for (const s of tokens) {
    if (
      s.type !== SECRET_TYPE ||
      s.metadata.deletionTimestamp ||
      expired(s, now) ||
      field(s, 'usage-bootstrap-signing') !== 'true'
    )
      continue;
    const id = field(s, 'token-id');
    const secret = field(s, 'token-secret');
    if (id && secret && s.metadata.name === `bootstrap-token-${id}`)
      out[`${JWS_PREFIX}${id}`] = detachedSignature(content, id, secret);
  }
  return out;
}

export class TokenCleaner {
  private readonly secrets: Informer;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
  ) {
    const check = (s: KObj): void => this.check(s);
    this.secrets = new Informer(client, {
      path: SECRETS,
      fieldSelector: `type=${SECRET_TYPE}`,
      onAdd: check,
      onUpdate: check,
      onError: (e) => log.warn(`tokencleaner: watch: ${e.message}`),
    });
  }

  private check(s: KObj): void {
    const name = s.metadata.name as string;
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    const exp = field(s, 'expiration');
    if (!exp) return;
    const wait = Date.parse(exp) - Date.now();
    if (wait > 0) {
      // setTimeout holds at most ~24.8 days; a later check re-arms it.
      this.timers.set(name, setTimeout(() => this.check(s), Math.min(wait, 2 ** 31 - 1)).unref());
      return;
    }
    this.log.info(`tokencleaner: deleting expired bootstrap token ${NAMESPACE}/${name}`);
    this.client
      .delete(`${SECRETS}/${name}`, { preconditions: { uid: s.metadata.uid } })
      .catch(ignore404)
      .catch((e: Error) => this.log.warn(`tokencleaner: ${name}: ${e.message}`));
  }

  async start(): Promise<void> {
    await this.secrets.start();
  }

  async stop(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    await this.secrets.stop();
  }
}

export class BootstrapSigner {
  private readonly secrets: Informer;
  private readonly configMaps: Informer;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
  ) {
    const sync = (): void => this.queue();
    const onError = (e: Error) => log.warn(`bootstrapsigner: watch: ${e.message}`);
    this.secrets = new Informer(client, {
      path: SECRETS,
      fieldSelector: `type=${SECRET_TYPE}`,
      onAdd: sync,
      onUpdate: sync,
      onDelete: sync,
      onError,
    });
    this.configMaps = new Informer(client, {
      path: `/api/v1/namespaces/${PUBLIC_NAMESPACE}/configmaps`,
      fieldSelector: `metadata.name=${CLUSTER_INFO}`,
      onAdd: sync,
      onUpdate: sync,
      onError,
    });
  }

  /** One sync at a time, in order. */
  private queue(): void {
    this.pending = this.pending
      .then(() => this.sync())
      .catch((e: Error) => this.log.warn(`bootstrapsigner: ${e.message}`));
  }

  private async sync(): Promise<void> {
    const cm = this.configMaps.list().find((o) => o.metadata.name === CLUSTER_INFO);
    if (!cm) return;
    const want = signedClusterInfo(cm.data ?? {}, this.secrets.list());
    if (JSON.stringify(want) === JSON.stringify(cm.data ?? {})) return;
    await this.client
      .update(`/api/v1/namespaces/${PUBLIC_NAMESPACE}/configmaps/${CLUSTER_INFO}`, { ...cm, data: want })
      .catch(ignore404);
  }

  async start(): Promise<void> {
    await Promise.all([this.secrets.start(), this.configMaps.start()]);
    this.queue();
    // Expiry changes which tokens may sign without any write: look again every minute.
    this.timer = setInterval(() => this.queue(), 60_000);
    this.timer.unref();
  }

  private timer?: NodeJS.Timeout;

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([this.secrets.stop(), this.configMaps.stop()]);
    await this.pending;
  }
}
