// clusterrole-aggregation (kube-controller-manager): a ClusterRole with an
// aggregationRule holds the union of the rules of every other ClusterRole its
// selectors match, in name order without duplicates; it is rewritten whenever
// one of them changes.
import type { KObj, KubeApi } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { matchLabels, parseLabelSelector } from '../../kube/selectors.js';
import { selectorString } from '../api/scale.js';

const PATH = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

/** The rules an aggregated ClusterRole should hold, given every ClusterRole. */
export function aggregatedRules(role: KObj, all: KObj[]): KObj[] {
  const selectors = ((role.aggregationRule?.clusterRoleSelectors ?? []) as KObj[]).map((s) =>
    parseLabelSelector(selectorString(s)),
  );
  const out: KObj[] = [];
  const seen = new Set<string>();
  const sorted = [...all].sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
  for (const other of sorted) {
    if (other.metadata.name === role.metadata.name) continue;
    if (!selectors.some((reqs) => matchLabels(reqs, other.metadata.labels))) continue;
    for (const rule of (other.rules ?? []) as KObj[]) {
      const key = JSON.stringify(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(rule);
    }
  }
  return out;
}

export class ClusterRoleAggregation {
  private readonly roles: Informer;
  private pending: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
  ) {
    const kick = (): void => this.schedule();
    this.roles = new Informer(client, {
      path: PATH,
      onAdd: kick,
      onUpdate: kick,
      onDelete: kick,
      onError: (e) => log.warn(`clusterrole-aggregation: watch: ${e.message}`),
    });
  }

  async start(): Promise<void> {
    await this.roles.start();
    await this.sync();
  }

  async stop(): Promise<void> {
    if (this.pending) clearTimeout(this.pending);
    await this.roles.stop();
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.sync();
    }, 50);
  }

  private async sync(): Promise<void> {
    const all = this.roles.list();
    for (const role of all) {
      if (!role.aggregationRule) continue;
      const rules = aggregatedRules(role, all);
      if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue;
      try {
        await this.client.update(`${PATH}/${role.metadata.name}`, { ...role, rules });
      } catch (e) {
        this.log.warn(`clusterrole-aggregation: ${role.metadata.name}: ${(e as Error).message}; retrying`);
        setTimeout(() => this.schedule(), 1000).unref();
      }
    }
  }
}
