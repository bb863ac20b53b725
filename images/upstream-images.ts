// Images of the upstream components (the fixtures `npm run upstream -- build` makes),
// under the names kubeadm's static pods and the e2e suite ask for, built as the
// busybox images are: one layer, written locally, never pulled. Each is pushed to
// a local registry under the same path (registry.k8s.io/kube-apiserver → <local>/kube-apiserver),
// so a containerd mirror of registry.k8s.io finds it there.
import fs from 'node:fs';
import path from 'node:path';

import { type BuiltImage, busyboxRootfs } from './build.js';
import { copyInstalledWithLibraries, unpackWithLibraries } from './debian-packages.js';
import { type ImageConfig, writeOciLayout } from './oci-image.js';

export interface UpstreamImage {
  /** Where upstream publishes it, e.g. registry.k8s.io/kube-apiserver. */
  name: string;
  tag: string;
  /** Files copied into the image: path in the image → path on this machine. */
  files: Record<string, string>;
  /** Busybox's shell and tools beside them (upstream's image has a shell too). */
  busybox: boolean;
  /** The busybox binary when not this machine's (Debian's): upstream's build, for images that are upstream's busybox. */
  busyboxBinary?: string;
  /** File modes other than 0755: path in the image → mode (a setuid bit, say). */
  modes?: Record<string, number>;
  /** Debian packages (.deb files) unpacked into it, with the libraries they need from this machine. */
  debs?: string[];
  /** Packages installed on this machine copied into it (tools upstream's image has), with their libraries. */
  installed?: string[];
  /** Symbolic links: path in the image → target. */
  links?: Record<string, string>;
  /** Files written into it: path in the image → content. */
  contents?: Record<string, string>;
  /** Empty directories it needs. */
  dirs?: string[];
  config: ImageConfig;
}

export interface UpstreamImageVersions {
  kubernetes: string;
  etcd: string;
  pause: string;
  agnhost: string;
  /** The suite's previous agnhost tag (tests that change a pod's image switch between the two). */
  agnhostPrev: string;
  busybox: string;
  glibcDnsTesting: string;
  nonroot: string;
  nonewprivs: string;
  kitten: string;
  nautilus: string;
  sampleApiserver: string;
  /** The e2e suite's nginx and "new" nginx tags (its rolling updates switch from one to the other). */
  nginx: [string, string];
}

// As upstream's nginx image: the default site on :80, logs to the container's stdout and stderr.
const NGINX_CONF = `user www-data;
worker_processes 1;
pid /run/nginx.pid;
error_log /dev/stderr notice;
events {
  worker_connections 1024;
}
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log /dev/stdout;
  sendfile on;
  keepalive_timeout 65;
  include /etc/nginx/conf.d/*.conf;
}
`;
const NGINX_SITE = `server {
  listen 80;
  server_name localhost;
  location / {
    root /usr/share/nginx/html;
    index index.html;
  }
}
`;

// agnhost's image users and groups, beside busybox's.
const AGNHOST_PASSWD =
  'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\nuser-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n';
const AGNHOST_GROUP =
  'root:x:0:\nnogroup:x:65534:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n';

/**
 * The images, with the binary of each fixture taken from `bin(name)`, each Debian package's
 * downloaded .deb from `deb(package)` and files of upstream's source tree from `src(path)`.
 */
export function upstreamImages(
  v: UpstreamImageVersions,
  bin: (name: string) => string,
  deb: (pkg: string) => string,
  src: (file: string) => string,
): UpstreamImage[] {
  // As upstream's agnhost image: its tools (curl, dig, nc, ip, bash, socat, getent), porter's certificate, /uploads, the
  // agnhost-2 link, its users, and `pause` when run without arguments. The previous tag holds the same agnhost: the
  // suite needs a second name, not an older binary.
  const agnhost = (tag: string): UpstreamImage => ({
    name: 'registry.k8s.io/e2e-test-images/agnhost',
    tag,
    files: {
      agnhost: bin('agnhost'),
      'localhost.crt': src('test/images/agnhost/porter/localhost.crt'),
      'localhost.key': src('test/images/agnhost/porter/localhost.key'),
    },
    busybox: true,
    installed: ['curl', 'bind9-dnsutils', 'iproute2', 'bash', 'dash', 'netcat-openbsd', 'socat', 'libc-bin'],
    // Debian's nc is an alternative (a link dpkg does not list); busybox's is in /bin. Debian's busybox shell runs
    // its own applets before anything on PATH, so sh is dash, as on Debian (and ash without applets on Alpine).
    links: { 'agnhost-2': 'agnhost', 'usr/local/bin/nc': '/bin/nc.openbsd', 'bin/sh': 'dash' },
    contents: {
      'etc/passwd': AGNHOST_PASSWD,
      'etc/group': AGNHOST_GROUP,
      'etc/nsswitch.conf': 'hosts: files dns\n',
    },
    dirs: ['uploads', 'home/user-defined-in-image'],
    config: {
      entrypoint: ['/agnhost'],
      cmd: ['pause'],
      exposedPorts: ['80/tcp', '8080/tcp', '8081/tcp', '9376/tcp', '5000/tcp'],
    },
  });
  // Debian's nginx (the e2e suite only needs an HTTP server on :80 with nginx's welcome page), under both of the suite's tags.
  const nginx = (tag: string): UpstreamImage => ({
    name: 'registry.k8s.io/e2e-test-images/nginx',
    tag,
    files: {},
    busybox: true,
    debs: [deb('nginx'), deb('nginx-common')],
    contents: {
      'etc/nginx/nginx.conf': NGINX_CONF,
      'etc/nginx/conf.d/default.conf': NGINX_SITE,
      'etc/passwd':
        'root:x:0:0:root:/root:/bin/sh\nwww-data:x:33:33:www-data:/var/www:/bin/false\nnobody:x:65534:65534:nobody:/:/bin/false\n',
      'etc/group': 'root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\n',
    },
    dirs: ['var/log/nginx', 'var/lib/nginx', 'run'],
    config: { cmd: ['/usr/sbin/nginx', '-g', 'daemon off;'], exposedPorts: ['80/tcp'], stopSignal: 'SIGQUIT' },
  });
  // The kubectl Update Demo's images: agnhost's file server with a picture and the data.json naming it, at /.
  const demo = (name: 'kitten' | 'nautilus', tag: string): UpstreamImage => {
    const base = agnhost(tag);
    return {
      ...base,
      name: `registry.k8s.io/e2e-test-images/${name}`,
      files: {
        ...base.files,
        [`${name}.jpg`]: src(`test/images/${name}/html/${name}.jpg`),
        'data.json': src(`test/images/${name}/html/data.json`),
      },
      modes: { [`${name}.jpg`]: 0o644, 'data.json': 0o644 },
      config: { ...base.config, cmd: ['test-webserver'] },
    };
  };
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
    {
      name: 'registry.k8s.io/etcd',
      tag: v.etcd,
      files: { 'usr/local/bin/etcd': bin('etcd') },
      busybox: false,
      config: { cmd: ['/usr/local/bin/etcd'] },
    },
    // Holds the pod's namespaces, and exits at once on SIGTERM or SIGINT as upstream's pause does (as PID 1 a plain
    // sleep would ignore them and wait for the grace period's SIGKILL; the e2e suite also runs it as a container).
    {
      name: 'registry.k8s.io/pause',
      tag: v.pause,
      files: {},
      busybox: true,
      config: { entrypoint: ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep 2147483647 & wait"] },
    },
    agnhost(v.agnhost),
    agnhost(v.agnhostPrev),
    {
      name: 'registry.k8s.io/e2e-test-images/busybox',
      tag: v.busybox,
      files: {},
      busybox: true,
      busyboxBinary: bin('busybox'),
      config: { cmd: ['/bin/sh'] },
    },
    nginx(v.nginx[0]),
    nginx(v.nginx[1]),
    // The DNS tests' glibc resolver: upstream's is Debian with dnsutils (dig) and libc's getent.
    {
      name: 'registry.k8s.io/e2e-test-images/glibc-dns-testing',
      tag: v.glibcDnsTesting,
      files: {},
      busybox: true,
      installed: ['bind9-dnsutils', 'libc-bin'],
      contents: { 'etc/nsswitch.conf': 'hosts: files dns\n' },
      config: { cmd: ['/bin/sh'] },
    },
    // The security-context tests' image whose own user is not root (upstream's: its base image with USER 1234).
    {
      name: 'registry.k8s.io/e2e-test-images/nonroot',
      tag: v.nonroot,
      files: {},
      busybox: true,
      config: { cmd: ['/bin/sh'], user: '1234' },
    },
    // Prints its effective UID; setuid root, so it shows whether no_new_privs kept the bit from taking effect.
    {
      name: 'registry.k8s.io/e2e-test-images/nonewprivs',
      tag: v.nonewprivs,
      files: { 'usr/local/bin/nnp': bin('nnp') },
      busybox: true,
      busyboxBinary: bin('busybox'),
      modes: { 'usr/local/bin/nnp': 0o4755 },
      config: { cmd: ['nnp'] },
    },
    demo('kitten', v.kitten),
    demo('nautilus', v.nautilus),
    {
      name: 'registry.k8s.io/e2e-test-images/sample-apiserver',
      tag: v.sampleApiserver,
      files: { 'sample-apiserver': bin('sample-apiserver') },
      busybox: false,
      config: { entrypoint: ['/sample-apiserver'] },
    },
  ];
}

/** The image's path in a registry, without the registry host: registry.k8s.io/e2e-test-images/agnhost → e2e-test-images/agnhost. */
export const repositoryOf = (name: string): string => name.slice(name.indexOf('/') + 1);

/** A root filesystem with just the files and the passwd/group entries a Go binary may look up. */
function minimalRootfs(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const d of ['etc', 'tmp', 'var/run']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.chmodSync(path.join(dir, 'tmp'), 0o1777);
  fs.writeFileSync(
    path.join(dir, 'etc/passwd'),
    'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n',
  );
  fs.writeFileSync(path.join(dir, 'etc/group'), 'root:x:0:\nnogroup:x:65534:\n');
}

/** Writes one image's OCI layout under `workDir`. */
export function buildUpstreamImage(img: UpstreamImage, workDir: string): BuiltImage {
  const slug = `${img.name.replace(/[/:]/g, '_')}_${img.tag}`;
  const rootfs = path.join(workDir, `${slug}-rootfs`);
  const layout = path.join(workDir, `${slug}-oci`);
  if (img.busybox) busyboxRootfs(rootfs, {}, img.busyboxBinary);
  else minimalRootfs(rootfs);
  for (const [inImage, from] of Object.entries(img.files)) {
    const to = path.join(rootfs, inImage);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    fs.chmodSync(to, img.modes?.[inImage] ?? 0o755);
  }
  if (img.debs) unpackWithLibraries(img.debs, rootfs);
  if (img.installed) copyInstalledWithLibraries(img.installed, rootfs);
  for (const [inImage, target] of Object.entries(img.links ?? {})) {
    fs.mkdirSync(path.dirname(path.join(rootfs, inImage)), { recursive: true });
    fs.rmSync(path.join(rootfs, inImage), { force: true });
    fs.symlinkSync(target, path.join(rootfs, inImage));
  }
  for (const [inImage, content] of Object.entries(img.contents ?? {})) {
    fs.mkdirSync(path.dirname(path.join(rootfs, inImage)), { recursive: true });
    fs.writeFileSync(path.join(rootfs, inImage), content);
  }
  for (const d of img.dirs ?? []) fs.mkdirSync(path.join(rootfs, d), { recursive: true });
  const digest = writeOciLayout(rootfs, layout, img.tag, img.config);
  fs.rmSync(rootfs, { recursive: true, force: true });
  return { name: repositoryOf(img.name), tag: img.tag, layout, digest };
}
