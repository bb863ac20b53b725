// API pod source: list+watch of pods bound to this node (all namespaces,
// fieldSelector spec.nodeName=<node>), reported as one SET on every change.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { KubeClient } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../log.js';
import { ANN_CONFIG_MIRROR, ANN_CONFIG_SEEN, ANN_CONFIG_SOURCE } from './manifest.js';
import type { KObj } from '../../kube/client.js';
import { rfc3339Nano } from '../../kube/time.js';

export class ApiSource {
  private readonly informer: Informer;
  private readonly seen = new Map<string, string>();
  private pending: NodeJS.Timeout | undefined;

  constructor(
    client: KubeClient,
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
    const pods = all.filter((o) => !isMirror(o)).map((o) => {
      const p = structuredClone(o) as Pod & { metadata: { annotations?: Record<string, string> } };
      const uid = p.metadata.uid!;
      if (!this.seen.has(uid)) this.seen.set(uid, rfc3339Nano(new Date()));
      p.metadata.annotations = { ...(p.metadata.annotations ?? {}), [ANN_CONFIG_SOURCE]: 'api', [ANN_CONFIG_SEEN]: this.seen.get(uid)! };
      return p as Pod;
    });
    const live = new Set(pods.map((p) => p.metadata!.uid!));
    for (const uid of this.seen.keys()) if (!live.has(uid)) this.seen.delete(uid);
    this.onSet(pods);
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
