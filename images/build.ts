// Builds the local test and demo images from Debian's static busybox, so no
// image ever comes from the internet. `pause` is the sandbox image; `app`
// serves HTTP on :8080 with busybox httpd.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { type ImageConfig, writeOciLayout } from './oci-image.js';

export const BUSYBOX = process.env.TSKUBE_BUSYBOX ?? '/bin/busybox';

export interface BuiltImage {
  name: string;
  tag: string;
  layout: string;
  digest: string;
}

export interface ImageSpec {
  name: string;
  tag: string;
  config: ImageConfig;
  files?: Record<string, string>;
}

export const IMAGES: ImageSpec[] = [
  // The sandbox holds the pod's namespaces; it only has to stay alive and die on SIGTERM/SIGKILL.
  { name: 'tskube/pause', tag: '1', config: { entrypoint: ['/bin/sleep', '2147483647'] } },
  {
    name: 'tskube/app',
    tag: '1',
    config: {
      cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM; httpd -f -p 8080 -h /www & wait"],
      exposedPorts: ['8080/tcp'],
    },
    files: { 'www/index.html': 'hello from tskube\n' },
  },
];

export function busyboxRootfs(dir: string, files: Record<string, string> = {}, busybox = BUSYBOX): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const d of ['bin', 'etc', 'tmp', 'proc', 'sys', 'dev', 'www', 'var/www'])
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.copyFileSync(busybox, path.join(dir, 'bin/busybox'));
  fs.chmodSync(path.join(dir, 'bin/busybox'), 0o755);
  const applets = execFileSync(busybox, ['--list'], { encoding: 'utf8' })
    .split('\n')
    .filter((a) => a && a !== 'busybox');
  for (const a of applets) fs.symlinkSync('busybox', path.join(dir, 'bin', a));
  fs.chmodSync(path.join(dir, 'tmp'), 0o1777);
  fs.writeFileSync(
    path.join(dir, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n',
  );
  fs.writeFileSync(path.join(dir, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
  for (const [p, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), content);
  }
}

export function buildImage(spec: ImageSpec, workDir: string): BuiltImage {
  const slug = spec.name.replace(/\//g, '_');
  const rootfs = path.join(workDir, `${slug}-rootfs`);
  const layout = path.join(workDir, `${slug}-oci`);
  busyboxRootfs(rootfs, spec.files);
  const digest = writeOciLayout(rootfs, layout, spec.tag, spec.config);
  fs.rmSync(rootfs, { recursive: true, force: true });
  return { name: spec.name, tag: spec.tag, layout, digest };
}

/** Push with skopeo to a plain-HTTP registry (e.g. 127.0.0.1:5000 inside a test namespace). */
export function pushImage(img: BuiltImage, registry: string, nsenterNet?: string, creds?: string): void {
  const args = [
    'copy',
    '--quiet',
    '--dest-tls-verify=false',
    ...(creds ? ['--dest-creds', creds] : []),
    `oci:${img.layout}:${img.tag}`,
    `docker://${registry}/${img.name}:${img.tag}`,
  ];
  if (nsenterNet)
    execFileSync('nsenter', [`--net=${nsenterNet}`, 'skopeo', ...args], { stdio: 'pipe', timeout: 120_000 });
  else execFileSync('skopeo', args, { stdio: 'pipe', timeout: 120_000 });
}
