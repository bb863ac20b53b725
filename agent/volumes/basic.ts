// emptyDir and hostPath volumes: the two that need no API objects.
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Container, Pod } from 'kubernetes-types/core/v1.js';
import type { ContainerConfigIn } from '../cri/types.js';

type Mounts = NonNullable<ContainerConfigIn['mounts']>;

export function podVolumesDir(rootDir: string, uid: string): string {
  return path.join(rootDir, 'pods', uid, 'volumes');
}

/** Creates the pod's volume directories; returns volume name -> host path. */
export async function setUpVolumes(pod: Pod, rootDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const v of pod.spec?.volumes ?? []) {
    if (v.emptyDir) {
      const dir = path.join(podVolumesDir(rootDir, pod.metadata!.uid!), 'kubernetes.io~empty-dir', v.name);
      await fsp.mkdir(dir, { recursive: true, mode: 0o777 });
      out.set(v.name, dir);
    } else if (v.hostPath) {
      const type = v.hostPath.type ?? '';
      if (type === 'DirectoryOrCreate') await fsp.mkdir(v.hostPath.path, { recursive: true, mode: 0o755 });
      else if (type === 'FileOrCreate') await (await fsp.open(v.hostPath.path, 'a')).close();
      out.set(v.name, v.hostPath.path);
    }
  }
  return out;
}

export function containerMounts(c: Container, volumes: Map<string, string>): Mounts {
  const mounts: Mounts = [];
  for (const m of c.volumeMounts ?? []) {
    const host = volumes.get(m.name);
    if (!host) continue;
    mounts.push({ container_path: m.mountPath, host_path: m.subPath ? path.join(host, m.subPath) : host, readonly: m.readOnly ?? false });
  }
  return mounts;
}

export async function tearDownVolumes(rootDir: string, uid: string): Promise<void> {
  await fsp.rm(path.join(rootDir, 'pods', uid), { recursive: true, force: true });
}
