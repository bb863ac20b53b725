// Process helpers for the e2e harness: spawn with a log file, stop by PID,
// bounded waits. Nothing here ever kills by name.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';

import { waitFor } from '../testing/wait.js';

export { waitFor };

export function sh(
  cmd: string,
  args: string[],
  opts: { netns?: string; timeoutMs?: number; allowFail?: boolean; input?: string } = {},
): string {
  const [c, a] = opts.netns ? ['nsenter', [`--net=/run/netns/${opts.netns}`, cmd, ...args]] : [cmd, args];
  try {
    return execFileSync(c, a, {
      encoding: 'utf8',
      timeout: opts.timeoutMs ?? 30_000,
      stdio: ['pipe', 'pipe', 'pipe'],
      input: opts.input,
    });
  } catch (e) {
    if (opts.allowFail) return '';
    const err = e as { stderr?: string; message: string };
    throw new Error(`${cmd} ${a.join(' ')} failed: ${err.stderr?.trim() || err.message}`, { cause: e });
  }
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  logFile: string;
  exited: Promise<number | null>;
}

/** `group`: the process leads a process group of its own, as a command started from a shell does (signal it with kill(-pid)). */
export function start(
  cmd: string,
  args: string[],
  logFile: string,
  opts: { netns?: string; env?: NodeJS.ProcessEnv; cwd?: string; group?: boolean } = {},
): Proc {
  const out = fs.openSync(logFile, 'a');
  const [c, a] = opts.netns ? ['nsenter', [`--net=/run/netns/${opts.netns}`, cmd, ...args]] : [cmd, args];
  const child = spawn(c, a, {
    stdio: ['ignore', out, out],
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    detached: opts.group === true,
  });
  fs.closeSync(out);
  if (!child.pid) throw new Error(`could not start ${cmd}`);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, pid: child.pid, logFile, exited };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, wait up to graceMs, then SIGKILL; bounded. */
export async function stopPid(pid: number, graceMs = 5000, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const ok = await waitFor(() => !alive(pid), graceMs, 50).then(
    () => true,
    () => false,
  );
  if (!ok) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    await waitFor(() => !alive(pid), 5000, 50).catch(() => undefined);
  }
}
