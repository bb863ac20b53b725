// persistentvolume-binder-controller (upstream's PV controller, binding
// half): binds each pending claim to the best fitting volume (claimRef on the
// volume, volumeName on the claim, both Bound), leaves WaitForFirstConsumer
// claims until the scheduler picks a node, hands the rest to their class's
// provisioner, marks volumes Available or Released, and claims Lost.
import type { KObj, KubeApi } from '../../kube/client.js';
import type { EventRecorder, ObjectRef } from '../../kube/events.js';
import { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { RetryingQueue } from './key-queue.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  bestVolume,
  boundClaimStatus,
  claimRefMatches,
  classOf,
} from './volume-binding-model.js';
import { notFoundOk } from './workload-model.js';

const PVS = '/api/v1/persistentvolumes';
const claims = (ns: string): string => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;

export class PersistentVolumeBinder {
  private readonly claimInformer: Informer;
  private readonly volumeInformer: Informer;
  private readonly queue: RetryingQueue;

  constructor(
    private readonly client: KubeApi,
    log: Logger,
    private readonly events: EventRecorder,
  ) {
    this.queue = new RetryingQueue('persistentvolume-binder-controller', log, (k) => this.sync(k));
    const onErr = (what: string) => (e: Error) =>
      log.warn(`persistentvolume-binder-controller: ${what} watch: ${e.message}`);
    const claim = (c: KObj): void => this.queue.add(`pvc:${c.metadata.namespace}/${c.metadata.name}`);
    const volume = (v: KObj): void => {
      this.queue.add(`pv:${v.metadata.name}`);
      const ref = v.spec?.claimRef;
      if (ref?.name) this.queue.add(`pvc:${ref.namespace ?? 'default'}/${ref.name}`);
    };
    const pendingClaims = (): void =>
      this.claimInformer
        .list()
        .filter((c) => c.status?.phase !== 'Bound')
        .forEach(claim);
    this.claimInformer = new Informer(client, {
      path: '/api/v1/persistentvolumeclaims',
      onAdd: claim,
      onUpdate: claim,
      onDelete: (c) => {
        if (c.spec?.volumeName) this.queue.add(`pv:${c.spec.volumeName}`);
      },
      onError: onErr('claim'),
    });
    // A new or freed volume may fit a pending claim.
    this.volumeInformer = new Informer(client, {
      path: PVS,
      onAdd: (v) => (volume(v), pendingClaims()),
      onUpdate: (v) => (volume(v), pendingClaims()),
      onDelete: volume,
      onError: onErr('volume'),
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.claimInformer.start(), this.volumeInformer.start()]);
    for (const c of this.claimInformer.list()) this.queue.add(`pvc:${c.metadata.namespace}/${c.metadata.name}`);
    for (const v of this.volumeInformer.list()) this.queue.add(`pv:${v.metadata.name}`);
  }

  async stop(): Promise<void> {
    this.queue.stop();
    await Promise.all([this.claimInformer.stop(), this.volumeInformer.stop()]);
  }

  private sync(key: string): Promise<void> {
    return key.startsWith('pvc:') ? this.syncClaim(key.slice(4)) : this.syncVolume(key.slice(3));
  }

  private async syncClaim(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const pvc = await this.client.get(`${claims(ns)}/${name}`).catch(notFoundOk);
    if (!pvc || pvc.metadata.deletionTimestamp) return;
    const ref: ObjectRef = {
      kind: 'PersistentVolumeClaim',
      apiVersion: 'v1',
      namespace: ns,
      name,
      uid: pvc.metadata.uid,
    };
    if (pvc.status?.phase === 'Bound' || pvc.status?.phase === 'Lost') {
      const pv = pvc.spec?.volumeName
        ? await this.client.get(`${PVS}/${pvc.spec.volumeName}`).catch(notFoundOk)
        : undefined;
      if (!pv && pvc.status.phase === 'Bound') {
        await this.client.update(`${claims(ns)}/${name}/status`, { ...pvc, status: { ...pvc.status, phase: 'Lost' } });
        this.events.event(
          ref,
          'Warning',
          'ClaimLost',
          'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
        );
      }
      return;
    }
    const className = classOf(pvc);
    const sc = className
      ? await this.client.get(`/apis/storage.k8s.io/v1/storageclasses/${className}`).catch(notFoundOk)
      : undefined;
    // Delayed binding: nothing until the scheduler names a node, then only volumes that node can reach.
    const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    if (sc?.volumeBindingMode === 'WaitForFirstConsumer' && !pvc.spec?.volumeName && !selected) {
      this.events.event(
        ref,
        'Normal',
        'WaitForFirstConsumer',
        'waiting for first consumer to be created before binding',
      );
      return;
    }
    const node =
      sc?.volumeBindingMode === 'WaitForFirstConsumer' && selected
        ? await this.client.get(`/api/v1/nodes/${selected}`).catch(notFoundOk)
        : undefined;
    const pvs = (await this.client.get(PVS)).items as KObj[];
    const pv = bestVolume(pvc, pvs, node);
    if (pv) return this.bind(pv, pvc);
    if (!className) {
      this.events.event(
        ref,
        'Normal',
        'FailedBinding',
        'no persistent volumes available for this claim and no storage class is set',
      );
      return;
    }
    if (!sc) {
      this.events.event(ref, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
      return;
    }
    if (sc.provisioner === 'kubernetes.io/no-provisioner') {
      this.events.event(
        ref,
        'Normal',
        'FailedBinding',
        'no persistent volumes available for this claim and no storage class is set',
      );
      return;
    }
    if (pvc.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== sc.provisioner) {
      await this.client.patch(
        `${claims(ns)}/${name}`,
        {
          metadata: {
            annotations: { [ANN_STORAGE_PROVISIONER]: sc.provisioner, [ANN_BETA_STORAGE_PROVISIONER]: sc.provisioner },
          },
        },
        'merge',
      );
    }
    this.events.event(
      ref,
      'Normal',
      'ExternalProvisioning',
      `Waiting for a volume to be created either by the external provisioner '${sc.provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
    );
  }

  /** bind: the volume first (claimRef, Bound), then the claim (volumeName, Bound), as upstream orders it. */
  private async bind(pv: KObj, pvc: KObj): Promise<void> {
    const ns = pvc.metadata.namespace;
    let volume = pv;
    if (!claimRefMatches(volume, pvc) || !volume.spec.claimRef.uid) {
      volume = await this.client.update(`${PVS}/${pv.metadata.name}`, {
        ...pv,
        metadata: {
          ...pv.metadata,
          annotations: {
            ...(pv.metadata.annotations ?? {}),
            ...(pv.spec?.claimRef ? {} : { [ANN_BOUND_BY_CONTROLLER]: 'yes' }),
          },
        },
        spec: {
          ...pv.spec,
          claimRef: {
            kind: 'PersistentVolumeClaim',
            namespace: ns,
            name: pvc.metadata.name,
            uid: pvc.metadata.uid,
            apiVersion: 'v1',
            resourceVersion: pvc.metadata.resourceVersion,
          },
        },
      });
    }
    if (volume.status?.phase !== 'Bound')
      volume = await this.client.update(`${PVS}/${pv.metadata.name}/status`, { ...volume, status: { phase: 'Bound' } });
    let claim = pvc;
    if (claim.spec?.volumeName !== pv.metadata.name || claim.metadata.annotations?.[ANN_BIND_COMPLETED] !== 'yes') {
      const byController = claim.spec?.volumeName ? {} : { [ANN_BOUND_BY_CONTROLLER]: 'yes' };
      claim = await this.client.update(`${claims(ns)}/${pvc.metadata.name}`, {
        ...claim,
        metadata: {
          ...claim.metadata,
          annotations: { ...(claim.metadata.annotations ?? {}), [ANN_BIND_COMPLETED]: 'yes', ...byController },
        },
        spec: { ...claim.spec, volumeName: pv.metadata.name },
      });
    }
    await this.client.update(`${claims(ns)}/${pvc.metadata.name}/status`, {
      ...claim,
      status: boundClaimStatus(volume),
    });
  }

  private async syncVolume(name: string): Promise<void> {
    const pv = await this.client.get(`${PVS}/${name}`).catch(notFoundOk);
    if (!pv || pv.metadata.deletionTimestamp) return;
    const ref = pv.spec?.claimRef;
    const setPhase = async (phase: string, message?: string): Promise<void> => {
      if (pv.status?.phase === phase) return;
      await this.client.update(`${PVS}/${name}/status`, { ...pv, status: { phase, ...(message ? { message } : {}) } });
    };
    if (!ref?.name) return setPhase('Available');
    const claim = await this.client.get(`${claims(ref.namespace ?? 'default')}/${ref.name}`).catch(notFoundOk);
    if (claim && (!ref.uid || ref.uid === claim.metadata.uid)) {
      if (claim.spec?.volumeName === name) await setPhase('Bound');
      return;
    }
    if (!ref.uid) return; // pre-bound by a user to a claim not made yet
    // Its claim is gone: Released; a provisioner deletes what it made, others need an administrator.
    if (pv.spec?.persistentVolumeReclaimPolicy === 'Delete' && !pv.metadata.annotations?.[ANN_PROVISIONED_BY]) {
      await setPhase(
        'Failed',
        `error getting deleter volume plugin for volume "${name}": no deletable volume plugin matched`,
      );
    } else await setPhase('Released');
  }
}
