// Which admission webhooks a request goes to: upstream's rules matcher, namespace and object selectors
// (k8s.io/apiserver/pkg/admission/plugin/webhook/{predicates,generic}).
import type { RuleWithOperations } from 'kubernetes-types/admissionregistration/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';

import { labelSelectorMatches } from '../../../kube/selectors.js';
import type { Obj } from '../../storage/store.js';

/** RuleWithOperations with the fields of its inlined Rule (kubernetes-types leaves them out). */
export type WebhookRule = RuleWithOperations & { resources?: string[]; scope?: string };

export type WebhookOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** What of a request the matchers read. */
export interface RequestTarget {
  operation: WebhookOperation;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  object?: Obj;
  oldObject?: Obj;
}

/** Requests for these are never sent to webhooks, so a webhook cannot lock the cluster out of fixing it. */
const EXEMPT = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

export function isExempt(t: RequestTarget): boolean {
  return t.group === 'admissionregistration.k8s.io' && EXEMPT.has(t.resource);
}

const has = (list: readonly string[] | undefined, v: string): boolean =>
  (list ?? []).includes('*') || (list ?? []).includes(v);

/** rules.Matcher: operation, group, version, resource/subresource and scope. */
export function ruleMatches(rule: WebhookRule, t: RequestTarget): boolean {
  if (!has(rule.operations, t.operation) || !has(rule.apiGroups, t.group) || !has(rule.apiVersions, t.version))
    return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && t.namespace !== '') return false;
  if (scope === 'Namespaced' && t.namespace === '') return false;
  return (rule.resources ?? []).some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === t.resource) && (sub === '*' || sub === t.subresource);
  });
}

/**
 * The namespace selector: a namespaced request is matched on its namespace's labels, a Namespace on its own;
 * other cluster-scoped requests always match. An unknown namespace matches nothing but an empty selector.
 */
export function namespaceMatches(
  selector: LabelSelector | undefined,
  t: RequestTarget,
  namespaceLabels: (name: string) => Record<string, string> | undefined,
): boolean {
  if (!selector || isEverything(selector)) return true;
  if (t.group === '' && t.resource === 'namespaces' && t.subresource === '') {
    const labels = (t.object ?? t.oldObject)?.metadata?.labels as Record<string, string> | undefined;
    return labelSelectorMatches(selector, labels ?? {});
  }
  if (t.namespace === '') return true;
  const labels = namespaceLabels(t.namespace);
  return labels !== undefined && labelSelectorMatches(selector, labels);
}

/** The object selector: the new or the old object's labels match. */
export function objectMatches(selector: LabelSelector | undefined, t: RequestTarget): boolean {
  if (!selector || isEverything(selector)) return true;
  return [t.object, t.oldObject].some(
    (o) => o !== undefined && labelSelectorMatches(selector, (o.metadata?.labels ?? {}) as Record<string, string>),
  );
}

function isEverything(s: LabelSelector): boolean {
  return Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;
}
