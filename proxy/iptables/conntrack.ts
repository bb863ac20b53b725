// conntrack, as the kube-proxy uses it: deleting stale UDP flows, listing them.
import type { IPFamily } from '../../kube/cidr.js';
import { runCommand } from '../../kube/iptables.js';

/** conntrack -D; "0 flow entries" (exit 1) is not an error. */
export async function conntrackDelete(args: string[]): Promise<number> {
  const r = await runCommand('conntrack', ['-D', ...args]);
  const n = /(\d+) flow entries have been deleted/.exec(r.stderr + r.stdout);
  if (r.code !== 0 && !n) throw new Error(`conntrack -D ${args.join(' ')}: ${r.stderr.trim()}`);
  return n ? Number(n[1]) : 0;
}

/** conntrack -L -p udp [-f ipv6]: the UDP flows of one family, one per line. */
export async function conntrackListUdp(family: IPFamily = 'IPv4'): Promise<string> {
  const args = ['-L', '-p', 'udp', ...conntrackFamily(family)];
  const r = await runCommand('conntrack', args);
  if (r.code !== 0) throw new Error(`conntrack ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** conntrack's family option: IPv4 is its default. */
export const conntrackFamily = (family: IPFamily): string[] => (family === 'IPv6' ? ['-f', 'ipv6'] : []);
