// e2e: the nftables mode's netlink path against the real kernel. In a throwaway network namespace, random Service
// and endpoint changes are synced with partial syncs going over netlink (anything else through nft); the same
// transactions replayed through `nft -f -` on a fresh table must give the same table, rule for rule and byte for
// byte (the kernel's own dump of each rule's expressions), so the encoder writes exactly what nft would; and a
// restart over that table, listing it and reading the rules back over netlink, leaves the chains it has alone.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';

import { e2eSkipReason, REPO } from './harness.js';
import { sh } from './proc.js';

const skip = e2eSkipReason();

interface Outcome {
  partial: { netlink: number; nft: number };
  restart: { ops: number; rewrites: number; restartRewrites: string[]; slotRewrites: number };
  listings: { netlink: string; nft: string; digests: number; slotBlocks: number; groupChains: number };
  viaNetlink: { json: string; debug: string; rules: string };
  viaNft: { json: string; debug: string; rules: string };
}

for (const [seed, family] of [
  [7, 'ip'],
  [11, 'ip'],
  [13, 'ip6'],
] as const) {
  test(
    `partial syncs over netlink leave the table nft would (table ${family}, seed ${seed})`,
    { skip, timeout: 180_000 },
    () => {
      const netns = `tskube-nl-${randomBytes(3).toString('hex')}`;
      sh('ip', ['netns', 'add', netns]);
      try {
        const out = execFileSync(
          'nsenter',
          [
            `--net=/run/netns/${netns}`,
            process.execPath,
            '--import',
            'tsx',
            path.join(REPO, 'e2e/nft-netlink-runner.ts'),
            String(seed),
            family,
          ],
          { cwd: REPO, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 170_000 },
        );
        const r = JSON.parse(out.trim().split('\n').pop()!) as Outcome;
        // Most partial syncs are plain Services and go over netlink; those with affinity, Local policies or source
        // ranges (fib, comments, sets) go through nft, in the same run.
        assert.ok(r.partial.netlink >= 50, `partial syncs over netlink: ${JSON.stringify(r.partial)}`);
        assert.ok(r.partial.nft >= 1, `partial syncs through nft: ${JSON.stringify(r.partial)}`);
        assert.match(r.viaNetlink.json, /"dnat"/);
        assert.match(r.viaNetlink.json, /"numgen"/);
        assert.match(r.viaNetlink.debug, /userdata/); // element comments
        assert.ok(r.viaNetlink.rules.split('\n').length > 40, 'rules dumped');
        assert.equal(r.viaNetlink.rules, r.viaNft.rules);
        // The listing read from the kernel's dumps is nft's, with a digest of every chain's rules.
        assert.equal(r.listings.netlink, r.listings.nft);
        assert.ok(r.listings.digests >= 10, `digests: ${r.listings.digests}`);
        // And the block of endpoint slots each service chain's rule looks up.
        assert.ok(r.listings.slotBlocks >= 5, `slot blocks: ${r.listings.slotBlocks}`);
        assert.match(r.viaNetlink.json, /endpoint-slots-tcp-\d+/);
        // A restart read every chain's rules back over netlink and rewrote only chains with rules it cannot encode.
        assert.deepEqual(r.restart.restartRewrites, []);
        // Plain ClusterIP Services' rules in shared group chains (4 here), their blocks found by cluster IP and port.
        assert.ok(r.listings.groupChains >= 2, `group chains: ${r.listings.groupChains}`);
        assert.equal(r.restart.slotRewrites, 0, 'no endpoint slot range rewritten by the restart');
        assert.ok(r.restart.rewrites < 40, `restart rewrote ${r.restart.rewrites} service rules`);
        assert.equal(r.viaNetlink.json, r.viaNft.json);
        assert.equal(r.viaNetlink.debug, r.viaNft.debug);
      } finally {
        sh('ip', ['netns', 'del', netns], { allowFail: true });
      }
    },
  );
}
