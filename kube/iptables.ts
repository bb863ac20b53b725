// Running iptables, shared by the kube-proxy and the kubelet's pod network: one
// `iptables-restore --noflush --wait` per sync, fed on stdin, and the few plain
// `iptables` calls for the jump rules from the built-in chains, one change at a
// time in the process. Behind an interface so callers can be tested without
// touching any kernel table.
import { spawn } from 'node:child_process';

export type Table = 'filter' | 'nat';

export interface Iptables {
  restore(text: string): Promise<void>;
  save(table: Table): Promise<string>;
  /** Creates a chain if it is missing. */
  ensureChain(table: Table, chain: string): Promise<void>;
  /** Inserts the rule at the top of `chain` unless it is there; true if it was added. */
  ensureRule(table: Table, chain: string, args: string[]): Promise<boolean>;
}

/** A failed restore, with the line iptables-restore complained about and the lines around it. */
export class RestoreError extends Error {
  constructor(
    message: string,
    readonly line: number | undefined,
    readonly context: string,
  ) {
    super(message);
    this.name = 'RestoreError';
  }
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Restores of very large rulesets on the nf_tables backend take minutes (chain handling is superlinear there). */
const RUN_TIMEOUT_MS = 10 * 60_000;

/** Runs a command with `input` on stdin; its exit code and output (killed after `timeoutMs`). */
export function runCommand(cmd: string, args: string[], input?: string, timeoutMs = RUN_TIMEOUT_MS): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${cmd}: ${e.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {}); // EPIPE if it exits early; the exit code tells
    child.stdin.end(input ?? '');
  });
}

/** The restore input lines around `line` (1-based), numbered, as upstream logs them (±3). */
export function linesAround(text: string, line: number, n = 3): string {
  const lines = text.split('\n');
  const from = Math.max(1, line - n);
  const to = Math.min(lines.length, line + n);
  const out: string[] = [];
  for (let i = from; i <= to; i++) out.push(`${i === line ? '>' : ' '}${String(i).padStart(6)}: ${lines[i - 1] ?? ''}`);
  return out.join('\n');
}

/** `:CHAIN ...` lines of one table in iptables-save output. */
export function chainsInSave(save: string): Set<string> {
  const out = new Set<string>();
  for (const l of save.split('\n')) if (l.startsWith(':')) out.add(l.slice(1).split(' ')[0]!);
  return out;
}

/**
 * One iptables change at a time in this process: the kube-proxy and the agent's pod network share the tables
 * (in one process under `tskube up|join`), and concurrent iptables-nft writers were seen to leave a jump rule twice.
 */
let queue: Promise<unknown> = Promise.resolve();
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

/** The iptables binaries of a family. */
export const IPTABLES_BINARIES = {
  IPv4: { iptables: 'iptables', restore: 'iptables-restore', save: 'iptables-save' },
  IPv6: { iptables: 'ip6tables', restore: 'ip6tables-restore', save: 'ip6tables-save' },
};

export class ExecIptables implements Iptables {
  constructor(
    private readonly bin = IPTABLES_BINARIES.IPv4,
    /** A restore still running after this is killed (and fails). */
    private readonly restoreTimeoutMs = RUN_TIMEOUT_MS,
  ) {}

  restore(text: string): Promise<void> {
    return serial(() => this.restoreNow(text));
  }

  private async restoreNow(text: string): Promise<void> {
    const r = await runCommand(this.bin.restore, ['--noflush', '--wait'], text, this.restoreTimeoutMs);
    if (r.code === 0) return;
    if (r.code === null)
      throw new RestoreError(
        `${this.bin.restore} did not finish within ${Math.round(this.restoreTimeoutMs / 1000)} s and was killed`,
        undefined,
        '',
      );
    const m = /line:? (\d+)/i.exec(r.stderr);
    const line = m ? Number(m[1]) : undefined;
    throw new RestoreError(
      `${this.bin.restore} failed (exit ${String(r.code)}): ${r.stderr.trim().split('\n')[0]}`,
      line,
      line ? linesAround(text, line) : '',
    );
  }

  async save(table: Table): Promise<string> {
    const r = await runCommand(this.bin.save, ['-t', table]);
    if (r.code !== 0) throw new Error(`${this.bin.save} -t ${table} failed: ${r.stderr.trim()}`);
    return r.stdout;
  }

  ensureChain(table: Table, chain: string): Promise<void> {
    return serial(() => this.ensureChainNow(table, chain));
  }

  private async ensureChainNow(table: Table, chain: string): Promise<void> {
    const r = await runCommand(this.bin.iptables, ['-w', '-t', table, '-N', chain]);
    if (r.code !== 0 && !/exists/i.test(r.stderr))
      throw new Error(`${this.bin.iptables} -t ${table} -N ${chain}: ${r.stderr.trim()}`);
  }

  ensureRule(table: Table, chain: string, args: string[]): Promise<boolean> {
    return serial(() => this.ensureRuleNow(table, chain, args));
  }

  private async ensureRuleNow(table: Table, chain: string, args: string[]): Promise<boolean> {
    if ((await runCommand(this.bin.iptables, ['-w', '-t', table, '-C', chain, ...args])).code === 0) return false;
    const r = await runCommand(this.bin.iptables, ['-w', '-t', table, '-I', chain, '1', ...args]);
    if (r.code !== 0)
      throw new Error(`${this.bin.iptables} -t ${table} -I ${chain} ${args.join(' ')}: ${r.stderr.trim()}`);
    return true;
  }
}
