// Termination messages, as upstream: each container gets a file under
// <pod-dir>/containers/<name>/ mounted at terminationMessagePath; after it
// exits the kubelet reads at most 4 KiB of it, or with FallbackToLogsOnError
// and an empty file and a failure, the last 80 lines (2 KiB) of its log.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import type { ContainerStatus } from '../cri/types.js';
import { parseLogLine } from '../server/logs.js';
import { A_TERMINATION_MESSAGE_PATH, A_TERMINATION_MESSAGE_POLICY } from './labels.js';

export const MAX_MESSAGE_BYTES = 4 * 1024;
export const MAX_LOG_LINES = 80;
export const MAX_LOG_BYTES = 2 * 1024;

/** Makes the host file for one container start; returns the CRI mount, or undefined when the path is unset. */
export async function terminationMessageMount(
  podDirPath: string,
  containerName: string,
  containerPath: string | undefined,
): Promise<{ container_path: string; host_path: string; readonly: boolean } | undefined> {
  if (!containerPath) return undefined;
  const dir = path.join(podDirPath, 'containers', containerName);
  // Synchronous: three small local calls on every container start, each several times the CPU through fs/promises.
  fs.mkdirSync(dir, { recursive: true, mode: 0o750 });
  const file = path.join(dir, randomBytes(4).toString('hex'));
  fs.writeFileSync(file, '', { mode: 0o666 });
  // Whatever user the container runs as must be able to write it.
  fs.chmodSync(file, 0o666);
  return { container_path: containerPath, host_path: file, readonly: false };
}

async function readHead(file: string, max: number): Promise<string> {
  const fh = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await fh.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** The last `lines` log lines of a CRI log file, at most `maxBytes` from its end, as the container wrote them. */
export async function lastLogLines(file: string, lines = MAX_LOG_LINES, maxBytes = MAX_LOG_BYTES): Promise<string> {
  const fh = await fsp.open(file, 'r');
  try {
    const { size } = await fh.stat();
    // Enough raw bytes for the tail: CRI framing adds a timestamp and tags to each line.
    const want = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(want);
    await fh.read(buf, 0, want, size - want);
    // Whole lines end with a newline; output the container left without one (`echo -n`) is a last line as it is.
    const out: string[] = [];
    let pending = '';
    for (const raw of buf.toString('utf8').split('\n')) {
      const l = parseLogLine(raw);
      if (!l) continue;
      pending += l.text;
      if (!l.partial) {
        out.push(`${pending}\n`);
        pending = '';
      }
    }
    if (pending) out.push(pending);
    const text = out.slice(-lines).join('');
    const bytes = Buffer.from(text);
    return bytes.length > maxBytes ? bytes.subarray(bytes.length - maxBytes).toString('utf8') : text;
  } finally {
    await fh.close();
  }
}

/** The message of an exited container: the runtime's, then its termination message (or log tail), as upstream joins them. */
export async function terminationMessage(st: ContainerStatus): Promise<string> {
  const ann = st.annotations ?? {};
  const target = ann[A_TERMINATION_MESSAGE_PATH];
  const mount = target ? (st.mounts ?? []).find((m) => m.container_path === target) : undefined;
  let text = '';
  if (mount?.host_path) text = await readHead(mount.host_path, MAX_MESSAGE_BYTES).catch(() => '');
  if (!text && ann[A_TERMINATION_MESSAGE_POLICY] === 'FallbackToLogsOnError' && st.exit_code !== 0 && st.log_path)
    text = await lastLogLines(st.log_path).catch(() => '');
  if (!text) return st.message ?? '';
  return st.message ? `${st.message}: ${text}` : text;
}
