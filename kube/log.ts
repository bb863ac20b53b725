// klog-style structured logging to stderr: one line per event.
export interface Logger {
  info(msg: string, kv?: Record<string, unknown>): void;
  warn(msg: string, kv?: Record<string, unknown>): void;
  error(msg: string, kv?: Record<string, unknown>): void;
  debug(msg: string, kv?: Record<string, unknown>): void;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3 };

export function createLogger(
  component: string,
  opts: { verbosity?: number; sink?: (line: string) => void } = {},
): Logger {
  const min: Level = (opts.verbosity ?? 0) >= 4 ? 'debug' : 'info';
  const sink = opts.sink ?? ((l: string) => process.stderr.write(l + '\n'));
  const emit = (level: Level, msg: string, kv?: Record<string, unknown>): void => {
    if (ORDER[level] < ORDER[min]) return;
    const extra = kv
      ? Object.entries(kv)
          .map(([k, v]) => ` ${k}=${JSON.stringify(v)}`)
          .join('')
      : '';
    sink(`${new Date().toISOString()} ${level.toUpperCase()} ${component}: ${msg}${extra}`);
  };
  return {
    info: (m, kv) => emit('info', m, kv),
    warn: (m, kv) => emit('warn', m, kv),
    error: (m, kv) => emit('error', m, kv),
    debug: (m, kv) => emit('debug', m, kv),
  };
}

/** Collects lines in memory, for tests. */
export function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const l = createLogger('test', { verbosity: 4, sink: (s) => lines.push(s) });
  return Object.assign(l, { lines });
}
