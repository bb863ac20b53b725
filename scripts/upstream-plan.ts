// What the upstream fixtures are and how each is built: the pinned releases, the
// replace lines for k8s.io/kubernetes's staging modules, the version ldflags and
// one build command per binary. Pure; scripts/upstream.ts runs it.
import { createHash } from 'node:crypto';
import path from 'node:path';

import { KUBERNETES_VERSION } from '../kube/version.js';

export { KUBERNETES_VERSION };
/** Staging modules are tagged v0.<minor>.<patch> for Kubernetes v1.<minor>.<patch>. */
export const STAGING_VERSION = KUBERNETES_VERSION.replace(/^v1\./, 'v0.');
/** kubeadm v1.37's etcd (its DefaultEtcdVersion, image tag 3.7.0-0). */
export const ETCD_VERSION = 'v3.7.0';
/** CoreDNS's newest release the module proxy serves (kubeadm v1.37 deploys CoreDNS; the DNS benchmark's anchor). */
export const COREDNS_VERSION = 'v1.15.0';

/** Tags of the images built from the fixtures: kubeadm's for the control plane, the e2e suite's for its test images. */
export const IMAGE_VERSIONS = {
  kubernetes: KUBERNETES_VERSION,
  etcd: `${ETCD_VERSION.slice(1)}-0`,
  pause: '3.10.2',
  agnhost: '2.66.1',
  agnhostPrev: '2.55',
  busybox: '1.37.0-2',
  nginx: ['1.27.0-2', '1.28.0-2'] as [string, string],
  glibcDnsTesting: '2.1.1',
  nonroot: '1.5',
  nonewprivs: '1.4',
  kitten: '1.8',
  nautilus: '1.8',
  sampleApiserver: '1.29.2',
};

/**
 * Upstream's busybox, as in the e2e suite's busybox image (Docker's busybox:1.37.0), built from the original source
 * Debian's pool keeps. Debian's own build is patched: its shell drops environment variables whose names are not
 * identifiers (`data-1`), which the suite's envFrom tests print with `sh -c env`.
 */
export const BUSYBOX_SOURCE = {
  version: '1.37.0',
  url: 'http://deb.debian.org/debian/pool/main/b/busybox/busybox_1.37.0.orig.tar.bz2',
  sha256: '3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4',
};

/**
 * busybox's .config from its defconfig: a static binary; no tc, whose CBQ code does not build against the kernel
 * headers of Linux 6.8 and later (Debian leaves it out too).
 */
export function busyboxConfig(defconfig: string): string {
  const set = (text: string, key: string, on: boolean): string => {
    const re = new RegExp(`^(# )?${key}(=.*| is not set)$`, 'm');
    if (!re.test(text)) throw new Error(`busybox defconfig has no ${key}`);
    return text.replace(re, on ? `${key}=y` : `# ${key} is not set`);
  };
  return set(set(defconfig, 'CONFIG_STATIC', true), 'CONFIG_TC', false);
}

/** Where scripts/install-deps.sh downloads the Debian packages the test images are built from. */
export const debDir = (): string => process.env.TSKUBE_DEB_DIR ?? '/var/cache/tskube/debs';

/** `go mod edit -json`'s view of a go.mod (the fields read here). */
export interface GoModJson {
  Module?: { Path: string };
  Replace?: { Old: { Path: string; Version?: string }; New: { Path: string; Version?: string } }[];
}

/**
 * k8s.io/kubernetes replaces each staging module with a directory of its own tree
 * (`k8s.io/api => ./staging/src/k8s.io/api`); a module that requires it replaces each
 * with the published module at the staging version instead.
 */
export function stagingReplaces(
  kubernetesMod: GoModJson,
  version = STAGING_VERSION,
): { path: string; version: string }[] {
  return (kubernetesMod.Replace ?? [])
    .filter((r) => !r.New.Version && r.New.Path.replace(/^\.\//, '') === `staging/src/${r.Old.Path}`)
    .map((r) => ({ path: r.Old.Path, version }))
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** The -replace arguments of `go mod edit` for those. */
export const replaceArgs = (replaces: { path: string; version: string }[]): string[] =>
  replaces.map((r) => `-replace=${r.path}=${r.path}@${r.version}`);

/** hack/lib/version.sh's -X flags, for both packages that report the version. */
export function versionLdflags(version = KUBERNETES_VERSION, buildDate = '1970-01-01T00:00:00Z'): string {
  const m = /^v(\d+)\.(\d+)\.\d+/.exec(version);
  if (!m) throw new Error(`not a release version: ${version}`);
  const vars: Record<string, string> = {
    gitVersion: version,
    gitMajor: m[1]!,
    gitMinor: m[2]!,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate,
  };
  const pkgs = ['k8s.io/client-go/pkg/version', 'k8s.io/component-base/version'];
  return pkgs.flatMap((p) => Object.entries(vars).map(([k, v]) => `-X ${p}.${k}=${v}`)).join(' ');
}

export interface Fixture {
  name: string;
  /** Which Go module folder under upstream/ builds it. */
  module: 'kubernetes' | 'etcd' | 'coredns';
  pkg: string;
  /** A test binary (`go test -c`) rather than a command. */
  test?: boolean;
}

export const FIXTURES: readonly Fixture[] = [
  { name: 'etcd', module: 'etcd', pkg: 'go.etcd.io/etcd/server/v3' },
  { name: 'kube-apiserver', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kube-apiserver' },
  { name: 'kube-controller-manager', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager' },
  { name: 'kube-scheduler', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kube-scheduler' },
  { name: 'kubeadm', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kubeadm' },
  { name: 'kubectl', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kubectl' },
  { name: 'kubelet', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kubelet' },
  { name: 'kube-proxy', module: 'kubernetes', pkg: 'k8s.io/kubernetes/cmd/kube-proxy' },
  { name: 'e2e.test', module: 'kubernetes', pkg: 'k8s.io/kubernetes/test/e2e', test: true },
  { name: 'agnhost', module: 'kubernetes', pkg: 'k8s.io/kubernetes/test/images/agnhost' },
  // The nonewprivs image's program.
  { name: 'nnp', module: 'kubernetes', pkg: 'k8s.io/kubernetes/test/images/nonewprivs' },
  // The aggregator test's extension apiserver (upstream's image builds the same module at an older tag).
  { name: 'sample-apiserver', module: 'kubernetes', pkg: 'k8s.io/sample-apiserver' },
  // The e2e suite's runner, for parallel runs (its version is the one k8s.io/kubernetes requires).
  { name: 'ginkgo', module: 'kubernetes', pkg: 'github.com/onsi/ginkgo/v2/ginkgo' },
  { name: 'coredns', module: 'coredns', pkg: 'github.com/coredns/coredns' },
];

/** The fixtures named (all when none), or an error naming the unknown ones. */
export function selectFixtures(names: string[]): Fixture[] {
  if (!names.length) return [...FIXTURES];
  const unknown = names.filter((n) => !FIXTURES.some((f) => f.name === n));
  if (unknown.length)
    throw new Error(`unknown fixture(s): ${unknown.join(', ')} (known: ${FIXTURES.map((f) => f.name).join(', ')})`);
  return FIXTURES.filter((f) => names.includes(f.name));
}

/** Where the binaries go: $TSKUBE_UPSTREAM_DIR, else /var/cache/tskube/upstream/<release>. */
export const upstreamDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.TSKUBE_UPSTREAM_DIR || path.join('/var/cache/tskube/upstream', KUBERNETES_VERSION);

/** Identifies a build: the go arguments (the output path aside) and the module's go.sum. */
export function buildStamp(args: string[], goSum: Buffer | string): string {
  const out = args.indexOf('-o');
  const stable = args.filter((_, i) => i !== out + 1);
  return `${createHash('sha256').update(JSON.stringify(stable)).update(goSum).digest('hex')}\n`;
}

/** The go command that builds one fixture into `out`, run in its module's folder. */
export function buildCommand(f: Fixture, out: string): { args: string[]; env: Record<string, string> } {
  const ldflags = f.module === 'kubernetes' ? ['-ldflags', `-s -w ${versionLdflags()}`] : ['-ldflags', '-s -w'];
  const args = f.test
    ? ['test', '-c', '-trimpath', ...ldflags, '-o', out, f.pkg]
    : ['build', '-trimpath', ...ldflags, '-o', out, f.pkg];
  return { args, env: { CGO_ENABLED: '0', GOFLAGS: '-mod=mod -buildvcs=false' } };
}
