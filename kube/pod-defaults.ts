// API defaulting for the pod fields the kubelet acts on (as the apiserver
// would apply them), so that static and API pods look the same to workers.
import type { Container, Pod, Probe } from 'kubernetes-types/core/v1.js';

export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const last = image.split('/').pop() ?? image;
  if (last.includes('@')) return 'IfNotPresent';
  const tag = last.includes(':') ? last.slice(last.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** SetDefaults_Probe, _HTTPGetAction and _GRPCAction (kubectl describe relies on grpc.service being set). */
function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  if (p.httpGet) {
    p.httpGet.path ??= '/';
    p.httpGet.scheme ??= 'HTTP';
  }
  if (p.grpc) p.grpc.service ??= '';
}

/** SetDefaults_Container; also for ephemeral containers. A missing image is left for validation to report. */
export function defaultContainer(c: Container): void {
  if (typeof c.image === 'string') c.imagePullPolicy ??= defaultPullPolicy(c.image);
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

export function applyPodDefaults(pod: Pod): Pod {
  pod.apiVersion = 'v1';
  pod.kind = 'Pod';
  pod.metadata ??= {};
  const spec = (pod.spec ??= { containers: [] });
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
  spec.securityContext ??= {};
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const c of spec.containers) defaultContainer(c);
  for (const c of spec.ephemeralContainers ?? []) defaultContainer(c as Container);
  // SetDefaults_Volume: a volume that names no source is an emptyDir.
  for (const v of spec.volumes ?? []) if (Object.keys(v).every((k) => k === 'name')) v.emptyDir = {};
  return pod;
}
