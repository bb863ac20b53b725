// Sets up a pod's volumes before its containers start, keeps configMap,
// secret, downwardAPI and projected contents current (ConfigMap and Secret
// updates, token rotation) with a periodic resync, and tears everything down
// (unmounting tmpfs) when the pod is gone.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { Container, Pod, Volume } from 'kubernetes-types/core/v1.js';

import type { KObj } from '../../kube/client.js';
import type { Logger } from '../../kube/log.js';
import { checkUid } from '../../kube/validation.js';
import type { ContainerConfigIn } from '../cri/types.js';
import type { DownwardContext } from '../pods/downward-api.js';
import { expand } from '../pods/env.js';
import { ApiObjects } from './api-objects.js';
import { writeAtomic } from './atomic-writer.js';
import { setUpEmptyDir, setUpHostPath, setVolumeOwnership } from './host-volumes.js';
import { isMountPoint, mountTmpfs, unmountAll } from './mounts.js';
import type { PodCertificates } from './pod-certificates.js';
import { VolumeError, volumeFiles } from './projections.js';
import { mountSubPath, SubPathError, subPathTarget } from './subpath.js';

type Mounts = NonNullable<ContainerConfigIn['mounts']>;

/** A volume that could not be set up: the pod waits in ContainerCreating with a FailedMount event. */
export class MountError extends Error {
  constructor(
    readonly volume: string,
    readonly detail: string,
  ) {
    super(`MountVolume.SetUp failed for volume "${volume}" : ${detail}`);
  }
}

export interface SetUpVolume {
  hostPath: string;
  /** configMap, secret, downwardAPI and projected volumes are mounted read-only. */
  readOnly: boolean;
  /** A claim's volume whose plugin manages ownership (local; not hostPath). */
  ownershipManaged?: boolean;
}

const PLUGIN: [keyof Volume, string][] = [
  ['emptyDir', 'empty-dir'],
  ['configMap', 'configmap'],
  ['secret', 'secret'],
  ['downwardAPI', 'downward-api'],
  ['projected', 'projected'],
];

/** <root-dir>/pods/<uid>; a uid that is not one safe path element is refused, so no pod path leaves the root dir. */
export function podDir(rootDir: string, uid: string): string {
  const bad = checkUid(uid);
  if (bad) throw new Error(`pod uid ${JSON.stringify(uid)}: ${bad}`);
  return path.join(rootDir, 'pods', uid);
}

/** Makes a directory only root may enter (upstream: pod and volume directories are 0750). */
function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o750 });
  fs.chmodSync(dir, 0o750);
}

export interface VolumeManagerOptions {
  rootDir: string;
  log: Logger;
  objects?: ApiObjects;
  /** Resync of API-backed contents; upstream's default syncFrequency is a minute. */
  resyncMs?: number;
  /** podCertificate sources (a kubelet with an apiserver). */
  podCertificates?: PodCertificates;
}

/** PersistentVolumeSpec fields that are not the volume source. */
const PV_FIELDS = new Set([
  'capacity',
  'accessModes',
  'claimRef',
  'persistentVolumeReclaimPolicy',
  'storageClassName',
  'mountOptions',
  'volumeMode',
  'nodeAffinity',
  'volumeAttributesClassName',
]);

export class VolumeManager {
  readonly objects: ApiObjects;
  /**
   * Pods whose volumes this kubelet run has set up, with the context their files were made with (the resync keeps
   * the API-backed ones current). As upstream's actual state of the world, every later sync of the pod reuses them
   * instead of checking the mount table again (a read of every mount on the node per volume and sync, which made a
   * scale-up quadratic in pods); a new kubelet starts empty and checks each pod once.
   */
  private readonly live = new Map<string, { pod: Pod; ctx: DownwardContext; volumes: Map<string, SetUpVolume> }>();
  private timer: NodeJS.Timeout | undefined;
  private resyncing = false;

  get rootDir(): string {
    return this.o.rootDir;
  }

  constructor(private readonly o: VolumeManagerOptions) {
    this.objects = o.objects ?? new ApiObjects();
  }

  start(): void {
    this.timer = setInterval(() => void this.resync(), this.o.resyncMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private volumeDir(uid: string, v: Volume): string {
    const plugin = PLUGIN.find(([k]) => v[k] !== undefined)?.[1] ?? 'unknown';
    return path.join(podDir(this.o.rootDir, uid), 'volumes', `kubernetes.io~${plugin}`, v.name);
  }

  /** Every volume of the pod, by name; throws MountError naming the first that fails. */
  async setUp(pod: Pod, ctx: DownwardContext): Promise<Map<string, SetUpVolume>> {
    const uid = pod.metadata!.uid!;
    const known = this.live.get(uid);
    if (known) {
      this.update(pod, ctx);
      return known.volumes;
    }
    const out = new Map<string, SetUpVolume>();
    // Host users must not read pod volumes (tokens, secrets): the pod and volumes directories are root's alone.
    privateDir(podDir(this.o.rootDir, uid));
    privateDir(path.join(podDir(this.o.rootDir, uid), 'volumes'));
    for (const v of pod.spec?.volumes ?? []) {
      try {
        if (v.hostPath) out.set(v.name, { hostPath: await setUpHostPath(v), readOnly: false });
        else if (v.emptyDir) {
          const dir = this.volumeDir(uid, v);
          privateDir(path.dirname(dir));
          await setUpEmptyDir(v, dir);
          out.set(v.name, { hostPath: dir, readOnly: false });
        } else if (v.configMap || v.secret || v.downwardAPI || v.projected) {
          const dir = this.volumeDir(uid, v);
          privateDir(path.dirname(dir));
          const tmpfs = !!(v.secret || v.projected);
          // Set up before (this kubelet, or one before a restart): the resync keeps it current, and a pod whose
          // apiserver is away must still be able to restart its containers.
          if (!populated(dir, tmpfs)) {
            // Secrets and tokens never touch the disk.
            if (tmpfs) await mountTmpfs(dir);
            await writeAtomic(dir, await volumeFiles(pod, v as KObj, this.objects, ctx, this.o.podCertificates));
          }
          out.set(v.name, { hostPath: dir, readOnly: true });
        } else if (v.persistentVolumeClaim) out.set(v.name, await this.claimVolume(pod, v));
        else
          throw new VolumeError(
            `volume type of ${JSON.stringify(Object.keys(v).filter((k) => k !== 'name'))} is not supported by this kubelet`,
          );
      } catch (e) {
        throw new MountError(v.name, (e as Error).message);
      }
    }
    // fsGroup, for the volume types whose ownership upstream manages (not hostPath), once per pod and kubelet run.
    const fsGroup = pod.spec?.securityContext?.fsGroup;
    if (fsGroup !== undefined) {
      for (const v of pod.spec?.volumes ?? []) {
        const set = out.get(v.name);
        if (!set || v.hostPath || (v.persistentVolumeClaim && !set.ownershipManaged)) continue;
        await setVolumeOwnership(
          set.hostPath,
          fsGroup,
          set.readOnly,
          pod.spec?.securityContext?.fsGroupChangePolicy,
        ).catch((e: Error) => {
          throw new MountError(v.name, `applying fsGroup ${fsGroup}: ${e.message}`);
        });
      }
    }
    this.live.set(uid, { pod, ctx, volumes: out });
    return out;
  }

  /** A claim's bound PersistentVolume: hostPath (with its type check) or local (which must exist), as upstream's plugins. */
  private async claimVolume(pod: Pod, v: Volume): Promise<SetUpVolume> {
    const ns = pod.metadata!.namespace ?? 'default';
    const name = v.persistentVolumeClaim!.claimName;
    const claim = await this.objects.claim(ns, name);
    if (!claim)
      throw new VolumeError(
        `error processing PVC ${ns}/${name}: failed to fetch PVC from API server: persistentvolumeclaims "${name}" not found`,
      );
    if (claim.status?.phase !== 'Bound' || !claim.spec?.volumeName)
      throw new VolumeError(
        `PVC ${ns}/${name} has non-bound phase (${JSON.stringify(claim.status?.phase ?? '')}) or empty pvc.Spec.VolumeName (${JSON.stringify(claim.spec?.volumeName ?? '')})`,
      );
    const pv = await this.objects.volume(claim.spec.volumeName);
    if (!pv)
      throw new VolumeError(
        `error processing PVC ${ns}/${name}: failed to fetch PV ${claim.spec.volumeName} from API server: persistentvolumes "${claim.spec.volumeName}" not found`,
      );
    const readOnly = v.persistentVolumeClaim!.readOnly === true;
    if (pv.spec?.hostPath)
      return { hostPath: await setUpHostPath({ name: v.name, hostPath: pv.spec.hostPath }), readOnly };
    if (pv.spec?.local?.path) {
      if (!fs.existsSync(pv.spec.local.path)) throw new VolumeError(`path "${pv.spec.local.path}" does not exist`);
      return { hostPath: path.resolve(pv.spec.local.path), readOnly, ownershipManaged: true };
    }
    throw new VolumeError(
      `persistentvolume "${pv.metadata.name}": volume type of ${JSON.stringify(Object.keys(pv.spec ?? {}).filter((k) => !PV_FIELDS.has(k)))} is not supported by this kubelet`,
    );
  }

  /** Rewrites API-backed volumes whose source changed (ConfigMap edits, token rotation). */
  async resync(): Promise<void> {
    // A slow apiserver can make one pass outlast the period: passes never overlap.
    if (this.resyncing) return;
    this.resyncing = true;
    try {
      await this.objects.inPass(() => this.resyncAll());
    } finally {
      this.resyncing = false;
    }
  }

  private async resyncAll(): Promise<void> {
    for (const [uid, { pod, ctx }] of this.live) {
      for (const v of pod.spec?.volumes ?? []) {
        if (!(v.configMap || v.secret || v.downwardAPI || v.projected)) continue;
        try {
          if (
            await writeAtomic(
              this.volumeDir(uid, v),
              await volumeFiles(pod, v as KObj, this.objects, ctx, this.o.podCertificates),
            )
          ) {
            this.o.log.info(`volume ${v.name} of pod ${pod.metadata!.namespace!}/${pod.metadata!.name!} updated`, {
              podUID: uid,
            });
            const fsGroup = pod.spec?.securityContext?.fsGroup;
            if (fsGroup !== undefined) await setVolumeOwnership(this.volumeDir(uid, v), fsGroup, true, undefined);
          }
        } catch (e) {
          this.o.log.warn(
            `resync of volume ${v.name} of pod ${pod.metadata!.namespace!}/${pod.metadata!.name!} failed: ${(e as Error).message}`,
            { podUID: uid },
          );
        }
      }
    }
  }

  /** Newer spec or context (e.g. the pod IP once known) for the resync. */
  update(pod: Pod, ctx: DownwardContext): void {
    const uid = pod.metadata!.uid!;
    const known = this.live.get(uid);
    if (known) this.live.set(uid, { ...known, pod, ctx });
  }

  async tearDown(uid: string): Promise<void> {
    this.live.delete(uid);
    this.objects.forgetPod(uid);
    this.o.podCertificates?.forgetPod(uid);
    const dir = podDir(this.o.rootDir, uid);
    await unmountAll(dir);
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/** Whether a volume directory already has contents (and its tmpfs, where it needs one). */
function populated(dir: string, tmpfs: boolean): boolean {
  try {
    fs.lstatSync(path.join(dir, '..data'));
  } catch {
    return false;
  }
  return !tmpfs || isMountPoint(dir);
}

/** Container mount propagation as CRI's enum (Bidirectional only for privileged containers, as upstream). */
const PROPAGATION: Record<string, 0 | 1 | 2> = { None: 0, HostToContainer: 1, Bidirectional: 2 };

/**
 * CRI mounts of one container, read-only where the volume or the mount says so. A subPath (or a subPathExpr
 * expanded with the container's environment) is bind-mounted from inside its volume first (see subpath.ts);
 * one that leaves the volume throws SubPathError.
 */
export async function containerMounts(
  podDirPath: string,
  c: Container,
  volumes: Map<string, SetUpVolume>,
  env: Map<string, string> = new Map(),
): Promise<Mounts> {
  const mounts: Mounts = [];
  for (const [i, m] of (c.volumeMounts ?? []).entries()) {
    const v = volumes.get(m.name);
    if (!v) continue;
    let hostPath = v.hostPath;
    const sub = m.subPathExpr ? expand(m.subPathExpr, env) : m.subPath;
    if (m.subPathExpr && (path.isAbsolute(sub!) || sub!.split('/').includes('..'))) {
      throw new SubPathError(
        `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(c.name)}: subPathExpr ${JSON.stringify(m.subPathExpr)} expands to ${JSON.stringify(sub)}, which must be a relative path without '..'`,
      );
    }
    if (sub) {
      try {
        hostPath = await mountSubPath(v.hostPath, sub, subPathTarget(podDirPath, m.name, c.name, i));
      } catch (e) {
        throw new SubPathError(
          `failed to prepare subPath for volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(c.name)}: ${(e as Error).message}`,
        );
      }
    }
    const propagation = PROPAGATION[m.mountPropagation ?? 'None'] ?? 0;
    if (propagation === 2 && !c.securityContext?.privileged)
      throw new SubPathError(
        `Bidirectional mount propagation is available only to privileged containers (volumeMount ${JSON.stringify(m.name)} of container ${JSON.stringify(c.name)})`,
      );
    mounts.push({
      container_path: m.mountPath,
      host_path: hostPath,
      readonly: (m.readOnly ?? false) || v.readOnly,
      ...(propagation ? { propagation } : {}),
    });
  }
  return mounts;
}
