// API defaulting for the pod fields the kubelet acts on (as the apiserver
// would apply them), so that static and API pods look the same to workers.
import type { Container, Pod } from 'kubernetes-types/core/v1.js';

export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const last = image.split('/').pop() ?? image;
  if (last.includes('@')) return 'IfNotPresent';
  const tag = last.includes(':') ? last.slice(last.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: Container): void {
  c.imagePullPolicy ??= defaultPullPolicy(c.image!);
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  for (const p of c.ports ?? []) p.protocol ??= 'TCP';
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
  return pod;
}
