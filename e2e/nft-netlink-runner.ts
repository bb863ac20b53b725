// Runs inside a throwaway network namespace (e2e/nft-netlink.test.ts): random Service and endpoint changes synced
// by the NftSyncer, partial syncs over netlink; then the same transactions replayed through `nft -f -` on a fresh
// table. Prints both tables (normalized JSON listing, nft's netlink dump of the elements, and every rule's expressions as the kernel dumps them) and how each transaction went.
import { execFileSync } from 'node:child_process';

import { ExecNft, type Json, type Nft } from '../proxy/nftables/apply.js';
import type { Listing } from '../proxy/nftables/diff.js';
import { cstr, messageAttrs, messagesOf } from '../proxy/nftables/netlink-encode.js';
import { NetlinkNft } from '../proxy/nftables/netlink-nft.js';
import { randomChange, randomService, rng, v6, World } from '../proxy/nftables/random-world.js';
import type { RenderContext } from '../proxy/nftables/render.js';
import { NftSyncer } from '../proxy/nftables/syncer.js';

// argv: seed, and the table family (ip, or ip6 for the same world with IPv6 twins of every address).
const FAM = process.argv[3] === 'ip6' ? 'ip6' : 'ip';
const ctx: RenderContext =
  FAM === 'ip'
    ? {
        family: 'ip',
        masqueradeMark: '0x00004000',
        masqueradeAll: false,
        localMatch: 'ip saddr 10.0.0.0/8',
        notLocalMatch: 'ip saddr != 10.0.0.0/8',
        nodeIP: '192.168.0.2',
        nodePortIPs: ['192.168.0.2'],
        conntrackTCPLiberal: false,
        groups: 4,
      }
    : {
        family: 'ip6',
        masqueradeMark: '0x00004000',
        masqueradeAll: false,
        localMatch: `ip6 saddr ${v6('10.0.0.0/8')}`,
        notLocalMatch: `ip6 saddr != ${v6('10.0.0.0/8')}`,
        nodeIP: v6('192.168.0.2'),
        nodePortIPs: [v6('192.168.0.2')],
        conntrackTCPLiberal: false,
        groups: 4,
      };

/** Every rule of the table as the kernel stores it: chain and the raw bytes of its expressions and userdata, in order. */
async function kernelRules(): Promise<string> {
  const { RawNetlinkSocket } = (await import('netlink')) as unknown as {
    RawNetlinkSocket: new (p: number) => {
      send(m: Uint8Array[]): void;
      on(e: 'message', l: (m: Buffer) => void): void;
      close(): void;
    };
  };
  const sock = new RawNetlinkSocket(12);
  const req = Buffer.alloc(20);
  req.writeUInt32LE(20, 0);
  req.writeUInt16LE((10 << 8) | 7, 4); // NFT_MSG_GETRULE
  req.writeUInt16LE(0x1 | 0x300, 6); // NLM_F_REQUEST | NLM_F_DUMP
  req.writeUInt32LE(1, 8);
  req.writeUInt8(FAM === 'ip' ? 2 : 10, 16); // NFPROTO_IPV4, NFPROTO_IPV6
  const rules: string[] = [];
  await new Promise<void>((resolve, reject) => {
    sock.on('message', (datagram) => {
      for (const m of messagesOf(datagram)) {
        const type = m.readUInt16LE(4);
        if (type === 3) return resolve(); // NLMSG_DONE
        if (type === 2) return reject(new Error(`rule dump failed: errno ${-m.readInt32LE(16)}`));
        const a = messageAttrs(m);
        rules.push(`${cstr(a.get(2)) || '?'} ${a.get(4)?.toString('hex') ?? ''} ${a.get(7)?.toString('hex') ?? ''}`);
      }
    });
    sock.send([req]);
  });
  sock.close();
  // Chains in a fixed order, rules in their order within a chain.
  const byChain = new Map<string, string[]>();
  for (const r of rules) {
    const c = r.slice(0, r.indexOf(' '));
    byChain.set(c, [...(byChain.get(c) ?? []), r]);
  }
  return [...byChain.keys()]
    .sort()
    .flatMap((c) => byChain.get(c)!)
    .join('\n');
}

/** The table as JSON, set and map elements sorted (hash sets list in no fixed order), and nft's netlink dump sorted. */
async function snapshot(): Promise<{ json: string; debug: string; rules: string }> {
  const list = JSON.parse(
    execFileSync('nft', ['-j', 'list', 'table', FAM, 'kube-proxy'], { encoding: 'utf8', maxBuffer: 1 << 28 }),
  ) as { nftables: Json[] };
  const objs = list.nftables
    .filter((o) => !('metainfo' in o))
    .map((o) => {
      const inner = (o.set ?? o.map) as Json | undefined;
      if (inner && Array.isArray(inner.elem))
        inner.elem = (inner.elem as unknown[]).map((e) => JSON.stringify(e)).sort();
      for (const x of Object.values(o) as Json[]) delete x.handle;
      return o;
    });
  const debug = execFileSync('nft', ['--debug=netlink', 'list', 'table', FAM, 'kube-proxy'], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  // nft gives an interval set an end element at 0 the first time it adds to it (the gap below the first range); the
  // proxy's netlink batches do not, and lookups are the same either way.
  const lines = debug
    .split('\n')
    .filter((l) => !l.startsWith('table ') && l.trim() && l.trim() !== 'element 00000000  : 1 [end]');
  return { json: JSON.stringify(objs, null, 1), debug: lines.sort().join('\n'), rules: await kernelRules() };
}

async function main(): Promise<void> {
  const exec = new ExecNft(FAM);
  const { nft: netlink, unavailable } = await NetlinkNft.open(exec, FAM);
  if (unavailable) throw new Error(`netlink unavailable: ${unavailable}`);
  const transactions: string[] = [];
  const recording: Nft = { run: (t) => (transactions.push(t), netlink.run(t)), list: () => netlink.list() };
  let clock = 0;
  const syncer = new NftSyncer(recording, ctx, { now: () => clock });
  const r = rng(Number(process.argv[2] ?? 7));
  const n = 40;
  const w = new World(FAM === 'ip' ? 'IPv4' : 'IPv6');
  for (let i = 0; i < n; i++) if (r() < 0.6) w.services.set(`ns/s${i}`, randomService(r, i, i % 4 !== 0));
  await syncer.full(w.ports(), w.endpoints());
  const full = { ...netlink.counts };
  for (let step = 0; step < 150; step++) {
    const changed = new Set<string>();
    const batch = r() < 0.7 ? 1 : 2;
    // Mostly plain Services (whose syncs go over netlink), some with affinity, Local policies and source ranges.
    for (let b = 0; b < batch; b++) changed.add(randomChange(r, w, n, r() < 0.85));
    clock += r() < 0.5 ? 300 : 1500;
    await syncer.partial(changed, w.ports(), w.endpoints());
  }
  clock += 5000;
  await syncer.partial([], w.ports(), w.endpoints());
  // The listing a full sync starts from, read from the kernel's dumps and from nft's JSON.
  const plainListing = (l: Listing): string =>
    JSON.stringify({
      ...l,
      digests: undefined,
      slotBlocks: undefined,
      chains: [...l.chains].sort(),
      sets: [...l.sets].sort(),
      elements: [...l.elements].map(([m, e]) => [m, [...e].sort()]).sort(),
      baseChains: [...(l.baseChains ?? [])].sort(),
    });
  const listings = {
    netlink: plainListing(await netlink.list()),
    nft: plainListing(await exec.list()),
    digests: (await netlink.list()).digests?.size ?? 0,
    slotBlocks: (await netlink.list()).slotBlocks?.size ?? 0,
    groupChains: [...(await netlink.list()).chains].filter((c) => c.startsWith('clusterip-group/')).length,
  };
  // A restart over this table: the rules read back over netlink leave every chain the encoder knows untouched.
  const before = transactions.length;
  const restarted = new NftSyncer(recording, ctx, { now: () => clock });
  const restart = await restarted.full(w.ports(), w.endpoints());
  const restartText = transactions.slice(before).join('');
  const rewrites =
    restartText.match(
      new RegExp(
        `^add rule ${FAM} kube-proxy (?:(?:service|external|local|firewall|endpoint)-[A-Z2-7]{8}-|clusterip-group/).*$`,
        'gm',
      ),
    ) ?? [];
  // Every block of endpoint slots adopted (group chains' rules by their cluster IP and port): no range rewritten.
  const slotRewrites = (restartText.match(/^(?:add|delete) element \S+ kube-proxy endpoint-slots-.*$/gm) ?? []).length;
  const unknown = /@affinity|fib |comment |update @/;
  const chainOf = (l: string): string => l.split(' ')[4]!;
  const opaque = new Set(rewrites.filter((l) => unknown.test(l)).map(chainOf));
  const restartRewrites = rewrites.filter((l) => !opaque.has(chainOf(l)));
  const viaNetlink = await snapshot();
  execFileSync('nft', ['delete', 'table', FAM, 'kube-proxy']);
  for (const t of transactions) await exec.run(t);
  const viaNft = await snapshot();
  netlink.close();
  const partial = { netlink: netlink.counts.netlink - full.netlink, nft: netlink.counts.nft - full.nft };
  process.stdout.write(
    JSON.stringify({
      full,
      partial,
      transactions: transactions.length,
      restart: { ops: restart.ops, rewrites: rewrites.length, restartRewrites, slotRewrites },
      listings,
      viaNetlink,
      viaNft,
    }) + '\n',
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});
