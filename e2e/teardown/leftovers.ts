// What a killed node leaves running: containerd's shims (reparented to init when
// containerd dies) and the containers' processes in the node's pod cgroups. Both
// are found from the kernel's own records (/proc/<pid>/cmdline, cgroup.procs).
import fs from 'node:fs';
import path from 'node:path';

/** The shims whose -address is a socket under `dir` (each node's containerd has its socket there). */
export function shimPidsUnder(dir: string, proc = '/proc'): number[] {
  const out: number[] = [];
  for (const ent of fs.readdirSync(proc)) {
    const pid = Number(ent);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    let argv: string[];
    try {
      argv = fs.readFileSync(path.join(proc, ent, 'cmdline'), 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!path.basename(argv[0] ?? '').startsWith('containerd-shim')) continue;
    const address = argv[argv.indexOf('-address') + 1] ?? '';
    if (argv.includes('-address') && address.startsWith(`${dir}/`)) out.push(pid);
  }
  return out;
}

/** Every process in the cgroup and its children, read from the memory hierarchy (v1) or the unified one (v2). */
export function cgroupPids(cgroup: string, mount = '/sys/fs/cgroup'): number[] {
  const v1 = path.join(mount, 'memory', cgroup);
  const root = fs.existsSync(path.join(mount, 'memory')) ? v1 : path.join(mount, cgroup);
  const out: number[] = [];
  const walk = (dir: string): void => {
    let ents: fs.Dirent[];
    try {
      ents = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    try {
      for (const l of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n'))
        if (Number(l) > 1) out.push(Number(l));
    } catch {
      /* not a cgroup directory */
    }
    for (const e of ents) if (e.isDirectory()) walk(path.join(dir, e.name));
  };
  walk(root);
  return out;
}
