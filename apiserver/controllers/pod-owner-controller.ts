// What the controllers that own pods directly (ReplicaSet, DaemonSet,
// StatefulSet) share beyond KeyedController: an informer on pods, a pod
// change waking its owner (or, for an orphan, every owner of its namespace,
// which may adopt it).
import type { KObj, KubeApi } from '../../kube/client.js';
import type { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { KeyedController, keyOf } from './keyed-controller.js';
import { controllerRef } from './workload-model.js';

export { keyOf };

export abstract class PodOwnerController extends KeyedController {
  protected readonly pods: Informer;

  constructor(client: KubeApi, log: Logger, name: string, private readonly kind: string, ownerPath: string) {
    super(client, log, name, kind, ownerPath, true);
    const pod = (p: KObj): void => this.onPod(p);
    this.pods = this.watch({ path: '/api/v1/pods', onAdd: pod, onUpdate: pod, onDelete: pod, onError: this.onError('pod') });
  }

  private onPod(p: KObj): void {
    const ref = controllerRef(p);
    if (ref?.kind === this.kind) this.queue.add(`${p.metadata.namespace}/${ref.name}`);
    else if (!ref) for (const o of this.primary.list()) if (o.metadata.namespace === p.metadata.namespace) this.queue.add(keyOf(o));
  }
}
