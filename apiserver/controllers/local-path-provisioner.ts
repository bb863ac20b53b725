// local-path-provisioner (as k3s ships rancher/local-path-provisioner): for a
// claim handed to `rancher.io/local-path` once the scheduler has picked its
// node, a hostPath volume `<dir>/pvc-<uid>_<ns>_<name>` (DirectoryOrCreate,
// so the kubelet makes it) with node affinity to that node, pre-bound to the
// claim; a Released volume it made with reclaimPolicy Delete is deleted.
import type { KObj, KubeApi } from '../../kube/client.js';
import { KubeApiError } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { RetryingQueue } from './key-queue.js';
import {
  ANN_DEFAULT_CLASS,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  classOf,
  LOCAL_PATH_PROVISIONER,
  localPathVolume,
} from './volume-binding-model.js';
import { notFoundOk } from './workload-model.js';

/** k3s's --default-local-storage-path is /var/lib/rancher/k3s/storage; ours, under tskube's state. */
export const DEFAULT_LOCAL_STORAGE_PATH = '/var/lib/tskube/storage';

export const LOCAL_PATH_CLASS: KObj = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'local-path', annotations: { [ANN_DEFAULT_CLASS]: 'true' } },
  provisioner: LOCAL_PATH_PROVISIONER,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
};

export class LocalPathProvisioner {
  private readonly claimInformer: Informer;
  private readonly volumeInformer: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    private readonly log: Logger,
    private readonly events: EventRecorder,
    private readonly baseDir = DEFAULT_LOCAL_STORAGE_PATH,
  ) {
    this.queue = new RetryingQueue('local-path-provisioner', log, (k) =>
      k.startsWith('pvc:') ? this.provision(k.slice(4)) : this.reclaim(k.slice(3)),
    );
    const onErr = (what: string) => (e: Error) => log.warn(`local-path-provisioner: ${what} watch: ${e.message}`);
    const claim = (c: KObj): void => {
      if (c.metadata.annotations?.[ANN_STORAGE_PROVISIONER] === LOCAL_PATH_PROVISIONER && !c.spec?.volumeName)
        this.queue.add(`pvc:${c.metadata.namespace}/${c.metadata.name}`);
    };
    const volume = (v: KObj): void => {
      if (v.metadata.annotations?.[ANN_PROVISIONED_BY] === LOCAL_PATH_PROVISIONER && v.status?.phase === 'Released')
        this.queue.add(`pv:${v.metadata.name}`);
    };
    this.claimInformer = new Informer(client, {
      path: '/api/v1/persistentvolumeclaims',
      onAdd: claim,
      onUpdate: claim,
      onError: onErr('claim'),
    });
    this.volumeInformer = new Informer(client, {
      path: '/api/v1/persistentvolumes',
      onAdd: volume,
      onUpdate: volume,
      onError: onErr('volume'),
    });
  }

  async start(): Promise<void> {
    // k3s deploys this class with the provisioner; like its manifests, it is made once and never overwritten.
    await this.client.create('/apis/storage.k8s.io/v1/storageclasses', LOCAL_PATH_CLASS).catch((e: unknown) => {
      if (!(e instanceof KubeApiError && e.code === 409)) throw e;
    });
    await Promise.all([this.claimInformer.start(), this.volumeInformer.start()]);
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.claimInformer.stop(), this.volumeInformer.stop()]);
  }

  private async provision(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const pvc = await this.client.get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`).catch(notFoundOk);
    if (!pvc || pvc.metadata.deletionTimestamp || pvc.spec?.volumeName) return;
    const ref = { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name, uid: pvc.metadata.uid };
    const node = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    if (!node) {
      this.events.event(
        ref,
        'Warning',
        'ProvisioningFailed',
        'failed to provision volume with StorageClass "' +
          classOf(pvc) +
          '": configuration error, no node was specified',
      );
      return;
    }
    const sc = await this.client.get(`/apis/storage.k8s.io/v1/storageclasses/${classOf(pvc)}`).catch(notFoundOk);
    if (!sc) return;
    const pv = localPathVolume(pvc, sc, node, this.baseDir);
    this.events.event(
      ref,
      'Normal',
      'Provisioning',
      `External provisioner is provisioning volume for claim "${ns}/${name}"`,
    );
    try {
      await this.client.create('/api/v1/persistentvolumes', pv);
    } catch (e) {
      if (!(e instanceof KubeApiError && e.code === 409)) throw e;
    }
    this.events.event(ref, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${pv.metadata.name}`);
  }

  /**
   * A Released volume of ours with reclaimPolicy Delete: the object goes. Its
   * directory stays on the node (upstream runs a helper pod to remove it).
   */
  private async reclaim(name: string): Promise<void> {
    const pv = await this.client.get(`/api/v1/persistentvolumes/${name}`).catch(notFoundOk);
    if (!pv || pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    await this.client.delete(`/api/v1/persistentvolumes/${name}`).catch(notFoundOk);
    this.log.info(
      `local-path-provisioner: deleted volume ${name} (directory ${pv.spec?.hostPath?.path} left on ${pv.metadata.annotations?.['local.path.provisioner/selected-node']})`,
    );
  }
}
