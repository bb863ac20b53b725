import { readFileSync } from 'node:fs';
// Small helpers for benchmark figures.
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const idx = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[idx]!;
}

export function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

/** The fields of /proc/<pid>/stat after the command name, which may hold spaces. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of a process so far (utime + stime, clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** CPU seconds of the children a process has waited for (cutime + cstime). */
export function childCpuSeconds(pid: number): number {
  const f = statFields(pid);
  return (Number(f[13]) + Number(f[14])) / 100;
}

/** Runs a benchmark's main: exit 0 when it resolves, else its stack on stderr and exit 1 (child processes included). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e: Error) => {
      process.stderr.write(`${e.stack ?? e.message}\n`);
      process.exit(1);
    },
  );
}
