// Which IP families and cluster IPs a Service gets (upstream's
// initIPFamilyFields and the dual-stack rules of the Service REST storage):
// ipFamilyPolicy SingleStack, PreferDualStack or RequireDualStack, ipFamilies
// in the order the cluster IPs are in, the primary family of the apiserver's
// --service-cluster-ip-range first by default. Pure: the caller allocates.
import { familyOfText as familyOf, type IPFamily } from '../../kube/cidr.js';

export interface ServiceIPSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
}

export interface Cause {
  field: string;
  message: string;
}

export interface IPPlan {
  /** The final fields. Entries of clusterIPs left '' are to be allocated in their family. */
  clusterIPs: string[];
  ipFamilies: IPFamily[];
  ipFamilyPolicy: string;
  /** Cluster IPs the user asked for, to reserve. */
  reserve: string[];
  /** Cluster IPs of the old Service no longer used (a downgrade to SingleStack). */
  release: string[];
}

const POLICIES = ['SingleStack', 'PreferDualStack', 'RequireDualStack'];
const quoteList = (l: string[]): string => `[${l.map((x) => JSON.stringify(x)).join(',')}]`;

/** The plan for a Service created (old undefined) or updated; `cluster` is the apiserver's families, primary first. */
export function planServiceIPs(
  spec: ServiceIPSpec,
  old: ServiceIPSpec | undefined,
  cluster: IPFamily[],
): IPPlan | Cause[] {
  const causes: Cause[] = [];
  if (spec.type === 'ExternalName')
    return { clusterIPs: [], ipFamilies: [], ipFamilyPolicy: '', reserve: [], release: [] };
  let ips = spec.clusterIPs?.length ? [...spec.clusterIPs] : spec.clusterIP ? [spec.clusterIP] : [];
  if (spec.clusterIP && ips[0] !== spec.clusterIP)
    causes.push({
      field: 'spec.clusterIPs[0]',
      message: `Invalid value: ${quoteList(ips)}: must match clusterIP when both are specified`,
    });
  if (old) {
    const oldIPs = old.clusterIPs ?? (old.clusterIP ? [old.clusterIP] : []);
    if (!ips.length) ips = [...oldIPs];
    if (ips[0] !== oldIPs[0]) return [{ field: 'spec.clusterIPs[0]', message: 'Invalid value: field is immutable' }];
    if (oldIPs[1] && ips[1] && ips[1] !== oldIPs[1])
      return [{ field: 'spec.clusterIPs[1]', message: 'Invalid value: field is immutable' }];
  }
  const headless = ips[0] === 'None';
  if (headless && ips.length > 1)
    causes.push({
      field: 'spec.clusterIPs[1]',
      message: `Invalid value: ${JSON.stringify(ips[1])}: must not be set when clusterIPs[0] is 'None'`,
    });
  let families = [...(spec.ipFamilies ?? old?.ipFamilies ?? [])] as IPFamily[];
  let policy = spec.ipFamilyPolicy ?? old?.ipFamilyPolicy ?? '';
  if (spec.ipFamilyPolicy === undefined && (spec.ipFamilies?.length === 2 || (!headless && ips.length === 2)))
    policy = 'RequireDualStack';
  if (!policy) policy = 'SingleStack';
  if (!POLICIES.includes(policy))
    causes.push({
      field: 'spec.ipFamilyPolicy',
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "PreferDualStack", "RequireDualStack", "SingleStack"`,
    });
  for (const [i, f] of families.entries()) {
    if (f !== 'IPv4' && f !== 'IPv6')
      causes.push({
        field: `spec.ipFamilies[${i}]`,
        message: `Unsupported value: ${JSON.stringify(f)}: supported values: "IPv4", "IPv6"`,
      });
    else if (families.indexOf(f) !== i)
      causes.push({ field: `spec.ipFamilies[${i}]`, message: `Duplicate value: ${JSON.stringify(f)}` });
    else if (!cluster.includes(f) && (i === 0 || policy === 'RequireDualStack'))
      causes.push({
        field: `spec.ipFamilies[${i}]`,
        message: `Invalid value: ${JSON.stringify(f)}: not configured on this cluster`,
      });
  }
  if (!headless) {
    for (const [i, ip] of ips.entries()) {
      const f = familyOf(ip);
      if (families[i] && families[i] !== f)
        causes.push({
          field: `spec.ipFamilies[${i}]`,
          message: `Invalid value: ${JSON.stringify(families[i])}: must match the family of clusterIPs[${i}] (${ip})`,
        });
      if (i === 1 && f === familyOf(ips[0]!))
        causes.push({
          field: 'spec.clusterIPs[1]',
          message: `Invalid value: ${quoteList(ips)}: may specify no more than one IP for each IP family`,
        });
    }
    if (ips.length > 2)
      causes.push({
        field: 'spec.clusterIPs',
        message: `Invalid value: ${quoteList(ips)}: may only hold up to 2 values`,
      });
    families = ips.map((ip, i) => families[i] ?? familyOf(ip)).concat(families.slice(ips.length));
  }
  if (causes.length) return causes;
  if (policy === 'SingleStack' && (families.length > 1 || (!headless && ips.length > 1))) {
    // A downgrade from dual stack keeps the primary and releases the secondary; a new Service must ask consistently.
    if (old) {
      const release = old.clusterIPs?.[1] && old.clusterIPs[1] !== 'None' ? [old.clusterIPs[1]] : [];
      return {
        clusterIPs: ips.slice(0, 1),
        ipFamilies: families.slice(0, 1),
        ipFamilyPolicy: policy,
        reserve: [],
        release,
      };
    }
    return [
      {
        field: 'spec.ipFamilyPolicy',
        message: `Invalid value: "SingleStack": must be RequireDualStack or PreferDualStack when multiple 'ipFamilies' are specified`,
      },
    ];
  }
  if (policy === 'RequireDualStack' && cluster.length < 2)
    return [
      {
        field: 'spec.ipFamilyPolicy',
        message: 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
      },
    ];
  if (!families.length) families = [cluster[0]!];
  if (policy !== 'SingleStack' && families.length === 1 && cluster.length === 2)
    families.push(cluster.find((f) => f !== families[0])!);
  // PreferDualStack on a single-stack cluster keeps what the cluster has.
  families = families.filter((f) => cluster.includes(f));
  const oldIPs = old?.clusterIPs ?? (old?.clusterIP ? [old.clusterIP] : []);
  const clusterIPs = headless ? ['None'] : families.map((_, i) => ips[i] ?? '');
  const reserve = headless ? [] : clusterIPs.filter((ip, i) => ip && ip !== oldIPs[i]);
  return { clusterIPs, ipFamilies: families, ipFamilyPolicy: policy, reserve, release: [] };
}
