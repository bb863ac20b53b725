// The ServiceAccount admission plugin (on by default upstream): a pod gets
// serviceAccountName "default" if it names none, the ServiceAccount must
// exist, and unless automounting is off (pod first, then ServiceAccount) every
// container mounts a projected kube-api-access-<suffix> volume at
// /var/run/secrets/kubernetes.io/serviceaccount: a bound token, the cluster
// CA (kube-root-ca.crt) and the namespace. Mirror pods are left alone.
import { errors } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

export const SA_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const MIRROR = 'kubernetes.io/config.mirror';

/** The projected volume upstream injects (token TTL 3607 s, mode 0644). */
export function kubeApiAccessVolume(name: string): Obj {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: ROOT_CA_CONFIGMAP, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    },
  };
}

/** Mutates a pod being created; `getSA` reads the ServiceAccount. `suffix` names the volume. */
export function admitServiceAccount(
  pod: Obj,
  getSA: (ns: string, name: string) => Obj | undefined,
  suffix: string,
): void {
  if (pod.metadata?.annotations?.[MIRROR] !== undefined) return;
  const spec = pod.spec;
  const ns = pod.metadata.namespace as string;
  spec.serviceAccountName ||= spec.serviceAccount || 'default';
  spec.serviceAccount = spec.serviceAccountName;
  const sa = getSA(ns, spec.serviceAccountName);
  if (!sa)
    throw errors.forbiddenObject(
      'pods',
      '',
      String(pod.metadata.name ?? ''),
      `error looking up service account ${ns}/${String(spec.serviceAccountName)}: serviceaccount "${String(spec.serviceAccountName)}" not found`,
    );
  const automount = spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
  if (!automount) return;
  const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])] as Obj[];
  // A pod that mounts something of its own there keeps it.
  if (containers.some((c) => ((c.volumeMounts ?? []) as Obj[]).some((m) => m.mountPath === SA_MOUNT_PATH))) return;
  const volName = `kube-api-access-${suffix}`;
  spec.volumes = [...(spec.volumes ?? []), kubeApiAccessVolume(volName)];
  for (const c of containers)
    c.volumeMounts = [...(c.volumeMounts ?? []), { name: volName, readOnly: true, mountPath: SA_MOUNT_PATH }];
}

/** Mirror pods are left as the kubelet made them, but may not reach for credentials (upstream's Validate, after NodeRestriction). */
export function validateMirrorPod(pod: Obj): void {
  if (pod.metadata?.annotations?.[MIRROR] === undefined) return;
  const deny = (why: string): never => {
    throw errors.forbiddenObject('pods', '', String(pod.metadata?.name ?? ''), why);
  };
  const spec = (pod.spec ?? {}) as Obj;
  if (spec.serviceAccountName || spec.serviceAccount) deny('a mirror pod may not reference service accounts');
  if (podSecretNames(spec).length) deny('a mirror pod may not reference secrets');
  for (const v of (spec.volumes ?? []) as Obj[]) {
    if (((v.projected?.sources ?? []) as Obj[]).some((s) => s.serviceAccountToken))
      deny('a mirror pod may not use ServiceAccountToken volume projections');
  }
}

/** podutil.VisitPodSecretNames: every Secret a pod spec names. */
export function podSecretNames(spec: Obj): string[] {
  const out: string[] = [];
  for (const s of (spec.imagePullSecrets ?? []) as Obj[]) out.push(s.name);
  for (const c of [
    ...(spec.initContainers ?? []),
    ...(spec.containers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ] as Obj[]) {
    for (const e of (c.envFrom ?? []) as Obj[]) if (e.secretRef) out.push(e.secretRef.name);
    for (const e of (c.env ?? []) as Obj[]) if (e.valueFrom?.secretKeyRef) out.push(e.valueFrom.secretKeyRef.name);
  }
  for (const v of (spec.volumes ?? []) as Obj[]) {
    if (v.secret) out.push(v.secret.secretName);
    for (const s of (v.projected?.sources ?? []) as Obj[]) if (s.secret) out.push(s.secret.name);
    for (const src of Object.values(v))
      if (src && typeof src === 'object' && (src as Obj).secretRef) out.push((src as Obj).secretRef.name);
  }
  return out;
}
