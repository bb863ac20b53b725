// The Pod Security Standards' checks, one per control, with the policy version
// each revision applies from and upstream's reasons and details
// (k8s.io/pod-security-admission/policy).
import type {
  Container,
  LifecycleHandler,
  PodSpec as V1PodSpec,
  Probe,
  SELinuxOptions,
  Volume as V1Volume,
} from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

/** kubernetes-types predates the image volume source (v1.31). */
export type Volume = V1Volume & { image?: { reference?: string; pullPolicy?: string } };
export type PodSpec = Omit<V1PodSpec, 'volumes'> & { volumes?: Volume[] };

export interface Forbidden {
  reason: string;
  detail: string;
}

/** A control's verdict on one pod: undefined when it allows the pod. */
export type CheckPod = (meta: ObjectMeta, spec: PodSpec) => Forbidden | undefined;

export interface VersionedCheck {
  /** The first policy version (v1.<minMinor>) this revision applies to. */
  minMinor: number;
  check: CheckPod;
  /** Baseline checks a restricted check replaces. */
  overrides?: string[];
}

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: VersionedCheck[];
}

const plural = (one: string, many: string, n: number): string => (n === 1 ? one : many);
const joinQuote = (items: string[]): string => (items.length ? `"${items.join('", "')}"` : '');
const sortedSet = (s: Set<string>): string[] => [...s].sort();
const containersPhrase = (names: string[]): string =>
  `${plural('container', 'containers', names.length)} ${joinQuote(names)}`;
const goQuote = (s: string): string => JSON.stringify(s);

/** Init, regular and ephemeral containers, in upstream's visiting order. */
function containers(spec: PodSpec): Container[] {
  return [
    ...(spec.initContainers ?? []),
    ...(spec.containers ?? []),
    ...((spec.ephemeralContainers ?? []) as Container[]),
  ];
}

const isWindows = (spec: PodSpec): boolean => spec.os?.name === 'windows';
/** hostUsers: false puts the pod in a user namespace, which relaxes some restricted checks from v1.35. */
const inUserNamespace = (spec: PodSpec): boolean => spec.hostUsers === false;
const unlessWindows =
  (check: CheckPod): CheckPod =>
  (meta, spec) =>
    isWindows(spec) ? undefined : check(meta, spec);
const unlessUserNamespace =
  (check: CheckPod): CheckPod =>
  (meta, spec) =>
    inUserNamespace(spec) ? undefined : check(meta, spec);

// --- baseline ---

const appArmorProfile: CheckPod = (meta, spec) => {
  const allowedType = (t: string | undefined): boolean => t === 'RuntimeDefault' || t === 'Localhost';
  const allowedAnnotation = (v: string): boolean => v === '' || v === 'runtime/default' || v.startsWith('localhost/');
  const setters: string[] = [];
  const values = new Set<string>();
  const podProfile = spec.securityContext?.appArmorProfile;
  if (podProfile && !allowedType(podProfile.type)) {
    setters.push('pod');
    values.add(podProfile.type ?? '');
  }
  const bad = containers(spec).filter((c) => {
    const p = c.securityContext?.appArmorProfile;
    if (!p || allowedType(p.type)) return false;
    values.add(p.type ?? '');
    return true;
  });
  if (bad.length) setters.push(containersPhrase(bad.map((c) => c.name)));
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith('container.apparmor.security.beta.kubernetes.io/') && !allowedAnnotation(v))
    .map(([k, v]) => `${k}=${goQuote(v)}`)
    .sort();
  const valueList = [...sortedSet(values), ...annotations];
  if (annotations.length) setters.push(plural('annotation', 'annotations', annotations.length));
  if (!setters.length) return undefined;
  return {
    reason: plural('forbidden AppArmor profile', 'forbidden AppArmor profiles', valueList.length),
    detail: `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(valueList)}`,
  };
};

const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const capabilitiesBaseline: CheckPod = (_meta, spec) => {
  const caps = new Set<string>();
  const bad = containers(spec).filter((c) => {
    const added = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    added.forEach((cap) => caps.add(cap));
    return added.length > 0;
  });
  if (!bad.length) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${containersPhrase(bad.map((c) => c.name))} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
};

const hostNamespaces: CheckPod = (_meta, spec) => {
  const set = [
    spec.hostNetwork === true && 'hostNetwork=true',
    spec.hostPID === true && 'hostPID=true',
    spec.hostIPC === true && 'hostIPC=true',
  ].filter((s): s is string => Boolean(s));
  return set.length ? { reason: 'host namespaces', detail: set.join(', ') } : undefined;
};

const hostPathVolumes: CheckPod = (_meta, spec) => {
  const names = (spec.volumes ?? []).filter((v) => v.hostPath).map((v) => v.name);
  if (!names.length) return undefined;
  return { reason: 'hostPath volumes', detail: `${plural('volume', 'volumes', names.length)} ${joinQuote(names)}` };
};

const hostPorts: CheckPod = (_meta, spec) => {
  const ports = new Set<string>();
  const bad = containers(spec).filter((c) => {
    const used = (c.ports ?? []).filter((p) => p.hostPort !== undefined && p.hostPort !== 0);
    used.forEach((p) => ports.add(String(p.hostPort)));
    return used.length > 0;
  });
  if (!bad.length) return undefined;
  return {
    reason: 'hostPort',
    detail: `${containersPhrase(bad.map((c) => c.name))} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', ports.size)} ${sortedSet(ports).join(', ')}`,
  };
};

const hostProbesAndHostLifecycle: CheckPod = (_meta, spec) => {
  const probeHosts = (p: Probe | undefined): string[] =>
    [p?.httpGet?.host, p?.tcpSocket?.host].filter((h): h is string => Boolean(h));
  const handlerHosts = (h: LifecycleHandler | undefined): string[] =>
    [h?.httpGet?.host, h?.tcpSocket?.host].filter((x): x is string => Boolean(x));
  const names = new Set<string>();
  const hosts = new Set<string>();
  for (const c of containers(spec)) {
    const found = [
      ...probeHosts(c.livenessProbe),
      ...probeHosts(c.readinessProbe),
      ...probeHosts(c.startupProbe),
      ...handlerHosts(c.lifecycle?.postStart),
      ...handlerHosts(c.lifecycle?.preStop),
    ];
    if (!found.length) continue;
    names.add(c.name);
    found.forEach((h) => hosts.add(h));
  }
  if (!names.size) return undefined;
  return {
    reason: 'probe or lifecycle host',
    detail: `${containersPhrase(sortedSet(names))} ${plural('uses', 'use', names.size)} ${plural('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  };
};

const privileged: CheckPod = (_meta, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.privileged === true);
  if (!bad.length) return undefined;
  return {
    reason: 'privileged',
    detail: `${containersPhrase(bad.map((c) => c.name))} must not set securityContext.privileged=true`,
  };
};

const procMount: CheckPod = (_meta, spec) => {
  const types = new Set<string>();
  const bad = containers(spec).filter((c) => {
    const t = c.securityContext?.procMount;
    if (t === undefined || t === 'Default') return false;
    types.add(t);
    return true;
  });
  if (!bad.length) return undefined;
  return {
    reason: 'procMount',
    detail: `${containersPhrase(bad.map((c) => c.name))} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
};

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

const seLinuxOptions =
  (allowed: Set<string>): CheckPod =>
  (_meta, spec) => {
    const types = new Set<string>();
    let user = false;
    let role = false;
    const valid = (o: SELinuxOptions): boolean => {
      const typeAllowed = allowed.has(o.type ?? '');
      if (!typeAllowed) types.add(o.type ?? '');
      if (o.user) user = true;
      if (o.role) role = true;
      return typeAllowed && !o.user && !o.role;
    };
    const setters: string[] = [];
    const podOptions = spec.securityContext?.seLinuxOptions;
    if (podOptions && !valid(podOptions)) setters.push('pod');
    const bad = containers(spec).filter(
      (c) => c.securityContext?.seLinuxOptions && !valid(c.securityContext.seLinuxOptions),
    );
    if (bad.length) setters.push(containersPhrase(bad.map((c) => c.name)));
    if (!setters.length) return undefined;
    const what = [
      types.size ? `${plural('type', 'types', types.size)} ${joinQuote(sortedSet(types))}` : '',
      user ? 'user may not be set' : '',
      role ? 'role may not be set' : '',
    ].filter(Boolean);
    return {
      reason: 'seLinuxOptions',
      detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${what.join('; ')}`,
    };
  };

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccompType = (t: string | undefined): boolean => t === 'Localhost' || t === 'RuntimeDefault';
const validSeccompAnnotation = (v: string): boolean =>
  v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');

/** Before v1.19 the seccomp profile was set by annotations. */
const seccompProfileBaseline_1_0: CheckPod = (meta, spec) => {
  const annotations = meta.annotations ?? {};
  const bad = new Set<string>();
  const look = (key: string): void => {
    const v = annotations[key];
    if (v !== undefined && !validSeccompAnnotation(v)) bad.add(`${key}=${goQuote(v)}`);
  };
  look(SECCOMP_POD_ANNOTATION);
  for (const c of containers(spec)) look(SECCOMP_CONTAINER_ANNOTATION + c.name);
  if (!bad.size) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `forbidden ${plural('annotation', 'annotations', bad.size)} ${sortedSet(bad).join(', ')}`,
  };
};

/** Pod and containers that set a seccomp type other than RuntimeDefault or Localhost; and those that set none. */
function seccompSetters(spec: PodSpec): { setters: string[]; values: Set<string>; unset: string[] } {
  const setters: string[] = [];
  const values = new Set<string>();
  const podProfile = spec.securityContext?.seccompProfile;
  let podSet = false;
  if (podProfile) {
    if (!validSeccompType(podProfile.type)) {
      setters.push('pod');
      values.add(podProfile.type ?? '');
    } else podSet = true;
  }
  const bad: string[] = [];
  const unset: string[] = [];
  for (const c of containers(spec)) {
    const p = c.securityContext?.seccompProfile;
    if (p) {
      if (!validSeccompType(p.type)) {
        bad.push(c.name);
        values.add(p.type ?? '');
      }
    } else if (!podSet) unset.push(c.name);
  }
  if (bad.length) setters.push(containersPhrase(bad));
  return { setters, values, unset };
}

const seccompTypeForbidden = (setters: string[], values: Set<string>): Forbidden => ({
  reason: 'seccompProfile',
  detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
});

const seccompProfileBaseline_1_19: CheckPod = (_meta, spec) => {
  const { setters, values } = seccompSetters(spec);
  return setters.length ? seccompTypeForbidden(setters, values) : undefined;
};

const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];
const SYSCTLS_1_37 = [...SYSCTLS_1_32, 'net.ipv4.tcp_slow_start_after_idle', 'net.ipv4.tcp_notsent_lowat'];

const sysctls =
  (allowedList: string[]): CheckPod =>
  (_meta, spec) => {
    const allowed = new Set(allowedList);
    const bad = (spec.securityContext?.sysctls ?? []).map((s) => s.name).filter((n) => !allowed.has(n));
    return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
  };

const windowsHostProcess: CheckPod = (_meta, spec) => {
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push('pod');
  const bad = containers(spec).filter((c) => c.securityContext?.windowsOptions?.hostProcess === true);
  if (bad.length) setters.push(containersPhrase(bad.map((c) => c.name)));
  if (!setters.length) return undefined;
  return {
    reason: 'hostProcess',
    detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`,
  };
};

// --- restricted ---

const allowPrivilegeEscalation: CheckPod = (_meta, spec) => {
  const bad = containers(spec).filter((c) => c.securityContext?.allowPrivilegeEscalation !== false);
  if (!bad.length) return undefined;
  return {
    reason: 'allowPrivilegeEscalation != false',
    detail: `${containersPhrase(bad.map((c) => c.name))} must set securityContext.allowPrivilegeEscalation=false`,
  };
};

const capabilitiesRestricted: CheckPod = (_meta, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const caps = new Set<string>();
  for (const c of containers(spec)) {
    const capabilities = c.securityContext?.capabilities;
    if (!capabilities) {
      missingDrop.push(c.name);
      continue;
    }
    if (!(capabilities.drop ?? []).includes('ALL')) missingDrop.push(c.name);
    const added = (capabilities.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
    added.forEach((cap) => caps.add(cap));
    if (added.length) adding.push(c.name);
  }
  const details = [
    missingDrop.length ? `${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]` : '',
    adding.length
      ? `${containersPhrase(adding)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`
      : '',
  ].filter(Boolean);
  return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
};

const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
] as const;
const ALLOWED_VOLUME_SOURCES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'image',
  'persistentVolumeClaim',
  'projected',
  'secret',
] as const;

const restrictedVolumes: CheckPod = (_meta, spec) => {
  const names: string[] = [];
  const types = new Set<string>();
  for (const v of spec.volumes ?? []) {
    const source: Partial<Record<string, unknown>> = { ...v };
    if (ALLOWED_VOLUME_SOURCES.some((k) => source[k] != null)) continue;
    names.push(v.name);
    types.add(RESTRICTED_VOLUME_SOURCES.find((k) => source[k] != null) ?? 'unknown');
  }
  if (!names.length) return undefined;
  return {
    reason: 'restricted volume types',
    detail: `${plural('volume', 'volumes', names.length)} ${joinQuote(names)} ${plural('uses', 'use', names.length)} ${plural('restricted volume type', 'restricted volume types', types.size)} ${joinQuote(sortedSet(types))}`,
  };
};

const runAsNonRoot: CheckPod = (_meta, spec) => {
  const setters: string[] = [];
  const podValue = spec.securityContext?.runAsNonRoot;
  if (podValue === false) setters.push('pod');
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const v = c.securityContext?.runAsNonRoot;
    if (v !== undefined) {
      if (!v) explicit.push(c.name);
    } else if (podValue !== true) implicit.push(c.name);
  }
  if (explicit.length) setters.push(containersPhrase(explicit));
  if (setters.length) {
    return {
      reason: 'runAsNonRoot != true',
      detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false`,
    };
  }
  if (implicit.length) {
    return {
      reason: 'runAsNonRoot != true',
      detail: `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
    };
  }
  return undefined;
};

const runAsUser: CheckPod = (_meta, spec) => {
  const setters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) setters.push('pod');
  const bad = containers(spec).filter((c) => c.securityContext?.runAsUser === 0);
  if (bad.length) setters.push(containersPhrase(bad.map((c) => c.name)));
  return setters.length
    ? { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` }
    : undefined;
};

const seccompProfileRestricted: CheckPod = (_meta, spec) => {
  const { setters, values, unset } = seccompSetters(spec);
  if (setters.length) return seccompTypeForbidden(setters, values);
  if (!unset.length) return undefined;
  return {
    reason: 'seccompProfile',
    detail: `pod or ${containersPhrase(unset)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
  };
};

/** Every check, as upstream registers them (IDs are upstream's; they order the reasons in a message). */
export const CHECKS: readonly Check[] = [
  { id: 'appArmorProfile', level: 'baseline', versions: [{ minMinor: 0, check: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ minMinor: 0, check: capabilitiesBaseline }] },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ minMinor: 0, check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ minMinor: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ minMinor: 0, check: hostPorts }] },
  {
    id: 'hostProbesAndHostLifecycle',
    level: 'baseline',
    versions: [{ minMinor: 34, check: hostProbesAndHostLifecycle }],
  },
  { id: 'privileged', level: 'baseline', versions: [{ minMinor: 0, check: privileged }] },
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      { minMinor: 0, check: procMount },
      { minMinor: 35, check: unlessUserNamespace(procMount) },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { minMinor: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { minMinor: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { minMinor: 0, check: seccompProfileBaseline_1_0 },
      { minMinor: 19, check: seccompProfileBaseline_1_19 },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { minMinor: 0, check: sysctls(SYSCTLS_1_0) },
      { minMinor: 27, check: sysctls(SYSCTLS_1_27) },
      { minMinor: 29, check: sysctls(SYSCTLS_1_29) },
      { minMinor: 32, check: sysctls(SYSCTLS_1_32) },
      { minMinor: 37, check: sysctls(SYSCTLS_1_37) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ minMinor: 0, check: windowsHostProcess }] },
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { minMinor: 8, check: allowPrivilegeEscalation },
      { minMinor: 25, check: unlessWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minMinor: 22, check: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { minMinor: 25, check: unlessWindows(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  {
    id: 'procMount_restricted',
    level: 'restricted',
    versions: [{ minMinor: 35, check: procMount, overrides: ['procMount'] }],
  },
  {
    id: 'restrictedVolumes',
    level: 'restricted',
    versions: [{ minMinor: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }],
  },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      { minMinor: 0, check: runAsNonRoot },
      { minMinor: 35, check: unlessUserNamespace(runAsNonRoot) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      { minMinor: 23, check: runAsUser },
      { minMinor: 35, check: unlessUserNamespace(runAsUser) },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minMinor: 19, check: seccompProfileRestricted, overrides: ['seccompProfile_baseline'] },
      { minMinor: 25, check: unlessWindows(seccompProfileRestricted), overrides: ['seccompProfile_baseline'] },
    ],
  },
];
