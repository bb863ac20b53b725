// Server-side defaulting per resource (the subset clients rely on).
import type { Pod } from 'kubernetes-types/core/v1.js';

import { applyPodDefaults } from '../../kube/pod-defaults.js';
import { qosClass } from '../../kube/pod-qos.js';
import { defaultLimitRange } from '../admission/limit-ranger.js';
import { defaultWebhookConfiguration } from '../admission/webhook/configuration.js';
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';
import { defaultDaemonSet, defaultStatefulSet } from './apps.js';
import { defaultCronJob, defaultJob } from './jobs.js';

function defaultTemplate(t: Obj | undefined): void {
  if (t?.spec) applyPodDefaults(t as Pod);
  if (t) {
    delete t.apiVersion;
    delete t.kind;
  }
}

export function applyDefaults(r: ResourceDef, o: Obj): void {
  if (r.custom) return;
  switch (r.resource) {
    case 'pods': {
      applyPodDefaults(o as Pod);
      // As upstream's ServiceAccount admission: mirror pods (static pods' API copies) get no ServiceAccount.
      if (o.metadata?.annotations?.['kubernetes.io/config.mirror'] === undefined)
        o.spec.serviceAccountName ??= 'default';
      o.spec.priority ??= 0;
      o.status ??= { phase: 'Pending', qosClass: qosClass(o.spec) };
      break;
    }
    case 'nodes':
      o.spec ??= {};
      break;
    case 'namespaces':
      o.spec ??= {};
      // The namespace controller's finalizer, set on creation (upstream's PrepareForCreate).
      o.spec.finalizers ??= ['kubernetes'];
      o.status ??= {};
      o.status.phase ??= 'Active';
      o.metadata.labels = { ...(o.metadata.labels ?? {}), 'kubernetes.io/metadata.name': o.metadata.name };
      break;
    case 'services': {
      const spec = (o.spec ??= {});
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      spec.internalTrafficPolicy ??= 'Cluster';
      if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
      for (const p of (spec.ports ?? []) as Obj[]) {
        p.protocol ??= 'TCP';
        // Unset, 0 or "" (a protobuf body always carries the field) is the port (SetDefaults_Service).
        if (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '')
          p.targetPort = p.port;
      }
      o.status ??= { loadBalancer: {} };
      break;
    }
    case 'deployments':
      o.spec ??= {};
      o.spec.replicas ??= 1;
      o.spec.revisionHistoryLimit ??= 10;
      o.spec.progressDeadlineSeconds ??= 600;
      o.spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      defaultTemplate(o.spec.template);
      o.status ??= {};
      break;
    case 'replicasets':
      o.spec ??= {};
      o.spec.replicas ??= 1;
      defaultTemplate(o.spec.template);
      o.status ??= { replicas: 0 };
      break;
    case 'replicationcontrollers': {
      const spec = (o.spec ??= {});
      const labels = spec.template?.metadata?.labels as Record<string, string> | undefined;
      if (labels && !Object.keys(spec.selector ?? {}).length) spec.selector = { ...labels };
      if (labels && !Object.keys(o.metadata.labels ?? {}).length) o.metadata.labels = { ...labels };
      spec.replicas ??= 1;
      defaultTemplate(spec.template);
      o.status ??= { replicas: 0 };
      break;
    }
    case 'persistentvolumeclaims':
      (o.spec ??= {}).volumeMode ??= 'Filesystem';
      o.status ??= { phase: 'Pending' };
      break;
    case 'persistentvolumes':
      o.spec ??= {};
      o.spec.persistentVolumeReclaimPolicy ??= 'Retain';
      o.spec.volumeMode ??= 'Filesystem';
      o.status ??= { phase: 'Pending' };
      break;
    case 'storageclasses':
      o.reclaimPolicy ??= 'Delete';
      o.volumeBindingMode ??= 'Immediate';
      break;
    case 'limitranges':
      defaultLimitRange(o);
      break;
    case 'daemonsets':
      defaultDaemonSet(o);
      break;
    case 'statefulsets':
      defaultStatefulSet(o);
      break;
    case 'jobs':
      defaultJob(o);
      break;
    case 'priorityclasses':
      o.preemptionPolicy ??= 'PreemptLowerPriority';
      break;
    case 'cronjobs':
      defaultCronJob(o);
      break;
    case 'secrets':
      o.type ??= 'Opaque';
      // stringData is write-only: merged into data (base64) and never stored, as upstream.
      if (o.stringData && typeof o.stringData === 'object') {
        o.data = { ...(o.data ?? {}) };
        for (const [k, v] of Object.entries(o.stringData as Record<string, unknown>))
          o.data[k] = Buffer.from(String(v)).toString('base64');
        delete o.stringData;
      }
      break;
    case 'mutatingwebhookconfigurations':
    case 'validatingwebhookconfigurations':
      defaultWebhookConfiguration(o, r.resource === 'mutatingwebhookconfigurations');
      break;
    case 'podcertificaterequests':
      // SetObjectDefaults_PodCertificateRequest: a day, when the kubelet's projection names no lifetime.
      (o.spec ??= {}).maxExpirationSeconds ??= 86400;
      break;
    case 'events':
      o.count ??= 1;
      o.type ??= 'Normal';
      break;
  }
}

/**
 * The DefaultTolerationSeconds admission plugin (on create): pods tolerate
 * not-ready and unreachable NoExecute taints for 300 s unless they say otherwise,
 * so a node that drops out briefly does not lose its pods at once.
 */
export function addDefaultTolerations(pod: Obj): void {
  const tolerations = (pod.spec.tolerations ??= []) as Obj[];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some(
      (t) =>
        (t.effect === undefined || t.effect === '' || t.effect === 'NoExecute') &&
        (t.operator === 'Exists' ? !t.key || t.key === key : t.key === key),
    );
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
}
