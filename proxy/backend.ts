// What a proxy mode does with a sync: the proxier tracks Services and
// EndpointSlices and decides when to sync and whether fully; a backend
// (iptables or nftables) turns that into kernel rules.
import type { Endpoint } from './model/endpoints.js';
import type { IPFamily } from './model/family.js';
import type { ServicePort } from './model/service-port.js';

export interface SyncInput {
  full: boolean;
  /** Services ("ns/name") changed since the last successful sync. */
  changed: Set<string>;
  /** Service ports by Service. */
  ports: ReadonlyMap<string, ServicePort[]>;
  /** Endpoints by port key. */
  endpoints: ReadonlyMap<string, Endpoint[]>;
  /** The Node's InternalIP of the backend's family, or ''. */
  nodeIP: string;
  /** The Node's pod CIDR of that family (for --detect-local-mode=NodeCIDR), or ''. */
  nodeCIDR: string;
}

export interface SyncOutcome {
  renderMs: number;
  applyMs: number;
  bytes: number;
  noLocalInternal: number;
  noLocalExternal: number;
  /** For the debug log: what was written. */
  summary: string;
}

export interface ProxyBackend {
  readonly mode: 'iptables' | 'nftables';
  /** The family of every address it is given (a dual-stack proxy has one backend per family). */
  readonly family: IPFamily;
  sync(i: SyncInput): Promise<SyncOutcome>;
  /** The error log line for a failed sync. */
  describe(e: Error): string;
}
