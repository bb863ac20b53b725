// The built-in controllers of the dev control plane, run in-process against
// the Api through LocalClient. --controllers follows kube-controller-manager:
// "*" for all, "-name" to turn one off.
import { ApiEventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import type { Api } from '../api/api.js';
import { LocalClient } from '../api/local-client.js';
import { CrdFinalizer } from '../crd/finalizer.js';
import { BootstrapSigner, TokenCleaner } from './bootstrap-tokens.js';
import { ClusterRoleAggregation } from './clusterrole-aggregation.js';
import { CronJobController } from './cronjob-controller.js';
import { CsrApprover, type CsrAuthorizer, CsrSigner } from './csr-controllers.js';
import { DaemonSetController } from './daemonset-controller.js';
import { DeploymentController } from './deployment-controller.js';
import { DisruptionController } from './disruption-controller.js';
import { EndpointsController, EndpointSliceController } from './endpoint-controllers.js';
import { EndpointSliceMirroringController } from './endpointslice-mirroring.js';
import { GarbageCollector } from './garbage-collector.js';
import { JobController } from './job-controller.js';
import { LocalPathProvisioner } from './local-path-provisioner.js';
import { NamespaceController } from './namespace-controller.js';
import { RootCaPublisher, ServiceAccountController } from './namespace-defaults.js';
import type { NodeIpamOptions } from './node-ipam.js';
import { NodeIpamController } from './node-ipam.js';
import { NodeLifecycle, type NodeLifecycleOptions } from './node-lifecycle.js';
import { PersistentVolumeBinder } from './persistentvolume-binder.js';
import { PodGarbageCollector } from './pod-gc.js';
import { ReplicaSetController, REPLICATION_CONTROLLER } from './replicaset-controller.js';
import { ResourceQuotaController } from './resourcequota-controller.js';
import { Scheduler } from './scheduler.js';
import { StatefulSetController } from './statefulset-controller.js';
import { TtlAfterFinishedController } from './ttl-after-finished.js';

export const CONTROLLER_NAMES = [
  'scheduler',
  'node-lifecycle-controller',
  'endpointslice-controller',
  'endpoints-controller',
  'endpointslice-mirroring-controller',
  'replicaset-controller',
  'replicationcontroller-controller',
  'deployment-controller',
  'daemonset-controller',
  'statefulset-controller',
  'job-controller',
  'cronjob-controller',
  'disruption-controller',
  'ttl-after-finished-controller',
  'garbage-collector-controller',
  'pod-garbage-collector-controller',
  'persistentvolume-binder-controller',
  'resourcequota-controller',
  // k3s's bundled provisioner (and its default StorageClass), run in-process here.
  'local-path-provisioner',
  'namespace-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'clusterrole-aggregation-controller',
  // Off by default upstream (kubeadm turns them on); on here, as this control plane is kubeadm-like.
  'bootstrapsigner',
  'tokencleaner',
  // Runs only with --allocate-node-cidrs, as upstream.
  'node-ipam-controller',
  'csrapproving',
  'csrsigning',
] as const;

export interface ControllerOptions extends NodeLifecycleOptions {
  /** e.g. ['*'], ['*', '-scheduler'], ['scheduler'] */
  controllers: string[];
  schedulerRetryMs?: number;
  /** The cluster CA (PEM), published as kube-root-ca.crt in every namespace. */
  caPem?: string;
  /** --allocate-node-cidrs with --cluster-cidr and --node-cidr-mask-size. */
  nodeIpam?: NodeIpamOptions;
  /** SubjectAccessReviews for the CSR approver. */
  authorizeCsr?: CsrAuthorizer;
  /** Where the cluster CA's certificate and key are (ca.crt, ca.key), for the CSR signer. */
  pkiDir?: string;
  /** --cluster-signing-duration, seconds. */
  signingDurationSec?: number;
  /** --default-local-storage-path. */
  localStoragePath?: string;
}

export function enabledControllers(list: string[]): Set<string> {
  const out = new Set<string>();
  const off: string[] = [];
  for (const raw of list.map((n) => n.trim()).filter(Boolean)) {
    const name = raw.replace(/^-/, '');
    if (name !== '*' && !(CONTROLLER_NAMES as readonly string[]).includes(name))
      throw new Error(`--controllers: unknown controller "${name}" (known: ${CONTROLLER_NAMES.join(', ')})`);
    if (raw.startsWith('-')) off.push(name);
    else if (name === '*') CONTROLLER_NAMES.forEach((c) => out.add(c));
    else out.add(name);
  }
  for (const n of off) out.delete(n);
  return out;
}

interface Controller {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface RunningControllers {
  /** Running controllers by name. */
  readonly byName: Map<string, Controller>;
  stop(): Promise<void>;
}

/** Each controller with the identity it acts as (kube-controller-manager's service accounts) and how to build it. */
const BUILDERS: Record<
  (typeof CONTROLLER_NAMES)[number],
  { user: string; groups?: string[]; make(client: LocalClient, log: Logger, o: ControllerOptions): Controller }
> = {
  scheduler: {
    user: 'system:kube-scheduler',
    make: (c, log, o) =>
      new Scheduler(c, log, new ApiEventRecorder(c, { component: 'default-scheduler' }, log), {
        retryMs: o.schedulerRetryMs,
      }),
  },
  'node-lifecycle-controller': {
    user: 'system:serviceaccount:kube-system:node-controller',
    make: (c, log, o) => new NodeLifecycle(c, log, new ApiEventRecorder(c, { component: 'node-controller' }, log), o),
  },
  'endpointslice-controller': {
    user: 'system:serviceaccount:kube-system:endpointslice-controller',
    make: (c, log) => new EndpointSliceController(c, log),
  },
  'endpoints-controller': {
    user: 'system:serviceaccount:kube-system:endpoint-controller',
    make: (c, log) => new EndpointsController(c, log),
  },
  'endpointslice-mirroring-controller': {
    user: 'system:serviceaccount:kube-system:endpointslicemirroring-controller',
    make: (c, log) => new EndpointSliceMirroringController(c, log),
  },
  'pod-garbage-collector-controller': {
    user: 'system:serviceaccount:kube-system:pod-garbage-collector',
    make: (c, log) => new PodGarbageCollector(c, log),
  },
  'replicaset-controller': {
    user: 'system:serviceaccount:kube-system:replicaset-controller',
    make: (c, log) =>
      new ReplicaSetController(c, log, new ApiEventRecorder(c, { component: 'replicaset-controller' }, log)),
  },
  'replicationcontroller-controller': {
    user: 'system:serviceaccount:kube-system:replication-controller',
    make: (c, log) =>
      new ReplicaSetController(
        c,
        log,
        new ApiEventRecorder(c, { component: 'replication-controller' }, log),
        REPLICATION_CONTROLLER,
      ),
  },
  'deployment-controller': {
    user: 'system:serviceaccount:kube-system:deployment-controller',
    make: (c, log) =>
      new DeploymentController(c, log, new ApiEventRecorder(c, { component: 'deployment-controller' }, log)),
  },
  'daemonset-controller': {
    user: 'system:serviceaccount:kube-system:daemon-set-controller',
    make: (c, log) =>
      new DaemonSetController(c, log, new ApiEventRecorder(c, { component: 'daemonset-controller' }, log)),
  },
  'statefulset-controller': {
    user: 'system:serviceaccount:kube-system:statefulset-controller',
    make: (c, log) =>
      new StatefulSetController(c, log, new ApiEventRecorder(c, { component: 'statefulset-controller' }, log)),
  },
  'job-controller': {
    user: 'system:serviceaccount:kube-system:job-controller',
    make: (c, log) => new JobController(c, log, new ApiEventRecorder(c, { component: 'job-controller' }, log)),
  },
  'cronjob-controller': {
    user: 'system:serviceaccount:kube-system:cronjob-controller',
    make: (c, log) => new CronJobController(c, log, new ApiEventRecorder(c, { component: 'cronjob-controller' }, log)),
  },
  'disruption-controller': {
    user: 'system:serviceaccount:kube-system:disruption-controller',
    make: (c, log) => new DisruptionController(c, log),
  },
  'ttl-after-finished-controller': {
    user: 'system:serviceaccount:kube-system:ttl-after-finished-controller',
    make: (c, log) => new TtlAfterFinishedController(c, log),
  },
  'persistentvolume-binder-controller': {
    user: 'system:serviceaccount:kube-system:persistent-volume-binder',
    make: (c, log) =>
      new PersistentVolumeBinder(c, log, new ApiEventRecorder(c, { component: 'persistentvolume-controller' }, log)),
  },
  'resourcequota-controller': {
    user: 'system:serviceaccount:kube-system:resourcequota-controller',
    make: (c, log) => new ResourceQuotaController(c, log),
  },
  'local-path-provisioner': {
    user: 'system:serviceaccount:kube-system:local-path-provisioner-service-account',
    make: (c, log, o) =>
      new LocalPathProvisioner(
        c,
        log,
        new ApiEventRecorder(c, { component: 'rancher.io/local-path' }, log),
        o.localStoragePath,
      ),
  },
  'garbage-collector-controller': {
    user: 'system:serviceaccount:kube-system:generic-garbage-collector',
    make: (c, log) => new GarbageCollector(c, log),
  },
  'namespace-controller': {
    user: 'system:serviceaccount:kube-system:namespace-controller',
    make: (c, log) => new NamespaceController(c, log),
  },
  'serviceaccount-controller': {
    user: 'system:serviceaccount:kube-system:service-account-controller',
    make: (c, log) => new ServiceAccountController(c, log),
  },
  'root-ca-certificate-publisher-controller': {
    user: 'system:serviceaccount:kube-system:root-ca-cert-publisher',
    make: (c, log, o) => new RootCaPublisher(c, log, o.caPem ?? ''),
  },
  // Upstream's controller holds escalate on clusterroles; ours writes as the apiserver itself.
  'clusterrole-aggregation-controller': {
    user: 'system:apiserver',
    groups: ['system:masters'],
    make: (c, log) => new ClusterRoleAggregation(c, log),
  },
  bootstrapsigner: {
    user: 'system:serviceaccount:kube-system:bootstrap-signer',
    make: (c, log) => new BootstrapSigner(c, log),
  },
  tokencleaner: { user: 'system:serviceaccount:kube-system:token-cleaner', make: (c, log) => new TokenCleaner(c, log) },
  csrapproving: {
    user: 'system:serviceaccount:kube-system:certificate-controller',
    make: (c, log, o) => new CsrApprover(c, log, o.authorizeCsr ?? (() => false)),
  },
  csrsigning: {
    user: 'system:serviceaccount:kube-system:certificate-controller',
    make: (c, log, o) => new CsrSigner(c, log, o.pkiDir ?? '', o.signingDurationSec),
  },
  'node-ipam-controller': {
    user: 'system:serviceaccount:kube-system:node-controller',
    make: (c, log, o) =>
      new NodeIpamController(c, log, new ApiEventRecorder(c, { component: 'cidrAllocator' }, log), o.nodeIpam!),
  },
};

export async function startControllers(api: Api, o: ControllerOptions, log: Logger): Promise<RunningControllers> {
  const on = enabledControllers(o.controllers);
  const byName = new Map<string, Controller>();
  for (const name of CONTROLLER_NAMES) {
    if (!on.has(name) || (name === 'node-ipam-controller' && !o.nodeIpam) || (name === 'csrsigning' && !o.pkiDir))
      continue;
    const b = BUILDERS[name];
    const c = b.make(new LocalClient(api, { name: b.user, groups: b.groups ?? [] }), log, o);
    await c.start();
    byName.set(name, c);
  }
  // Part of the apiserver itself (apiextensions), not of the controller manager: --controllers does not name it.
  const crdFinalizer = new CrdFinalizer(new LocalClient(api), log);
  await crdFinalizer.start();
  byName.set('crd-finalizer', crdFinalizer);
  return { byName, stop: async () => void (await Promise.all([...byName.values()].map((c) => c.stop()))) };
}
