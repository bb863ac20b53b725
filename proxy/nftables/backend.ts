// The nftables mode: `table ip kube-proxy` kept by an NftSyncer; a full sync
// lists and converges the table, a partial one sends only the differences.
import type { Logger } from '../../kube/log.js';
import type { ProxyBackend, SyncInput, SyncOutcome } from '../backend.js';
import type { ProxyMetrics } from '../metrics.js';
import type { IPFamily } from '../model/family.js';
import type { Nft } from './apply.js';
import type { RenderContext } from './render.js';
import { NftSyncer } from './syncer.js';

export class NftablesBackend implements ProxyBackend {
  readonly mode = 'nftables' as const;
  readonly family: IPFamily;
  private readonly syncer: NftSyncer;
  /** Node IP and pod CIDR the render context was made for. */
  private node: string | undefined;
  /** Transactions sent over netlink so far, when the Nft counts them (NetlinkNft). */
  private readonly viaNetlink: () => number;

  constructor(
    nft: Nft & { counts?: { netlink: number } },
    private readonly context: (nodeIP: string, nodeCIDR: string) => RenderContext,
    private readonly metrics: ProxyMetrics,
    log: Logger,
    chunkOps?: number,
  ) {
    this.viaNetlink = () => nft.counts?.netlink ?? 0;
    const first = context('', '');
    this.family = first.family === 'ip6' ? 'IPv6' : 'IPv4';
    this.syncer = new NftSyncer(nft, first, {
      chunkOps,
      onCleanupError: (e) => {
        metrics.nftCleanupFailures.inc();
        log.warn(`unable to delete stale nftables chains; will retry: ${e.message}`);
      },
    });
  }

  async sync(i: SyncInput): Promise<SyncOutcome> {
    if (i.full || this.node !== `${i.nodeIP} ${i.nodeCIDR}`) {
      // The node's addresses are in the fixed objects (nodeport-ips) and firewall chains: a full sync picks them up.
      this.node = `${i.nodeIP} ${i.nodeCIDR}`;
      this.syncer.setContext(this.context(i.nodeIP, i.nodeCIDR));
    }
    let st;
    const netlink0 = this.viaNetlink();
    try {
      st = i.full
        ? await this.syncer.full(i.ports, i.endpoints)
        : await this.syncer.partial(i.changed, i.ports, i.endpoints);
    } catch (e) {
      this.metrics.nftSyncFailures.inc();
      throw e;
    }
    const t = this.syncer.totals;
    return {
      renderMs: st.renderMs,
      applyMs: st.applyMs,
      bytes: st.bytes,
      noLocalInternal: t.noLocalInternal,
      noLocalExternal: t.noLocalExternal,
      summary: `${t.services} services, ${t.endpoints} endpoints; ${st.ops} nft operations in ${st.transactions} transaction(s)${st.transactions ? `, ${this.viaNetlink() - netlink0} over netlink` : ''}`,
    };
  }

  describe(e: Error): string {
    return `nftables sync failed, keeping the previous rules: ${e.message}`;
  }
}
