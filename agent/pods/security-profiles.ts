// Seccomp and AppArmor profiles for CRI, as upstream's kuberuntime maps them:
// the container's field over the pod's (over the legacy AppArmor annotation);
// Localhost seccomp profiles are files under <root-dir>/seccomp. Unset stays
// unset: the runtime's default (unconfined seccomp, as upstream without
// seccompDefault). Pure.
import path from 'node:path';

import type { Container, Pod, SeccompProfile } from 'kubernetes-types/core/v1.js';

export interface CriProfile {
  profile_type: 'RuntimeDefault' | 'Unconfined' | 'Localhost';
  localhost_ref?: string;
}

export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

function fromSeccomp(p: SeccompProfile | undefined, rootDir: string): CriProfile | undefined {
  if (!p?.type) return undefined;
  if (p.type === 'Localhost')
    return { profile_type: 'Localhost', localhost_ref: path.join(rootDir, 'seccomp', p.localhostProfile ?? '') };
  return { profile_type: p.type === 'Unconfined' ? 'Unconfined' : 'RuntimeDefault' };
}

export function seccompProfile(pod: Pod, c: Container | undefined, rootDir: string): CriProfile | undefined {
  return (
    fromSeccomp(c?.securityContext?.seccompProfile, rootDir) ??
    fromSeccomp(pod.spec?.securityContext?.seccompProfile, rootDir)
  );
}

type AppArmor = { type?: string; localhostProfile?: string };

function fromAppArmor(p: AppArmor | undefined): CriProfile | undefined {
  if (!p?.type) return undefined;
  if (p.type === 'Localhost') return { profile_type: 'Localhost', localhost_ref: p.localhostProfile ?? '' };
  return { profile_type: p.type === 'Unconfined' ? 'Unconfined' : 'RuntimeDefault' };
}

/** The annotation's values: runtime/default, unconfined, localhost/<profile>. */
function fromAnnotation(v: string | undefined): CriProfile | undefined {
  if (!v) return undefined;
  if (v === 'runtime/default') return { profile_type: 'RuntimeDefault' };
  if (v === 'unconfined') return { profile_type: 'Unconfined' };
  if (v.startsWith('localhost/')) return { profile_type: 'Localhost', localhost_ref: v.slice('localhost/'.length) };
  return undefined;
}

export function appArmorProfile(pod: Pod, c: Container | undefined): CriProfile | undefined {
  const sc = c?.securityContext as { appArmorProfile?: AppArmor } | undefined;
  const ps = pod.spec?.securityContext as { appArmorProfile?: AppArmor } | undefined;
  return (
    fromAppArmor(sc?.appArmorProfile) ??
    (c ? fromAnnotation(pod.metadata?.annotations?.[`${APPARMOR_ANNOTATION_PREFIX}${c.name}`]) : undefined) ??
    fromAppArmor(ps?.appArmorProfile)
  );
}
