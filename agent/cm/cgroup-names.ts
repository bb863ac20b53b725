// Cgroup names as upstream's container manager makes them: the QoS
// hierarchy under --cgroup-root (kubepods, kubepods/burstable,
// kubepods/besteffort, a pod<uid> cgroup per pod, Guaranteed pods directly
// under kubepods), written for the cgroupfs driver (/kubepods/burstable/pod<uid>)
// or the systemd one (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice).
export type CgroupDriver = 'cgroupfs' | 'systemd';
export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** A cgroup as its components, root first: ['kubepods', 'burstable', 'pod<uid>']. */
export type CgroupName = string[];

/** --cgroup-root as components: "/" is none; a systemd slice (foo-bar.slice) is its last component split on '-'. */
export function parseCgroupRoot(root: string, driver: CgroupDriver): CgroupName {
  const trimmed = root.replace(/^\/+|\/+$/g, '');
  if (!trimmed) return [];
  if (driver === 'systemd' && trimmed.endsWith('.slice')) {
    const leaf = trimmed.split('/').pop()!.slice(0, -'.slice'.length);
    return leaf.split('-').map((c) => c.replaceAll('_', '-'));
  }
  return trimmed.split('/');
}

export const kubepods = (root: CgroupName): CgroupName => [...root, 'kubepods'];

export function qosCgroup(root: CgroupName, qos: QosClass): CgroupName {
  return qos === 'Guaranteed' ? kubepods(root) : [...kubepods(root), qos.toLowerCase()];
}

export function podCgroup(root: CgroupName, qos: QosClass, uid: string): CgroupName {
  return [...qosCgroup(root, qos), `pod${uid}`];
}

/** The path in a cgroup hierarchy (relative to its mount point), as each driver lays it out. */
export function cgroupPath(name: CgroupName, driver: CgroupDriver): string {
  if (driver === 'cgroupfs') return `/${name.join('/')}`;
  if (!name.length) return '/';
  // systemd: each component escaped ('-' is the slice separator), each level a slice named by all levels above it.
  const parts = name.map((c) => c.replaceAll('-', '_'));
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('-')}.slice`).join('');
}

/** What the sandbox's cgroup_parent says: the cgroupfs path, or the expanded slice path (containerd turns it into runc's slice:prefix:name). */
export const cgroupParent = (name: CgroupName, driver: CgroupDriver): string => cgroupPath(name, driver);

/** The pod uid a pod cgroup's last component names (pod<uid>, or pod<uid_> in a systemd slice). */
export function podUidOf(component: string): string | undefined {
  const m = /^(?:.*-)?pod([0-9a-fA-F_-]+?)(?:\.slice)?$/.exec(component);
  return m ? m[1]!.replaceAll('_', '-') : undefined;
}
