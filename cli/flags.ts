// pflag-style command lines shared by the tskube subcommands: --name=value or
// --name value, booleans written out (--masquerade-all=true), Go durations.
import { parseDuration } from './duration.js';

/** Parses flags; rejects names not in `known` (the subcommand's flag table). */
export function parseFlags(argv: string[], known?: Record<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) throw new Error(`unexpected argument "${a}"`);
    const body = a.replace(/^--?/, '');
    const eq = body.indexOf('=');
    let name: string;
    let value: string;
    if (eq >= 0) {
      name = body.slice(0, eq);
      value = body.slice(eq + 1);
    } else {
      name = body;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new Error(`flag --${name} needs a value`);
      value = next;
      i++;
    }
    if (known && !(name in known)) throw new Error(`unknown flag: --${name}`);
    out.set(name, value);
  }
  return out;
}

/** strconv.ParseBool, as pflag reads boolean flags. */
export function parseBool(v: string, flag: string): boolean {
  if (['true', '1', 't', 'T', 'TRUE', 'True'].includes(v)) return true;
  if (['false', '0', 'f', 'F', 'FALSE', 'False'].includes(v)) return false;
  throw new Error(`--${flag}: invalid boolean "${v}"`);
}

/** A duration flag in milliseconds, with the flag named in the error. */
export function durationFlag(f: Map<string, string>, flag: string, dflt: string): number {
  try {
    return parseDuration(f.get(flag) ?? dflt);
  } catch (e) {
    throw new Error(`--${flag}: ${(e as Error).message}`, { cause: e });
  }
}

export const commaList = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Splits a command line whose arguments (a token, a server) may sit among the flags, and whose boolean flags
 * may be bare (--print-join-command): the positionals, and the flags in parseFlags' form.
 */
export function splitArgs(argv: string[], booleans: string[]): { positional: string[]; flags: string[] } {
  const positional: string[] = [];
  const flags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) positional.push(a);
    else if (a.includes('=')) flags.push(a);
    else if (booleans.includes(a.replace(/^--?/, ''))) flags.push(`${a}=true`);
    else flags.push(a, argv[++i] ?? '');
  }
  return { positional, flags };
}
