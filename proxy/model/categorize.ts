// Which endpoints a service port sends traffic to (upstream
// CategorizeEndpoints): ready endpoints, else serving-and-terminating ones,
// for Cluster policy; local ready, else local serving-and-terminating, for
// Local policy. Topology hints are not used.
import type { Endpoint } from './endpoints.js';
import { externallyAccessible, type ServicePort, usesClusterEndpoints, usesLocalEndpoints } from './service-port.js';

export interface Categorized {
  cluster: Endpoint[];
  local: Endpoint[];
  /** Every endpoint some rule of this service can reach (the SEP chains to write). */
  reachable: Endpoint[];
  /** Any usable endpoint anywhere: decides REJECT (none) versus DROP (none local). */
  hasAny: boolean;
}

export function categorize(endpoints: Endpoint[], sp: ServicePort): Categorized {
  let cluster: Endpoint[] = [];
  let local: Endpoint[] = [];
  let hasAny = false;
  if (usesClusterEndpoints(sp)) {
    cluster = endpoints.filter((e) => e.ready);
    if (cluster.length === 0) cluster = endpoints.filter((e) => e.serving && e.terminating);
    hasAny = cluster.length > 0;
  }
  if (!usesLocalEndpoints(sp)) return { cluster, local, reachable: cluster, hasAny };
  let localReady = false;
  let localServingTerminating = false;
  for (const e of endpoints) {
    if (e.ready) {
      hasAny = true;
      if (e.local) localReady = true;
    } else if (e.serving && e.terminating) {
      hasAny = true;
      if (e.local) localServingTerminating = true;
    }
  }
  if (localReady) local = endpoints.filter((e) => e.local && e.ready);
  else if (localServingTerminating) local = endpoints.filter((e) => e.local && e.serving && e.terminating);
  if (!usesClusterEndpoints(sp)) return { cluster, local, reachable: local, hasAny };
  const merged = new Map<string, Endpoint>();
  for (const e of [...cluster, ...local]) merged.set(e.addr, e);
  return { cluster, local, reachable: [...merged.values()], hasAny };
}

/** Which of a service port's chains carry traffic, for either mode's renderer (upstream syncProxyRules' booleans). */
export interface TrafficPlan {
  /** The Cluster-policy endpoint chain is written. */
  usesCluster: boolean;
  /** The Local-policy endpoint chain is written. */
  usesLocal: boolean;
  /** Cluster IP traffic has somewhere to go (else REJECT, or DROP for Local with no local endpoint). */
  hasInternal: boolean;
  /** External traffic has somewhere to go. */
  hasExternal: boolean;
  /** The external chain is written (it short-circuits pod and node traffic even without external endpoints). */
  usesExternal: boolean;
}

export function trafficPlan(sp: ServicePort, c: Categorized): TrafficPlan {
  return {
    usesCluster: c.cluster.length > 0 && usesClusterEndpoints(sp),
    usesLocal: c.local.length > 0 && usesLocalEndpoints(sp),
    hasInternal: c.hasAny && (!sp.internalPolicyLocal || c.local.length > 0),
    hasExternal: c.hasAny && (!sp.externalPolicyLocal || c.local.length > 0),
    usesExternal: c.hasAny && externallyAccessible(sp),
  };
}
