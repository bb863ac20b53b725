// API pod source: list+watch of pods bound to this node (all namespaces,
// fieldSelector spec.nodeName=<node>), reported as one SET on every change.
import type { Pod } from 'kubernetes-types/core/v1.js';

import type { KubeApi } from '../../kube/client.js';
import type { KObj } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { FirstSeen } from './first-seen.js';
import { ANN_CONFIG_MIRROR, ANN_CONFIG_SOURCE } from './manifest.js';

export class ApiSource {
  private readonly informer: Informer;
  private readonly seen = new FirstSeen();
  private pending: NodeJS.Timeout | undefined;

  constructor(
    client: KubeApi,
    nodeName: string,
    private readonly log: Logger,
    private readonly onSet: (pods: Pod[]) => void,
    /** Mirror pods are not pods to run: they go here instead. */
    private readonly onMirrors: (mirrors: KObj[]) => void = () => {},
  ) {
    const changed = (): void => this.schedule();
    this.informer = new Informer(client, {
      path: '/api/v1/pods',
      fieldSelector: `spec.nodeName=${nodeName}`,
      onAdd: changed,
      onUpdate: changed,
      onDelete: changed,
      onError: (e) => this.log.warn(`pod watch: ${e.message}; retrying`),
    });
  }

  /** Bursts of events (a relist) become one SET. */
  private schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.emit();
    }, 10);
  }

  private emit(): void {
    const all = this.informer.list();
    const isMirror = (o: KObj): boolean => o.metadata?.annotations?.[ANN_CONFIG_MIRROR] !== undefined;
    this.onMirrors(all.filter(isMirror));
    this.onSet(this.seen.stamp(all.filter((o) => !isMirror(o)) as Pod[], { [ANN_CONFIG_SOURCE]: 'api' }));
  }

  /** Resolves after the first list, so the kubelet knows this source's pods before cleaning up orphans. */
  async start(): Promise<void> {
    await this.informer.start();
    if (this.pending) clearTimeout(this.pending);
    this.pending = undefined;
    this.emit();
  }

  async stop(): Promise<void> {
    if (this.pending) clearTimeout(this.pending);
    await this.informer.stop();
  }
}
