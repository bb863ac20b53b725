// upstream's NodePorts check, the scheduler's nodeports plugin, which the kubelet runs again at admission: a pod asking
// for a host port another pod on the node holds, for the same protocol and an overlapping address, does not fit.
import type { ContainerPort, Pod } from 'kubernetes-types/core/v1.js';

const ANY = '0.0.0.0';

function hostPorts(pod: Pod): { ip: string; protocol: string; port: number }[] {
  const ports: ContainerPort[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].flatMap(
    (c) => c.ports ?? [],
  );
  return ports
    .filter((p) => (p.hostPort ?? 0) > 0)
    .map((p) => ({ ip: p.hostIP || ANY, protocol: p.protocol ?? 'TCP', port: p.hostPort! }));
}

/** Whether `pod` wants a host port one of `others` holds (upstream HostPortInfo.CheckConflict). */
export function hostPortConflict(pod: Pod, others: Pod[]): boolean {
  const taken = others.flatMap(hostPorts);
  return hostPorts(pod).some((want) =>
    taken.some(
      (t) =>
        t.port === want.port && t.protocol === want.protocol && (t.ip === ANY || want.ip === ANY || t.ip === want.ip),
    ),
  );
}

/** The admission result upstream's kubelet gives a pod whose host ports are taken. */
export const NODE_PORTS_REJECTION = {
  reason: 'NodePorts',
  message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
};
