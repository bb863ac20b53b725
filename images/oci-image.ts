// Writes a single-layer OCI image layout from a directory tree: a gzip'd
// layer tar, a config with rootfs.diff_ids, a manifest and an index.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

import { goArch } from '../kube/platform.js';

export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  exposedPorts?: string[];
  /** The signal containerd stops the container with (SIGTERM when unset). */
  stopSignal?: string;
  /** The user the image's processes run as (a uid, or user[:group]). */
  user?: string;
}

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export { goArch };

function writeBlob(layout: string, data: Buffer): { digest: string; size: number } {
  const digest = sha(data);
  const dir = path.join(layout, 'blobs', 'sha256');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, digest.slice(7)), data);
  return { digest, size: data.length };
}

/** Builds the layout at `layout` (replacing it) and returns the manifest digest. */
export function writeOciLayout(rootfs: string, layout: string, tag: string, cfg: ImageConfig): string {
  fs.rmSync(layout, { recursive: true, force: true });
  fs.mkdirSync(layout, { recursive: true });
  // Reproducible tar: sorted names, root ownership, fixed mtime, so rebuilds give the same digests.
  const tar = execFileSync(
    'tar',
    [
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      '--format=posix',
      '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
      '-C',
      rootfs,
      '-cf',
      '-',
      '.',
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const gz = zlib.gzipSync(tar, { level: 6 });
  const layer = writeBlob(layout, gz);
  const config = {
    architecture: goArch(),
    os: 'linux',
    created: '1970-01-01T00:00:00Z',
    config: {
      Env: cfg.env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      ...(cfg.entrypoint ? { Entrypoint: cfg.entrypoint } : {}),
      ...(cfg.cmd ? { Cmd: cfg.cmd } : {}),
      ...(cfg.workingDir ? { WorkingDir: cfg.workingDir } : {}),
      ...(cfg.exposedPorts ? { ExposedPorts: Object.fromEntries(cfg.exposedPorts.map((p) => [p, {}])) } : {}),
      ...(cfg.stopSignal ? { StopSignal: cfg.stopSignal } : {}),
      ...(cfg.user ? { User: cfg.user } : {}),
    },
    rootfs: { type: 'layers', diff_ids: [sha(tar)] },
    history: [{ created: '1970-01-01T00:00:00Z', created_by: 'tskube images/oci-image.ts' }],
  };
  const cfgBlob = writeBlob(layout, Buffer.from(JSON.stringify(config)));
  const manifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...cfgBlob },
    layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', ...layer }],
  };
  const man = writeBlob(layout, Buffer.from(JSON.stringify(manifest)));
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      {
        mediaType: manifest.mediaType,
        ...man,
        platform: { architecture: goArch(), os: 'linux' },
        annotations: { 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
  fs.writeFileSync(path.join(layout, 'index.json'), JSON.stringify(index));
  fs.writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  return man.digest;
}
