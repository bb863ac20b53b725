// Removing a proxy mode's rules (upstream CleanupLeftovers): `--cleanup`
// removes both modes' and exits; each mode removes the other's at start, so
// a switch between iptables and nftables leaves nothing stale behind.
import type { Iptables } from '../kube/iptables.js';
import {
  isServiceChain,
  KUBE_EXTERNAL_SERVICES,
  KUBE_FORWARD,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from './iptables/chains.js';

const OURS = {
  filter: new Set([KUBE_SERVICES, KUBE_EXTERNAL_SERVICES, KUBE_FORWARD, KUBE_NODEPORTS, KUBE_PROXY_FIREWALL]),
  nat: new Set([KUBE_SERVICES, KUBE_NODEPORTS, KUBE_POSTROUTING]),
};
const BUILTIN = new Set(['INPUT', 'OUTPUT', 'FORWARD', 'PREROUTING', 'POSTROUTING']);

/** The iptables-restore text that removes the iptables mode's chains and the jumps to them from one table's save; '' when none. */
export function iptablesLeftovers(table: 'filter' | 'nat', save: string): string {
  return chainRemoval(table, save, (c) => OURS[table].has(c) || (table === 'nat' && isServiceChain(c)));
}

/** The iptables-restore text that removes the chains `ours` picks and the built-in chains' jumps to them; '' when none. */
export function chainRemoval(table: 'filter' | 'nat', save: string, ours: (chain: string) => boolean): string {
  const chains: string[] = [];
  const jumps: string[] = [];
  for (const l of save.split('\n')) {
    if (l.startsWith(':')) {
      const c = l.slice(1).split(' ')[0]!;
      if (ours(c)) chains.push(c);
    } else if (l.startsWith('-A ')) {
      const [, src] = l.split(' ');
      const target = / -j (\S+)/.exec(l)?.[1];
      if (src && BUILTIN.has(src) && target && ours(target)) jumps.push(`-D${l.slice(2)}`);
    }
  }
  if (!chains.length && !jumps.length) return '';
  return [
    `*${table}`,
    ...chains.map((c) => `:${c} - [0:0]`),
    ...jumps,
    ...chains.map((c) => `-X ${c}`),
    'COMMIT',
    '',
  ].join('\n');
}

/** Removes the iptables mode's rules; the names of the tables that had some. */
export async function cleanupIptables(ipt: Iptables): Promise<string[]> {
  const done: string[] = [];
  for (const table of ['nat', 'filter'] as const) {
    const text = iptablesLeftovers(table, await ipt.save(table));
    if (!text) continue;
    await ipt.restore(text);
    done.push(table);
  }
  return done;
}
