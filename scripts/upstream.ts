// npm run upstream -- <command>: the upstream Kubernetes binaries tskube's tests
// and benchmarks run beside it, built from their Go modules (never used by tskube).
//   gen               write upstream/go.mod (k8s.io/kubernetes + one replace per staging module),
//                     upstream/etcd/go.mod and upstream/coredns/go.mod, then go mod tidy
//   build [names…]    build the named fixtures (all when none; busybox is upstream's, from source) into
//                     $TSKUBE_UPSTREAM_DIR, skipping built ones
//   path <name>       print where a fixture's binary is
//   images --registry=<host:port> [--work-dir=<dir>]
//                     build the images of the fixtures (kubeadm's control plane, the e2e suite's test images)
//                     and push them to a plain-HTTP registry under upstream's repository paths
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseFlags } from '../cli/flags.js';
import { pushImage } from '../images/build.js';
import { buildUpstreamImage, repositoryOf, upstreamImages } from '../images/upstream-images.js';
import {
  buildCommand,
  buildStamp,
  BUSYBOX_SOURCE,
  busyboxConfig,
  COREDNS_VERSION,
  debDir,
  ETCD_VERSION,
  type Fixture,
  type GoModJson,
  IMAGE_VERSIONS,
  KUBERNETES_VERSION,
  replaceArgs,
  selectFixtures,
  stagingReplaces,
  upstreamDir,
} from './upstream-plan.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'upstream');
const moduleDir = (m: Fixture['module']): string => (m === 'kubernetes' ? ROOT : path.join(ROOT, m));

function go(args: string[], cwd: string, env: Record<string, string> = {}): string {
  return execFileSync('go', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function gen(): void {
  const info = JSON.parse(go(['mod', 'download', '-json', `k8s.io/kubernetes@${KUBERNETES_VERSION}`], ROOT)) as {
    GoMod: string;
  };
  const upstreamMod = JSON.parse(go(['mod', 'edit', '-json', info.GoMod], ROOT)) as GoModJson;
  const replaces = stagingReplaces(upstreamMod);
  if (!replaces.length) throw new Error(`${info.GoMod}: no staging replace lines found`);
  // etcd's and CoreDNS's modules first: until they have their go.mod, their folders belong to the Kubernetes module.
  for (const [name, requirement] of [
    ['etcd', `go.etcd.io/etcd/server/v3@${ETCD_VERSION}`],
    ['coredns', `github.com/coredns/coredns@${COREDNS_VERSION}`],
  ] as const) {
    const dir = path.join(ROOT, name);
    fs.writeFileSync(path.join(dir, 'go.mod'), `module tskube.dev/upstream/${name}\n\ngo 1.26\n`);
    go(['mod', 'edit', `-require=${requirement}`], dir);
    go(['mod', 'tidy'], dir);
  }
  fs.writeFileSync(path.join(ROOT, 'go.mod'), 'module tskube.dev/upstream\n\ngo 1.26\n');
  go(['mod', 'edit', `-require=k8s.io/kubernetes@${KUBERNETES_VERSION}`, ...replaceArgs(replaces)], ROOT);
  go(['mod', 'tidy'], ROOT);
  console.log(
    `upstream/go.mod: k8s.io/kubernetes ${KUBERNETES_VERSION}, ${replaces.length} staging modules replaced; upstream/etcd/go.mod: etcd ${ETCD_VERSION}; upstream/coredns/go.mod: CoreDNS ${COREDNS_VERSION}`,
  );
}

/** Runs one build step; its output goes to our stderr as it comes, or to `log` when given. */
function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, log?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = log ?? 'inherit';
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', out, out] });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

const readOr = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** Upstream's busybox from BUSYBOX_SOURCE into <dir>/busybox, unless built from the same source and config. */
async function buildBusybox(dir: string): Promise<void> {
  const out = path.join(dir, 'busybox');
  const stamp = `${createHash('sha256').update(BUSYBOX_SOURCE.sha256).update(busyboxConfig.toString()).digest('hex')}\n`;
  if (fs.existsSync(out) && readOr(`${out}.stamp`) === stamp) {
    console.log(`busybox: built already, ${out}`);
    return;
  }
  const started = Date.now();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tskube-busybox-'));
  const logFile = path.join(work, 'build.log');
  const log = fs.openSync(logFile, 'w');
  try {
    const tarball = path.join(work, 'source.tar.bz2');
    execFileSync('curl', ['-fsSL', '--retry', '3', '-o', tarball, BUSYBOX_SOURCE.url], { stdio: 'inherit' });
    const sum = createHash('sha256').update(fs.readFileSync(tarball)).digest('hex');
    if (sum !== BUSYBOX_SOURCE.sha256)
      throw new Error(`${BUSYBOX_SOURCE.url}: sha256 ${sum}, expected ${BUSYBOX_SOURCE.sha256}`);
    execFileSync('tar', ['-xjf', tarball, '-C', work]);
    const src = path.join(work, `busybox-${BUSYBOX_SOURCE.version}`);
    await run('make', ['defconfig'], src, {}, log);
    const config = path.join(src, '.config');
    fs.writeFileSync(config, busyboxConfig(fs.readFileSync(config, 'utf8')));
    await run('make', [`-j${os.availableParallelism()}`], src, {}, log).catch((e: Error) => {
      throw new Error(`${e.message}:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
    });
    fs.copyFileSync(path.join(src, 'busybox'), `${out}.partial`);
    fs.renameSync(`${out}.partial`, out);
    fs.writeFileSync(`${out}.stamp`, stamp);
    console.log(`busybox: built in ${((Date.now() - started) / 1000).toFixed(0)} s, ${out}`);
  } finally {
    fs.closeSync(log);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function build(names: string[]): Promise<void> {
  const dir = upstreamDir();
  fs.mkdirSync(dir, { recursive: true });
  if (!names.length || names.includes('busybox')) await buildBusybox(dir);
  const goNames = names.filter((n) => n !== 'busybox');
  if (names.length && !goNames.length) return;
  for (const f of selectFixtures(goNames)) {
    const out = path.join(dir, f.name);
    const { args, env } = buildCommand(f, `${out}.partial`);
    // What the binary was built from: its command and its module's go.sum. Another pin rebuilds it.
    const stamp = buildStamp(args, fs.readFileSync(path.join(moduleDir(f.module), 'go.sum')));
    if (fs.existsSync(out) && readOr(`${out}.stamp`) === stamp) {
      console.log(`${f.name}: built already, ${out}`);
      continue;
    }
    const started = Date.now();
    await run('go', args, moduleDir(f.module), env);
    fs.renameSync(`${out}.partial`, out);
    fs.writeFileSync(`${out}.stamp`, stamp);
    console.log(`${f.name}: built in ${((Date.now() - started) / 1000).toFixed(0)} s, ${out}`);
  }
}

/** A file of k8s.io/kubernetes's source tree, in the Go module cache. */
function kubernetesSource(file: string): string {
  const dir = go(['list', '-m', '-f', '{{.Dir}}', 'k8s.io/kubernetes'], ROOT).trim();
  if (!dir) throw new Error(`k8s.io/kubernetes is not in the module cache (npm run upstream -- build downloads it)`);
  return path.join(dir, file);
}

/** The .deb scripts/install-deps.sh downloaded for a package. */
function downloadedDeb(pkg: string): string {
  const dir = debDir();
  const found = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .filter((f) => f.startsWith(`${pkg}_`) && f.endsWith('.deb'))
    .sort();
  if (!found.length) throw new Error(`${dir}: no ${pkg}_*.deb (scripts/install-deps.sh downloads it)`);
  return path.join(dir, found[found.length - 1]!);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'gen':
      return gen();
    case 'build':
      return build(rest);
    case 'images': {
      const f = parseFlags(rest, { registry: 'the registry to push to', 'work-dir': 'where layouts are built' });
      const registry = f.get('registry');
      if (!registry) throw new Error('usage: npm run upstream -- images --registry=<host:port> [--work-dir=<dir>]');
      const workDir = f.get('work-dir') ?? path.join(upstreamDir(), 'images');
      fs.mkdirSync(workDir, { recursive: true });
      for (const img of upstreamImages(
        IMAGE_VERSIONS,
        (n) => path.join(upstreamDir(), n),
        downloadedDeb,
        kubernetesSource,
      )) {
        const started = Date.now();
        pushImage(buildUpstreamImage(img, workDir), registry);
        console.log(
          `${img.name}:${img.tag}: pushed to ${registry}/${repositoryOf(img.name)} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      }
      return;
    }
    case 'path': {
      const [f] = selectFixtures(rest.slice(0, 1));
      if (rest.length !== 1 || !f) throw new Error('usage: npm run upstream -- path <name>');
      console.log(path.join(upstreamDir(), f.name));
      return;
    }
    default:
      throw new Error('usage: npm run upstream -- gen | build [names…] | path <name> | images --registry=<host:port>');
  }
}

main(process.argv.slice(2)).catch((e: Error) => {
  console.error(`upstream: ${e.message}`);
  process.exit(1);
});
