// Pod sysctls (spec.securityContext.sysctls) as upstream's kubelet admits
// them: the safe set, plus what --allowed-unsafe-sysctls allows (names or
// prefixes ending in *), refused when they belong to a namespace the pod
// shares with the host. Pure.
import type { Pod } from 'kubernetes-types/core/v1.js';

export const SYSCTL_FORBIDDEN = 'SysctlForbidden';

/** Upstream's safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go, 1.32). */
export const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
];

type Ns = 'ipc' | 'net' | undefined;

/** Which kernel namespace isolates a sysctl (component-helpers' GetNamespace); undefined when none is known to. */
export function sysctlNamespace(name: string): Ns {
  if (name.startsWith('net.')) return 'net';
  if (
    name === 'kernel.sem' ||
    name.startsWith('kernel.shm') ||
    name.startsWith('kernel.msg') ||
    name.startsWith('fs.mqueue.')
  )
    return 'ipc';
  return undefined;
}

/** kernel/shm_rmid_forced and kernel.shm_rmid_forced are one sysctl (upstream NormalizeName). */
export const normalizeSysctl = (name: string): string =>
  name.includes('/') ? name.replace(/[./]/g, (ch) => (ch === '/' ? '.' : '/')) : name;

const SYSCTL_PATTERN = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*([a-z0-9]([-_a-z0-9]*[a-z0-9])?)?\*?$/;

/** Checks --allowed-unsafe-sysctls at start: each must be a name or prefix* a namespace isolates. */
export function checkAllowedUnsafe(patterns: string[]): void {
  for (const p of patterns) {
    if (p.length > 253 || !SYSCTL_PATTERN.test(p))
      throw new Error(
        `allowedUnsafeSysctls: sysctl "${p}" must have at most 253 characters and be a sysctl name or a prefix ending in *`,
      );
    const base = normalizeSysctl(p.replace(/\*$/, ''));
    if (!sysctlNamespace(base))
      throw new Error(`allowedUnsafeSysctls: the sysctls "${base}" are not known to be namespaced`);
  }
}

/** Upstream's admission: undefined when the pod may run, else the reason and message it is rejected with. */
export function admitSysctls(pod: Pod, allowedUnsafe: string[]): { reason: string; message: string } | undefined {
  const hostNet = pod.spec?.hostNetwork === true;
  const hostIPC = pod.spec?.hostIPC === true;
  for (const s of pod.spec?.securityContext?.sysctls ?? []) {
    const name = normalizeSysctl(String(s.name));
    const safe = SAFE_SYSCTLS.includes(name);
    const allowed =
      safe ||
      allowedUnsafe.some((p) =>
        p.endsWith('*') ? name.startsWith(normalizeSysctl(p.slice(0, -1))) : normalizeSysctl(p) === name,
      );
    let err: string | undefined;
    if (!allowed) err = `"${name}" not allowlisted`;
    else {
      const ns = sysctlNamespace(name);
      if ((ns === 'net' && hostNet) || (ns === 'ipc' && hostIPC)) err = `"${name}" not allowed with host ${ns} enabled`;
    }
    if (err) return { reason: SYSCTL_FORBIDDEN, message: `forbidden sysctl: ${err}` };
  }
  return undefined;
}

/** What the sandbox gets: every sysctl of the pod, by its dotted name. */
export function sandboxSysctls(pod: Pod): Record<string, string> {
  return Object.fromEntries(
    (pod.spec?.securityContext?.sysctls ?? []).map((s) => [normalizeSysctl(String(s.name)), String(s.value)]),
  );
}
