// The cgroup filesystem: version detection (v2 has cgroup.controllers at
// its root), creating and removing a cgroup in every hierarchy that
// manages it, and writing CPU, memory and pids settings in v1 or v2 terms.
// The mount point is a parameter, so tests run against a fake tree.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { type CgroupResources, sharesToWeight } from './pod-cgroup-config.js';

/** v1 hierarchies the kubelet writes to; runc makes the container's own cgroups in the others. */
const V1_MANAGED = ['cpu', 'cpuacct', 'memory', 'pids'];
const V2_CONTROLLERS = ['cpu', 'memory', 'pids'];

const exists = (p: string): boolean => fs.existsSync(p);

export class CgroupTree {
  readonly version: 1 | 2;

  /** False for a fake tree made of plain directories (tests). */
  private readonly isCgroupFs: boolean;

  constructor(readonly mount = '/sys/fs/cgroup') {
    this.version = exists(path.join(mount, 'cgroup.controllers')) ? 2 : 1;
    this.isCgroupFs = mount === '/sys/fs/cgroup';
  }

  /** Where one cgroup lives in each hierarchy that matters for it. */
  private dirs(cgroup: string, all = false): string[] {
    if (this.version === 2) return [path.join(this.mount, cgroup)];
    const hierarchies = all
      ? fs.readdirSync(this.mount).filter((d) => fs.statSync(path.join(this.mount, d)).isDirectory())
      : V1_MANAGED.filter((c) => exists(path.join(this.mount, c)));
    return hierarchies.map((h) => path.join(this.mount, h, cgroup));
  }

  /**
   * Creates the cgroup (and its parents), with v2's controllers enabled down the path, then applies `r`. Synchronous
   * file calls here and in set(), as runc's: a few tiny writes per pod, each several times the CPU through
   * fs/promises.
   */
  async ensure(cgroup: string, r?: CgroupResources): Promise<void> {
    for (const d of this.dirs(cgroup)) fs.mkdirSync(d, { recursive: true });
    if (this.version === 2) {
      // Each level must hand cpu, memory and pids down to its children.
      const segs = cgroup.split('/').filter(Boolean);
      for (let i = 0; i < segs.length; i++) {
        const at = path.join(this.mount, ...segs.slice(0, i));
        let available: string[] = [];
        try {
          available = fs.readFileSync(path.join(at, 'cgroup.controllers'), 'utf8').split(/\s+/);
        } catch {
          // not a cgroup directory (a fake tree): nothing to enable
        }
        const want = V2_CONTROLLERS.filter((c) => available.includes(c))
          .map((c) => `+${c}`)
          .join(' ');
        if (want) {
          try {
            fs.writeFileSync(path.join(at, 'cgroup.subtree_control'), want);
          } catch {
            // already enabled, or refused for a level we do not own: the settings below say what took
          }
        }
      }
    }
    if (r) await this.set(cgroup, r);
  }

  exists(cgroup: string): boolean {
    return exists(this.dirs(cgroup)[0] ?? path.join(this.mount, cgroup));
  }

  /** Writes the settings `r` names; undefined ones are left as they are. */
  async set(cgroup: string, r: CgroupResources): Promise<void> {
    const w = async (controller: string, file: string, v: string | number): Promise<void> => {
      const dir = this.version === 2 ? path.join(this.mount, cgroup) : path.join(this.mount, controller, cgroup);
      if (!exists(dir)) return;
      fs.writeFileSync(path.join(dir, file), String(v));
    };
    if (this.version === 1) {
      if (r.cpuShares !== undefined) await w('cpu', 'cpu.shares', r.cpuShares);
      if (r.cpuPeriod !== undefined) await w('cpu', 'cpu.cfs_period_us', r.cpuPeriod);
      if (r.cpuQuota !== undefined) await w('cpu', 'cpu.cfs_quota_us', r.cpuQuota > 0 ? r.cpuQuota : -1);
      if (r.memoryLimit !== undefined)
        await w('memory', 'memory.limit_in_bytes', r.memoryLimit > 0 ? r.memoryLimit : -1);
      if (r.pidsLimit !== undefined) await w('pids', 'pids.max', r.pidsLimit > 0 ? r.pidsLimit : 'max');
    } else {
      if (r.cpuShares !== undefined) await w('', 'cpu.weight', sharesToWeight(r.cpuShares));
      if (r.cpuQuota !== undefined || r.cpuPeriod !== undefined)
        await w('', 'cpu.max', `${r.cpuQuota && r.cpuQuota > 0 ? r.cpuQuota : 'max'} ${r.cpuPeriod ?? 100_000}`);
      if (r.memoryLimit !== undefined) await w('', 'memory.max', r.memoryLimit > 0 ? r.memoryLimit : 'max');
      if (r.pidsLimit !== undefined) await w('', 'pids.max', r.pidsLimit > 0 ? r.pidsLimit : 'max');
    }
  }

  /** Child cgroups (directory names) of a cgroup, read from the memory hierarchy (v1) or the unified one. */
  async children(cgroup: string): Promise<string[]> {
    const dir = this.version === 2 ? path.join(this.mount, cgroup) : path.join(this.mount, 'memory', cgroup);
    const ents = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
    return ents.filter((e) => e.isDirectory()).map((e) => e.name);
  }

  /** Removes the cgroup in every hierarchy, its leftover children first (cgroup directories go with rmdir, never unlink). */
  async remove(cgroup: string): Promise<void> {
    const rmTree = async (dir: string): Promise<void> => {
      const ents = await fsp.readdir(dir, { withFileTypes: true }).catch(() => undefined);
      if (!ents) return;
      for (const e of ents) if (e.isDirectory()) await rmTree(path.join(dir, e.name));
      await fsp.rmdir(dir).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return;
        // Only a plain directory (a fake tree in tests) holds real files; a cgroup's are virtual.
        if (err.code === 'ENOTEMPTY' && !this.isCgroupFs) return fsp.rm(dir, { recursive: true, force: true });
        throw err;
      });
    };
    for (const d of this.dirs(cgroup, true)) await rmTree(d);
  }

  /** Removes the cgroup where it is empty (no child cgroups); leaves it elsewhere. */
  async removeIfEmpty(cgroup: string): Promise<void> {
    for (const d of this.dirs(cgroup, true)) await fsp.rmdir(d).catch(() => undefined);
  }

  /** A file of the cgroup in one controller (v1) or the unified hierarchy. */
  async read(cgroup: string, controller: string, file: string): Promise<string | undefined> {
    const dir = this.version === 2 ? path.join(this.mount, cgroup) : path.join(this.mount, controller, cgroup);
    return fsp.readFile(path.join(dir, file), 'utf8').then(
      (s) => s.trim(),
      () => undefined,
    );
  }
}
