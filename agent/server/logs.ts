// Container logs as the kubelet serves them (upstream pkg/kubelet/kuberuntime/logs):
// the CRI log file's lines, `<RFC3339Nano> <stdout|stderr> <P|F> <text>`,
// turned back into the container's output, with PodLogOptions: tailLines,
// sinceSeconds/sinceTime, limitBytes, timestamps and follow. A partial (P)
// line is written without its newline, so the next one completes it. When
// following, a rotated file is left for the new one at the same path.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

export interface LogOptions {
  follow: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  /** ms since epoch: only lines from then on. */
  sinceMs?: number;
}

export interface LogLine {
  /** The original timestamp text, RFC3339Nano. */
  time: string;
  stream: 'stdout' | 'stderr';
  partial: boolean;
  text: string;
}

/** Parses one CRI log line; undefined for a line that is not in the format. */
export function parseLogLine(line: string): LogLine | undefined {
  const a = line.indexOf(' ');
  const b = line.indexOf(' ', a + 1);
  if (a < 0 || b < 0) return undefined;
  const time = line.slice(0, a);
  const stream = line.slice(a + 1, b);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  let rest = line.slice(b + 1);
  let partial = false;
  // The tag field: P (partial) or F (full); logs from older runtimes have none.
  const c = rest.indexOf(' ');
  const tag = c < 0 ? rest : rest.slice(0, c);
  if (tag === 'P' || tag === 'F') {
    partial = tag === 'P';
    rest = c < 0 ? '' : rest.slice(c + 1);
  }
  return { time, stream, partial, text: rest };
}

/** RFC3339Nano with exactly nine fraction digits (upstream RFC3339NanoFixed), keeping the zone as written. */
export function fixedNano(time: string): string {
  const m = /^([^.]*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(time);
  if (!m) return time;
  return `${m[1]!}.${(m[2] ?? '').padEnd(9, '0').slice(0, 9)}${m[3]!}`;
}

/** Byte offset where the last `n` complete log lines (and what follows them) start. */
export async function tailOffset(file: string, n: number): Promise<number> {
  return (await tailRange(file, n)).start;
}

/**
 * Where the last `n` complete lines start, and the file size they were counted in: a read that does not
 * follow stops there, so lines the container writes meanwhile do not make the tail longer than `n`.
 */
export async function tailRange(file: string, n: number): Promise<{ start: number; end: number }> {
  if (n <= 0) {
    const st = await fsp.stat(file);
    return { start: st.size, end: st.size };
  }
  const fh = await fsp.open(file, 'r');
  try {
    const { size } = await fh.stat();
    const range = (start: number): { start: number; end: number } => ({ start, end: size });
    let pos = size;
    let full = 0;
    let carry = Buffer.alloc(0);
    // A last line without its newline is still being written: it is not part of the tail yet.
    let unterminated = true;
    const chunk = 64 * 1024;
    while (pos > 0) {
      const len = Math.min(chunk, pos);
      pos -= len;
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      let data = Buffer.concat([buf, carry]);
      if (unterminated) {
        const nl = data.lastIndexOf(0x0a);
        if (nl < 0) {
          carry = Buffer.alloc(0);
          continue;
        }
        data = data.subarray(0, nl + 1);
        unterminated = false;
      }
      // Walk newline positions from the end; a full (F) log line ends each counted line.
      let end = data.length;
      for (let i = data.length - 1; i >= 0; i--) {
        if (data[i] !== 0x0a || i === end - 1) {
          if (data[i] === 0x0a) end = i;
          continue;
        }
        const lineEnd = end;
        const l = parseLogLine(data.subarray(i + 1, end).toString('utf8'));
        end = i;
        // One full line too many: what follows it (partial pieces included) is the tail.
        if (l && !l.partial && ++full > n) return range(pos + lineEnd + 1);
      }
      carry = data.subarray(0, end);
      if (pos === 0) {
        const l = parseLogLine(carry.toString('utf8'));
        if (l && !l.partial && ++full > n) return range(carry.length + 1);
      }
    }
    return range(0);
  } finally {
    await fh.close();
  }
}

export interface LogSink {
  write(b: Buffer): boolean;
  readonly closed: boolean;
  /** Resolves when writing may go on (backpressure). */
  drain(): Promise<void>;
}

const SP = 0x20;

/**
 * Turns whole CRI log lines (a buffer ending in a newline) into output pieces.
 * Works on bytes: the text is never decoded, so a 100 MB log costs a few
 * indexOf calls per line. Returns the pieces and whether the limit was hit.
 */
function renderLines(data: Buffer, o: LogOptions, room: number): { pieces: Buffer[]; bytes: number; full: boolean } {
  const pieces: Buffer[] = [];
  let bytes = 0;
  let from = 0;
  let nl: number;
  while ((nl = data.indexOf(0x0a, from)) >= 0) {
    const a = data.indexOf(SP, from);
    const b = a < 0 || a > nl ? -1 : data.indexOf(SP, a + 1);
    const lineStart = from;
    from = nl + 1;
    if (b < 0 || b > nl) continue;
    const stream = data.toString('latin1', a + 1, b);
    if (stream !== 'stdout' && stream !== 'stderr') continue;
    let text = b + 1;
    let partial = false;
    // The tag (P or F) is a single byte followed by a space, or ends the line; older runtimes write none.
    const t = data[b + 1];
    if ((t === 0x50 || t === 0x46) && (b + 2 === nl || data[b + 2] === SP)) {
      partial = t === 0x50;
      text = Math.min(b + 3, nl);
    }
    if (o.sinceMs !== undefined && Date.parse(data.toString('latin1', lineStart, a)) < o.sinceMs) continue;
    // A full line keeps its newline: the text and it are one slice of the file.
    const body = data.subarray(text, partial ? nl : nl + 1);
    const pre = o.timestamps ? Buffer.from(`${fixedNano(data.toString('latin1', lineStart, a))} `) : undefined;
    for (const piece of pre ? [pre, body] : [body]) {
      if (bytes + piece.length >= room) {
        pieces.push(piece.subarray(0, room - bytes));
        return { pieces, bytes: room, full: true };
      }
      pieces.push(piece);
      bytes += piece.length;
    }
  }
  return { pieces, bytes, full: false };
}

/**
 * Streams a log file from `start` to its end; with follow, keeps going while
 * `alive()` says the container may still write, reopening the path when the
 * file is rotated away. `alive()` is asked only once the file has been quiet for
 * a wait (upstream's waitLogs): a chatty container's log is not a runtime call
 * per write. Returns when done, the limit is reached or the sink closes.
 */
export async function streamLog(
  file: string,
  start: number,
  o: LogOptions,
  sink: LogSink,
  alive: () => Promise<boolean>,
  end = Infinity,
): Promise<void> {
  let fd = await fsp.open(file, 'r');
  let ino = (await fd.stat()).ino;
  let pos = start;
  let room = o.limitBytes ?? Infinity;
  let carry = Buffer.alloc(0);
  // The last wait for a change timed out: only then is the container asked whether it still runs.
  let quiet = false;
  // One write per read: per-line writes would make every line an HTTP chunk.
  const emit = async (chunk: Buffer): Promise<boolean> => {
    const data = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const end = data.lastIndexOf(0x0a) + 1;
    // Copied: the read buffer is reused.
    carry = Buffer.from(data.subarray(end));
    const r = renderLines(data.subarray(0, end), o, room);
    room -= r.bytes;
    if (r.pieces.length && !sink.write(Buffer.concat(r.pieces))) await sink.drain();
    return !r.full && !sink.closed;
  };
  try {
    const chunk = Buffer.alloc(256 * 1024);
    for (;;) {
      // Without follow, a read that was measured (a tail) stops where it was measured.
      const want = o.follow ? chunk.length : Math.max(0, Math.min(chunk.length, end - pos));
      const { bytesRead } = want > 0 ? await fd.read(chunk, 0, want, pos) : { bytesRead: 0 };
      if (bytesRead > 0) {
        pos += bytesRead;
        if (!(await emit(chunk.subarray(0, bytesRead)))) return;
        continue;
      }
      if (!o.follow || sink.closed) return;
      // At the end: rotated away? then continue with the new file at the same path.
      const now = await fsp.stat(file).catch(() => undefined);
      if (now && now.ino !== ino) {
        // Opened first: if the new file is rotated away again before we get to it, keep the old one and look again.
        const next = await fsp.open(file, 'r').catch(() => undefined);
        if (!next) continue;
        // Lines the runtime wrote to the old file before it reopened come first.
        for (
          let r = await fd.read(chunk, 0, chunk.length, pos);
          r.bytesRead > 0;
          r = await fd.read(chunk, 0, chunk.length, pos)
        ) {
          pos += r.bytesRead;
          if (!(await emit(chunk.subarray(0, r.bytesRead)))) return void (await next.close());
        }
        await fd.close();
        fd = next;
        // Rotated more than once since we looked (a slow reader): uncompressed rotated files newer than ours were
        // written after it and before the current one; read them whole so their lines are not skipped. Ours is
        // found by inode; if it was already compressed, every uncompressed one is newer.
        const plain = [];
        for (const f of await rotatedPlain(file))
          plain.push({ f, ino: (await fsp.stat(f).catch(() => undefined))?.ino });
        const ours = plain.findIndex((x) => x.ino === ino);
        const nextIno = (await fd.stat()).ino;
        for (const { f, ino: fino } of plain.slice(ours + 1)) {
          if (fino === undefined || fino === nextIno) continue;
          const mid = await fsp.open(f, 'r').catch(() => undefined);
          if (!mid) continue;
          try {
            let at = 0;
            for (
              let r = await mid.read(chunk, 0, chunk.length, at);
              r.bytesRead > 0;
              r = await mid.read(chunk, 0, chunk.length, at)
            ) {
              at += r.bytesRead;
              if (!(await emit(chunk.subarray(0, r.bytesRead)))) return;
            }
          } finally {
            await mid.close();
          }
        }
        ino = nextIno;
        pos = 0;
        carry = Buffer.alloc(0);
        continue;
      }
      if (quiet && !(await alive())) {
        // One last read: the runtime may have flushed after we looked.
        const { bytesRead: last } = await fd.read(chunk, 0, chunk.length, pos);
        if (last > 0) {
          pos += last;
          await emit(chunk.subarray(0, last));
          continue;
        }
        return;
      }
      quiet = !(await waitForChange(file, 1000));
    }
  } finally {
    await fd.close().catch(() => undefined);
  }
}

/** Rotated copies of a log that are not compressed (`<log>.<timestamp>`), oldest first. */
async function rotatedPlain(file: string): Promise<string[]> {
  const dir = path.dirname(file);
  const base = path.basename(file);
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  return names
    .filter((f) => f.startsWith(`${base}.`) && !f.endsWith('.gz') && !f.endsWith('.tmp'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Resolves true on the next change to the file (or its directory, for rotation), false after `ms` without one. */
function waitForChange(file: string, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    let w: fs.FSWatcher | undefined;
    const done = (changed: boolean): void => {
      clearTimeout(t);
      w?.close();
      resolve(changed);
    };
    const t = setTimeout(() => done(false), ms);
    try {
      w = fs.watch(file, { persistent: false }, () => done(true));
      w.on('error', () => done(false));
    } catch {
      /* vanished: the timer decides */
    }
  });
}
