// mount(8) and umount(8) run by one long-lived /bin/sh instead of a fork of
// the kubelet for each: forking a process the kubelet's size (its page tables)
// costs far more CPU than the small shell's fork, and every API pod mounts at
// least its token tmpfs. One command at a time; the shell is started on first
// use, again if it exits.
import { type ChildProcess, spawn } from 'node:child_process';

const MARK = '__tskube_rc=';

/** One shell word: single-quoted, a single quote written as '\''. */
export const shellWord = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** The command line sent for one call: its output (stderr too) and then the marker with its exit code. */
export const commandLine = (bin: string, args: string[]): string =>
  `${[bin, ...args].map(shellWord).join(' ')} </dev/null 2>&1; echo "${MARK}$?"\n`;

/** The output and exit code of a call once the shell's answer holds its marker line; undefined until then. */
export function parseAnswer(out: string): { text: string; code: number } | undefined {
  const i = out.indexOf(MARK);
  const nl = i < 0 ? -1 : out.indexOf('\n', i);
  if (nl < 0) return undefined;
  return { text: out.slice(0, i).trim(), code: Number(out.slice(i + MARK.length, nl)) };
}

interface Call {
  what: string;
  resolve: () => void;
  reject: (e: Error) => void;
}

export class MountCommands {
  private sh: ChildProcess | undefined;
  private out = '';
  private call: Call | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly shellPath = '/bin/sh') {}

  /** Runs `bin args…`; rejects with execFile's message ("Command failed: …" and the output) when it fails. */
  run(bin: string, args: string[]): Promise<void> {
    const p = this.queue.then(() => this.exec(bin, args));
    this.queue = p.catch(() => undefined);
    return p;
  }

  private shell(): ChildProcess {
    if (this.sh) return this.sh;
    const sh = spawn(this.shellPath, [], { stdio: ['pipe', 'pipe', 'ignore'] });
    sh.stdout!.setEncoding('utf8');
    sh.stdout!.on('data', (d: string) => this.onData(d));
    sh.stdin!.on('error', () => undefined);
    const gone = (why: string): void => {
      if (this.sh !== sh) return;
      this.sh = undefined;
      this.finish()?.reject(new Error(`${why}: the shell running mount(8) is gone`));
    };
    sh.on('exit', (code, signal) => gone(`exit ${signal ?? code}`));
    sh.on('error', (e) => gone(e.message));
    this.sh = sh;
    return sh;
  }

  /** Held while a call is in flight, so the process waits for its answer; released when idle. */
  private hold(on: boolean): void {
    const sh = this.sh;
    if (!sh) return;
    for (const h of [sh, sh.stdout, sh.stdin] as ({ ref(): void; unref(): void } | null)[])
      if (h && on) h.ref();
      else if (h) h.unref();
  }

  private exec(bin: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const sh = this.shell();
      this.out = '';
      this.call = { what: [bin, ...args].join(' '), resolve, reject };
      this.hold(true);
      sh.stdin!.write(commandLine(bin, args));
    });
  }

  private finish(): Call | undefined {
    const c = this.call;
    this.call = undefined;
    this.out = '';
    this.hold(false);
    return c;
  }

  private onData(d: string): void {
    this.out += d;
    const answer = parseAnswer(this.out);
    if (!answer) return;
    const c = this.finish();
    if (!c) return;
    if (answer.code === 0) c.resolve();
    else c.reject(new Error(`Command failed: ${c.what}${answer.text ? `\n${answer.text}` : ''}`));
  }

  /** Ends the shell (it exits at the end of its input). */
  close(): void {
    this.sh?.stdin?.end();
  }
}

/** The kubelet's one runner. */
export const mountCommands = new MountCommands();
