// Running nft: one `nft -f -` per transaction, and the one listing of the
// table a full resync starts from (chain and set names and the map elements,
// never the rules: listing every rule is what takes minutes at scale).
import { spawn } from 'node:child_process';
import fs from 'node:fs';

import type { Listing } from './diff.js';
import { isServiceObject, TABLE } from './names.js';
import { HAIRPIN, MAPS } from './render.js';
import { isSlotMap } from './slots.js';

export interface Nft {
  /** Runs one atomic transaction. */
  run(text: string): Promise<void>;
  /** The service objects of our table (an empty listing when the table does not exist). */
  list(): Promise<Listing>;
}

/** nft failed: its message, and the input lines it complained about. */
export class NftError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NftError';
  }
}

function run(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('nft', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new NftError(`nft: ${e.message}`)));
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

export type Json = Record<string, unknown>;

/** A JSON map value as nft's text syntax: {"goto": {"target": "x"}} → "goto x", {"drop": null} → "drop". */
export function verdictText(v: unknown): string {
  if (typeof v === 'string') return v;
  const [k, body] = Object.entries(v as Json)[0] ?? ['', undefined];
  const target = (body as Json | null)?.target;
  return typeof target === 'string' ? `${k} ${target}` : k;
}

/** A JSON element key as nft's text syntax: {"concat": ["10.0.0.1", "tcp", 80]} → "10.0.0.1 . tcp . 80". */
export function keyText(k: unknown): string {
  if (k && typeof k === 'object' && 'elem' in (k as Json)) return keyText(((k as Json).elem as Json).val);
  if (k && typeof k === 'object' && 'concat' in (k as Json))
    return ((k as Json).concat as unknown[]).map(keyText).join(' . ');
  if (k && typeof k === 'object' && 'range' in (k as Json))
    return ((k as Json).range as unknown[]).map(keyText).join('-');
  return String(k);
}

/** What `nft -j list chains|sets|maps <family>` say about our table, as a Listing. */
export function listingOf(chains: Json[], sets: Json[], maps: Json[], tableExists: boolean): Listing {
  const listing: Listing = {
    tableExists,
    chains: new Set(),
    sets: new Map(),
    elements: new Map(),
    baseChains: new Map(),
  };
  if (!tableExists) return listing;
  for (const o of chains) {
    const c = o.chain as Json | undefined;
    if (c?.table !== TABLE || typeof c.name !== 'string') continue;
    if (isServiceObject(c.name)) listing.chains.add(c.name);
    else if (typeof c.hook === 'string')
      listing.baseChains!.set(c.name, `${String(c.type)} ${c.hook} ${String(c.prio)}`);
  }
  const pins = new Map<string, string>();
  for (const o of sets) {
    const st = o.set as Json | undefined;
    if (st?.table !== TABLE || typeof st.name !== 'string') continue;
    if (isServiceObject(st.name)) listing.sets.set(st.name, Number(st.timeout ?? 0));
    else if (st.name === HAIRPIN) for (const e of (st.elem ?? []) as unknown[]) pins.set(keyText(e), '');
  }
  listing.elements.set(HAIRPIN, pins);
  for (const m of MAPS) listing.elements.set(m, new Map());
  for (const o of maps) {
    const mp = o.map as Json | undefined;
    const els =
      mp?.table === TABLE && typeof mp.name === 'string' && mp.name !== HAIRPIN
        ? listing.elements.get(mp.name)
        : undefined;
    if (!els) continue;
    // Endpoint slots map ranges to "ip . port"; the other maps to verdicts.
    for (const pair of (mp!.elem ?? []) as unknown[][])
      els.set(keyText(pair[0]), isSlotMap(mp!.name as string) ? keyText(pair[1]) : verdictText(pair[1]));
  }
  return listing;
}

export class ExecNft implements Nft {
  constructor(private readonly family: 'ip' | 'ip6') {}

  async run(text: string): Promise<void> {
    const r = await run(['-f', '-'], text);
    if (r.code !== 0)
      throw new NftError(
        `nft -f - failed (exit ${String(r.code)}): ${r.stderr.trim().split('\n').slice(0, 6).join('\n')}`,
      );
  }

  private async json(args: string[]): Promise<Json[] | undefined> {
    const r = await run(['-j', 'list', ...args]);
    if (r.code !== 0) {
      if (/No such file or directory/.test(r.stderr)) return undefined;
      throw new NftError(`nft -j list ${args.join(' ')} failed: ${r.stderr.trim()}`);
    }
    return ((JSON.parse(r.stdout) as { nftables?: Json[] }).nftables ?? []) as Json[];
  }

  async list(): Promise<Listing> {
    const tables = (await this.json(['tables', this.family])) ?? [];
    if (!tables.some((t) => (t.table as Json | undefined)?.name === TABLE)) return listingOf([], [], [], false);
    // `list sets` and `list maps` carry the elements: three nft runs in all, each reading the ruleset once (nft 1.0.x).
    return listingOf(
      (await this.json(['chains', this.family])) ?? [],
      (await this.json(['sets', this.family])) ?? [],
      (await this.json(['maps', this.family])) ?? [],
      true,
    );
  }
}

/** `--cleanup` and a mode switch: our table in both families, if there. */
export async function deleteNftTables(): Promise<string[]> {
  const removed: string[] = [];
  for (const family of ['ip', 'ip6']) {
    const r = await run(['delete', 'table', family, TABLE]).catch(() => undefined);
    if (r?.code === 0) removed.push(`${family} ${TABLE}`);
  }
  return removed;
}

const versionAtLeast = (v: string, min: number[]): boolean => {
  const parts = v.split(/[.-]/).map((x) => Number.parseInt(x, 10));
  for (let i = 0; i < min.length; i++) {
    const p = Number.isFinite(parts[i]) ? parts[i]! : 0;
    if (p !== min[i]) return p > min[i]!;
  }
  return true;
};

/** Upstream's requirements for the nftables mode: kernel 5.13 and nft 1.0.1; a clear error otherwise. */
export async function checkNftSupport(
  kernelRelease = fs.readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(),
): Promise<void> {
  if (!versionAtLeast(kernelRelease, [5, 13]))
    throw new Error(
      `the nftables proxy mode needs kernel 5.13 or later; this kernel is ${kernelRelease} (use --proxy-mode=iptables)`,
    );
  const r = await run(['--version']).catch((e: Error) => ({ code: 1, stdout: '', stderr: e.message }));
  const m = /v(\d+\.\d+(?:\.\d+)?)/.exec(r.stdout);
  if (r.code !== 0 || !m)
    throw new Error(
      `the nftables proxy mode needs the nft command (nftables 1.0.1 or later): ${r.stderr.trim() || 'not found'}`,
    );
  if (!versionAtLeast(m[1]!, [1, 0, 1]))
    throw new Error(`the nftables proxy mode needs nft 1.0.1 or later; found ${m[1]!} (use --proxy-mode=iptables)`);
}

export { versionAtLeast };
