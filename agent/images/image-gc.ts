// Image garbage collection as upstream's image manager does it: images are
// tracked (first detected, last used by a container); when the image
// filesystem is above imageGCHighThresholdPercent, unused images — never one
// a container uses, never the sandbox image or a pinned one, never one younger
// than imageMinimumGCAge — are removed least recently used first until it is
// down to imageGCLowThresholdPercent; imageMaximumGCAge removes images unused
// for that long whatever the usage. FreeDiskSpaceFailed and ImageGCFailed
// events say when that is not enough or fails.
import type { EventRecorder } from '../../kube/events.js';
import type { Logger } from '../../kube/log.js';
import type { CriClient } from '../cri/client.js';
import type { Image } from '../cri/types.js';

export interface ImageRecord {
  firstDetected: number;
  lastUsed: number;
  size: number;
}

export interface ImageGcPolicy {
  highThresholdPercent: number;
  lowThresholdPercent: number;
  minAgeMs: number;
  /** 0: off. */
  maxAgeMs: number;
}

/** The records after one look at the runtime: new images detected now, images in use touched, removed ones forgotten. */
export function detectImages(
  prev: Map<string, ImageRecord>,
  images: { id: string; size: number }[],
  inUse: Set<string>,
  now: number,
): Map<string, ImageRecord> {
  const out = new Map<string, ImageRecord>();
  for (const img of images) {
    const p = prev.get(img.id);
    out.set(img.id, {
      firstDetected: p?.firstDetected ?? now,
      lastUsed: inUse.has(img.id) ? now : (p?.lastUsed ?? 0),
      size: img.size,
    });
  }
  return out;
}

/** Bytes to free: down to the low threshold once usage reached the high one (0 below it). */
export function bytesToFree(policy: ImageGcPolicy, fs: { capacity: number; available: number }): number {
  if (fs.capacity <= 0) return 0;
  const usagePercent = 100 - Math.floor((fs.available * 100) / fs.capacity);
  if (usagePercent < policy.highThresholdPercent) return 0;
  return Math.max(0, Math.floor((fs.capacity * (100 - policy.lowThresholdPercent)) / 100) - fs.available);
}

/**
 * Which images to remove, oldest use first (then oldest detection): unused, unpinned, not the sandbox image,
 * detected at least minAge ago; all of those unused for maxAge, and then enough of the rest to free `need` bytes.
 */
export function selectImages(
  records: Map<string, ImageRecord>,
  eligible: (id: string) => boolean,
  policy: ImageGcPolicy,
  need: number,
  now: number,
): { remove: string[]; freed: number } {
  const candidates = [...records]
    .filter(([id, r]) => eligible(id) && now - r.firstDetected >= policy.minAgeMs)
    .sort(([, a], [, b]) => a.lastUsed - b.lastUsed || a.firstDetected - b.firstDetected);
  const remove: string[] = [];
  let freed = 0;
  for (const [id, r] of candidates) {
    const tooOld = policy.maxAgeMs > 0 && now - Math.max(r.lastUsed, r.firstDetected) > policy.maxAgeMs;
    if (!tooOld && freed >= need) continue;
    remove.push(id);
    freed += r.size;
  }
  return { remove, freed };
}

export interface ImageGcDeps {
  cri: CriClient;
  /** The image filesystem's size and free space (bytes). */
  imageFs(): { capacity: number; available: number } | undefined;
  /** The sandbox (pause) image's reference, never removed. */
  sandboxImage(): Promise<string | undefined>;
  events: EventRecorder;
  nodeName: string;
  log: Logger;
}

export class ImageGcManager {
  private records = new Map<string, ImageRecord>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly policy: ImageGcPolicy,
    private readonly d: ImageGcDeps,
    private readonly periodMs = 5 * 60_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.garbageCollect().catch((e: Error) => this.gcFailed(e)), this.periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private gcFailed(e: Error): void {
    this.d.log.warn(`image garbage collection failed: ${e.message}`);
    this.d.events.event(
      { kind: 'Node', name: this.d.nodeName, uid: this.d.nodeName },
      'Warning',
      'ImageGCFailed',
      e.message,
    );
  }

  /** Lists images and containers; returns the images and who may be removed. */
  private async look(now: number): Promise<{ images: Image[]; eligible: (id: string) => boolean }> {
    const [images, containers, sandbox] = await Promise.all([
      this.d.cri.listImages(),
      this.d.cri.listContainers(),
      this.d.sandboxImage(),
    ]);
    const inUse = new Set<string>();
    for (const c of containers) {
      if (c.image_ref) inUse.add(c.image_ref);
      const byName = images.find(
        (i) =>
          i.id === c.image?.image ||
          i.repo_tags.includes(c.image?.image ?? '') ||
          i.repo_digests.includes(c.image?.image ?? ''),
      );
      if (byName) inUse.add(byName.id);
    }
    this.records = detectImages(
      this.records,
      images.map((i) => ({ id: i.id, size: Number(i.size ?? 0) })),
      inUse,
      now,
    );
    const isSandbox = (i: Image): boolean =>
      !!sandbox && (i.repo_tags.includes(sandbox) || i.repo_digests.includes(sandbox) || i.id === sandbox);
    const protectedIds = new Set(images.filter((i) => i.pinned || isSandbox(i)).map((i) => i.id));
    return { images, eligible: (id) => !inUse.has(id) && !protectedIds.has(id) };
  }

  private async remove(ids: string[]): Promise<number> {
    let n = 0;
    for (const id of ids) {
      try {
        await this.d.cri.removeImage(id);
        this.records.delete(id);
        n++;
        this.d.log.info(`image garbage collection: removed image ${id}`);
      } catch (e) {
        this.d.log.warn(`image garbage collection: removing ${id}: ${(e as Error).message}`);
      }
    }
    return n;
  }

  /** One periodic pass: images past imageMaximumGCAge, and, above the high threshold, down to the low one. */
  async garbageCollect(now = Date.now()): Promise<string[]> {
    const { eligible } = await this.look(now);
    const fs = this.d.imageFs();
    const need = fs ? bytesToFree(this.policy, fs) : 0;
    const { remove, freed } = selectImages(this.records, eligible, this.policy, need, now);
    await this.remove(remove);
    if (freed < need) {
      const msg = `Failed to garbage collect required amount of images. Attempted to free ${need} bytes, but only found ${freed} bytes eligible to free.`;
      this.d.log.warn(msg);
      this.d.events.event(
        { kind: 'Node', name: this.d.nodeName, uid: this.d.nodeName },
        'Warning',
        'FreeDiskSpaceFailed',
        msg,
      );
    }
    return remove;
  }

  /** Every unused image that may go (the eviction manager's disk reclaim), regardless of thresholds and age. */
  async deleteUnusedImages(now = Date.now()): Promise<string[]> {
    const { eligible } = await this.look(now);
    const { remove } = selectImages(this.records, eligible, { ...this.policy, minAgeMs: 0 }, Infinity, now);
    await this.remove(remove);
    return remove;
  }
}
