// Images of the upstream components (the fixtures `npm run upstream -- build` makes),
// under the names kubeadm's static pods and the e2e suite ask for, built as the
// busybox images are: one layer, written locally, never pulled. Each is pushed to
// a local registry under the same path (registry.k8s.io/kube-apiserver → <local>/kube-apiserver),
// so a containerd mirror of registry.k8s.io finds it there.
import fs from 'node:fs';
import path from 'node:path';
import { busyboxRootfs, type BuiltImage } from './build.js';
import { writeOciLayout, type ImageConfig } from './oci-image.js';

export interface UpstreamImage {
  /** Where upstream publishes it, e.g. registry.k8s.io/kube-apiserver. */
  name: string;
  tag: string;
  /** Files copied into the image: path in the image → path on this machine. */
  files: Record<string, string>;
  /** Busybox's shell and tools beside them (upstream's image has a shell too). */
  busybox: boolean;
  config: ImageConfig;
}

export interface UpstreamImageVersions {
  kubernetes: string;
  etcd: string;
  pause: string;
  agnhost: string;
  busybox: string;
}

/** The images, with the binary of each fixture taken from `bin(name)`. */
export function upstreamImages(v: UpstreamImageVersions, bin: (name: string) => string): UpstreamImage[] {
  const component = (name: string): UpstreamImage => ({
    name: `registry.k8s.io/${name}`,
    tag: v.kubernetes,
    files: { [`usr/local/bin/${name}`]: bin(name) },
    busybox: false,
    config: { entrypoint: [`/usr/local/bin/${name}`] },
  });
  return [
    component('kube-apiserver'),
    component('kube-controller-manager'),
    component('kube-scheduler'),
    { name: 'registry.k8s.io/etcd', tag: v.etcd, files: { 'usr/local/bin/etcd': bin('etcd') }, busybox: false, config: { cmd: ['/usr/local/bin/etcd'] } },
    // The sandbox only holds the pod's namespaces.
    { name: 'registry.k8s.io/pause', tag: v.pause, files: {}, busybox: true, config: { entrypoint: ['/bin/sleep', '2147483647'] } },
    { name: 'registry.k8s.io/e2e-test-images/agnhost', tag: v.agnhost, files: { agnhost: bin('agnhost') }, busybox: true, config: { entrypoint: ['/agnhost'] } },
    { name: 'registry.k8s.io/e2e-test-images/busybox', tag: v.busybox, files: {}, busybox: true, config: { cmd: ['/bin/sh'] } },
  ];
}

/** The image's path in a registry, without the registry host: registry.k8s.io/e2e-test-images/agnhost → e2e-test-images/agnhost. */
export const repositoryOf = (name: string): string => name.slice(name.indexOf('/') + 1);

/** A root filesystem with just the files and the passwd/group entries a Go binary may look up. */
function minimalRootfs(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const d of ['etc', 'tmp', 'var/run']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.chmodSync(path.join(dir, 'tmp'), 0o1777);
  fs.writeFileSync(path.join(dir, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n');
  fs.writeFileSync(path.join(dir, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
}

/** Writes one image's OCI layout under `workDir`. */
export function buildUpstreamImage(img: UpstreamImage, workDir: string): BuiltImage {
  const slug = `${img.name.replace(/[/:]/g, '_')}_${img.tag}`;
  const rootfs = path.join(workDir, `${slug}-rootfs`);
  const layout = path.join(workDir, `${slug}-oci`);
  if (img.busybox) busyboxRootfs(rootfs);
  else minimalRootfs(rootfs);
  for (const [inImage, from] of Object.entries(img.files)) {
    const to = path.join(rootfs, inImage);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    fs.chmodSync(to, 0o755);
  }
  const digest = writeOciLayout(rootfs, layout, img.tag, img.config);
  fs.rmSync(rootfs, { recursive: true, force: true });
  return { name: repositoryOf(img.name), tag: img.tag, layout, digest };
}
