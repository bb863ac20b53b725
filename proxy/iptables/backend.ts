// The iptables mode: jump rules from the built-in chains, then one
// iptables-restore of the rendered ruleset (every Service's chains on a full
// sync, only the changed ones' otherwise).
import { chainsInSave, type Iptables, RestoreError } from '../../kube/iptables.js';
import type { ProxyBackend, SyncInput, SyncOutcome } from '../backend.js';
import type { ProxyMetrics } from '../metrics.js';
import type { IPFamily } from '../model/family.js';
import { type DetectLocal, localDetector } from '../model/local-detector.js';
import { JUMP_RULES, jumpArgs, KUBE_FIREWALL } from './chains.js';
import { renderIptables, type ServiceChains } from './render.js';

export interface IptablesOptions {
  /** IPv6: ip6tables rules (the Iptables runs the ip6tables binaries). Default IPv4. */
  family?: IPFamily;
  masqueradeMark: string;
  masqueradeAll: boolean;
  detectLocal: DetectLocal;
  localhostNodePorts: boolean;
  conntrackTCPLiberal: boolean;
  /** --nodeport-addresses resolved for a node IP; undefined: every local address. */
  nodePortIPs?: (nodeIP: string) => string[] | undefined;
}

export class IptablesBackend implements ProxyBackend {
  readonly mode = 'iptables' as const;
  readonly family: IPFamily;
  private activeChains = new Set<string>();
  /** Unchanged Services' chains from the last render: a partial sync does not build them again. */
  private perService: ReadonlyMap<string, ServiceChains> | undefined;

  constructor(
    private readonly ipt: Iptables,
    private readonly o: IptablesOptions,
    private readonly metrics: ProxyMetrics,
  ) {
    this.family = o.family ?? 'IPv4';
  }

  private async ensureJumps(): Promise<void> {
    for (const j of JUMP_RULES) {
      // kubelet's KUBE-FIREWALL guards route_localnet, an IPv4-only sysctl.
      if (j.dst === KUBE_FIREWALL && this.family === 'IPv6') continue;
      await this.ipt.ensureChain(j.table, j.dst);
      await this.ipt.ensureRule(j.table, j.src, jumpArgs(j));
    }
  }

  async sync(i: SyncInput): Promise<SyncOutcome> {
    let existing: Iterable<string> = this.activeChains;
    if (i.full) {
      await this.ensureJumps();
      existing = chainsInSave(await this.ipt.save('nat'));
    }
    const r0 = performance.now();
    const services = [...i.ports.values()].flat();
    const out = renderIptables({
      family: this.family,
      services,
      endpoints: i.endpoints as Map<string, never>,
      masqueradeMark: this.o.masqueradeMark,
      masqueradeAll: this.o.masqueradeAll,
      localDetector: localDetector(this.o.detectLocal, i.nodeCIDR, this.family)?.iptables,
      nodeIP: i.nodeIP,
      nodePortIPs: this.o.nodePortIPs?.(i.nodeIP),
      localhostNodePorts: this.o.localhostNodePorts,
      conntrackTCPLiberal: this.o.conntrackTCPLiberal,
      randomFully: true,
      changed: i.full ? undefined : i.changed,
      existingNatChains: existing,
      perService: i.full ? undefined : this.perService,
    });
    const a0 = performance.now();
    await this.ipt.restore(out.text);
    const applyMs = performance.now() - a0;
    this.activeChains = out.activeNatChains;
    this.perService = out.perService;
    const m = this.metrics;
    m.rulesTotal.set({ table: 'filter' }, out.filterRules);
    m.rulesLast.set({ table: 'filter' }, out.filterRules);
    m.rulesTotal.set({ table: 'nat' }, out.natRulesTotal);
    m.rulesLast.set({ table: 'nat' }, out.natRules);
    return {
      renderMs: a0 - r0,
      applyMs,
      bytes: out.text.length,
      noLocalInternal: out.noLocalEndpointsInternal,
      noLocalExternal: out.noLocalEndpointsExternal,
      summary: `${services.length} service ports, ${out.totalEndpoints} endpoints`,
    };
  }

  describe(e: Error): string {
    if (e instanceof RestoreError)
      return `failed to execute iptables-restore, keeping the previous rules: ${e.message}${e.context ? `\n${e.context}` : ''}`;
    return `sync of proxy rules failed: ${e.message}`;
  }
}
