// RBAC escalation prevention (upstream pkg/registry/rbac/validation): a
// subject may only write a Role or ClusterRole whose rules it already holds
// (or with the `escalate` verb), and only bind a role whose rules it holds
// (or with the `bind` verb on that role). The rule arithmetic here is pure;
// the admission plugin in rbac-admission.ts applies it to requests.
import type { PolicyRule } from './authorizer.js';

const has = (list: string[] | undefined, v: string): boolean => (list ?? []).includes(v);
const hasAll = (owner: string[] | undefined, wanted: string[] | undefined): boolean =>
  (wanted ?? []).every((w) => has(owner, w));

/** One rule split into single group/resource/verb(/name) and URL/verb rules (BreakdownRule). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if (rule.resourceNames?.length)
          for (const name of rule.resourceNames)
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function resourceCoversAll(owner: string[] | undefined, wanted: string[] | undefined): boolean {
  if (has(owner, '*') || hasAll(owner, wanted)) return true;
  return (wanted ?? []).every((w) => {
    const slash = w.indexOf('/');
    // "*/scale" covers every resource's scale subresource.
    return slash > 0 && has(owner, `*${w.slice(slash)}`);
  });
}

const urlCovers = (owner: string, wanted: string): boolean =>
  owner === wanted || (owner.endsWith('*') && wanted.startsWith(owner.replace(/\*+$/, '')));
const urlsCoverAll = (owner: string[] | undefined, wanted: string[] | undefined): boolean =>
  (wanted ?? []).every((w) => (owner ?? []).some((o) => urlCovers(o, w)));

/** ruleCovers: whether one owner rule grants everything one (broken down) rule asks for. */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = urlsCoverAll(owner.nonResourceURLs, sub.nonResourceURLs);
  const names = sub.resourceNames?.length
    ? !owner.resourceNames?.length || hasAll(owner.resourceNames, sub.resourceNames)
    : !owner.resourceNames?.length;
  return verbs && groups && resources && names && urls;
}

/** validation.Covers: the broken-down rules of `wanted` that no owner rule grants (empty: covered). */
export function missingRules(owner: PolicyRule[], wanted: PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of wanted)
    for (const sub of breakdownRule(rule)) if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
  return missing;
}

/** CompactRules: simple rules (one group, one resource, at most one name) that differ only by verb become one. */
export function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple =
      !r.nonResourceURLs?.length &&
      r.apiGroups?.length === 1 &&
      r.resources?.length === 1 &&
      (r.resourceNames?.length ?? 0) <= 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups![0], r.resources![0], r.resourceNames?.[0] ?? null]);
    const prev = simple.get(key);
    if (prev) prev.verbs = [...prev.verbs, ...r.verbs];
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: ["a" "b"]. */
export const goQuotedList = (l: string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

/** rbacv1helpers.CompactString: {APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuotedList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuotedList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuotedList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuotedList(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goQuotedList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** ConfirmNoEscalation's message, or undefined when the owner's rules cover `wanted`. */
export function escalationError(
  user: { name: string; groups: string[] },
  owner: PolicyRule[],
  wanted: PolicyRule[],
): string | undefined {
  const missing = missingRules(owner, wanted);
  if (!missing.length) return undefined;
  const lines = [...new Set(compactRules(missing).map(compactString))].sort();
  return `user ${JSON.stringify(user.name)} (groups=${goQuotedList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
}

/** What creating an aggregated ClusterRole needs (upstream: full authority). */
export const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];
