// Root filesystems from Debian packages: a downloaded .deb unpacked, plus the
// shared libraries it depends on, copied from this machine's installed packages.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Package names a Depends/Pre-Depends field requires (first alternative of each; versions and arch qualifiers dropped). */
export function dependsNames(field: string): string[] {
  return field
    .split(',')
    .map((clause) => clause.split('|')[0]!.trim())
    .filter((first) => first.length > 0)
    .map((first) => first.split(/[\s(]/)[0]!.split(':')[0]!);
}

export interface PackageInfo {
  section: string;
  depends: string[];
}

/** The library packages (section libs) reachable from `roots` through their dependencies, each once, roots' order first. */
export function libraryClosure(roots: string[], info: (pkg: string) => PackageInfo | undefined): string[] {
  const out: string[] = [];
  const queue = [...roots];
  const seen = new Set<string>();
  while (queue.length) {
    const pkg = queue.shift()!;
    if (seen.has(pkg)) continue;
    seen.add(pkg);
    const i = info(pkg);
    if (!i || !/(^|\/)libs$/.test(i.section)) continue;
    out.push(pkg);
    queue.push(...i.depends);
  }
  return out;
}

/** Paths listed by `dpkg -L` worth copying into an image: not documentation or other shared data. */
export const isRuntimePath = (p: string): boolean => p.startsWith('/') && p !== '/.' && !p.startsWith('/usr/share/');

function installedInfo(pkg: string): PackageInfo | undefined {
  try {
    const [section = '', depends = '', preDepends = ''] = execFileSync(
      'dpkg-query',
      ['-W', '-f=${Section}\n${Depends}\n${Pre-Depends}', pkg],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    ).split('\n');
    return { section, depends: [...dependsNames(preDepends), ...dependsNames(depends)] };
  } catch {
    return undefined;
  }
}

/** Copies an installed package's files (directories, files, symlinks as symlinks) into `rootfs`. */
function copyInstalled(pkg: string, rootfs: string): void {
  const listed = execFileSync('dpkg', ['-L', pkg], { encoding: 'utf8' })
    .split('\n')
    .filter((p) => p && isRuntimePath(p));
  for (const p of listed) {
    const to = path.join(rootfs, p);
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory() || (st.isSymbolicLink() && fs.statSync(p, { throwIfNoEntry: false })?.isDirectory())) {
      fs.mkdirSync(to, { recursive: true });
      continue;
    }
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.rmSync(to, { force: true });
    if (st.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(p), to);
    else if (st.isFile()) fs.copyFileSync(p, to);
  }
}

/** Copies the library packages `deps` need (and theirs) from this machine into `rootfs`; returns their names. */
function copyLibraries(deps: string[], rootfs: string): string[] {
  const libs = libraryClosure(deps, installedInfo);
  for (const lib of libs) copyInstalled(lib, rootfs);
  return libs;
}

/**
 * Unpacks `debs` into `rootfs`, then copies in the libraries they depend on from this machine's
 * installed packages (which must be installed: scripts/install-deps.sh installs them).
 */
export function unpackWithLibraries(debs: string[], rootfs: string): string[] {
  const deps: string[] = [];
  for (const deb of debs) {
    if (!fs.existsSync(deb)) throw new Error(`${deb}: not downloaded (scripts/install-deps.sh downloads it)`);
    execFileSync('dpkg-deb', ['-x', deb, rootfs]);
    for (const field of ['Pre-Depends', 'Depends'])
      deps.push(...dependsNames(execFileSync('dpkg-deb', ['-f', deb, field], { encoding: 'utf8' })));
  }
  return copyLibraries(deps, rootfs);
}

/** Copies installed packages (tools such as curl or dig) and the libraries they need into `rootfs`. */
export function copyInstalledWithLibraries(pkgs: string[], rootfs: string): string[] {
  const deps: string[] = [];
  for (const pkg of pkgs) {
    const info = installedInfo(pkg);
    if (!info) throw new Error(`${pkg}: not installed (scripts/install-deps.sh installs it)`);
    copyInstalled(pkg, rootfs);
    deps.push(...info.depends);
  }
  return copyLibraries(deps, rootfs);
}
