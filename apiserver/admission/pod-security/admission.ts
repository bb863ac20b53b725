// The PodSecurity admission plugin (on by default upstream): a namespace's
// pod-security.kubernetes.io labels choose the level pods are held to. Pods
// that break the enforce level are refused; the audit level's violations are
// recorded; the warn level's come back as warnings, also for the pod templates
// of workloads, which are never refused. Messages are upstream's
// (k8s.io/pod-security-admission/admission).
import type { Container, Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

import type { AdmissionPlugin, Attributes, GetObject, ListObjects } from '../../api/admission.js';
import { errors } from '../../api/errors.js';
import type { Obj } from '../../storage/store.js';
import type { PodSpec } from './checks.js';
import { evaluatePod, forbiddenDetail, forbiddenReason, type Violation } from './evaluator.js';
import {
  compareLevels,
  fullyPrivileged,
  LABEL_PREFIX,
  LABELS,
  type LevelVersion,
  levelVersionString,
  policiesEquivalent,
  type Policy,
  policyFromLabels,
  PRIVILEGED_LATEST,
  sameLevelVersion,
  sameVersion,
} from './policy.js';

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: { usernames: string[]; namespaces: string[]; runtimeClasses: string[] };
}

/** Upstream's defaults: privileged:latest for all three modes, nothing exempt (kube-system included). */
export const DEFAULT_POD_SECURITY: PodSecurityConfiguration = {
  defaults: { enforce: PRIVILEGED_LATEST, audit: PRIVILEGED_LATEST, warn: PRIVILEGED_LATEST },
  exemptions: { usernames: [], namespaces: [], runtimeClasses: [] },
};

/** Resources whose objects carry a pod template, and where it is. */
const TEMPLATES: Record<string, (o: Obj) => PodTemplateSpec | undefined> = {
  '/replicationcontrollers': (o) => o.spec?.template,
  '/podtemplates': (o) => o.template,
  'apps/replicasets': (o) => o.spec?.template,
  'apps/deployments': (o) => o.spec?.template,
  'apps/statefulsets': (o) => o.spec?.template,
  'apps/daemonsets': (o) => o.spec?.template,
  'batch/jobs': (o) => o.spec?.template,
  'batch/cronjobs': (o) => o.spec?.jobTemplate?.spec?.template,
};

/** Pod subresources PodSecurity leaves alone. */
const IGNORED_POD_SUBRESOURCES = new Set([
  'exec',
  'attach',
  'binding',
  'eviction',
  'log',
  'portforward',
  'proxy',
  'status',
]);

/** Enforce-level changes are checked against at most this many existing pods. */
const NAMESPACE_MAX_PODS_TO_CHECK = 3000;

const AUDIT = {
  enforcePolicy: `${LABEL_PREFIX}enforce-policy`,
  auditViolations: `${LABEL_PREFIX}audit-violations`,
  exempt: `${LABEL_PREFIX}exempt`,
  error: `${LABEL_PREFIX}error`,
};

const labelsOf = (o: Obj | undefined): Record<string, string> | undefined =>
  o?.metadata?.labels as Record<string, string> | undefined;

/** An image change, or a container added or removed: what makes a pod update worth checking again. */
function significantPodUpdate(pod: Pod, old: Pod): boolean {
  const images = (cs: Container[] | undefined): string[] => (cs ?? []).map((c) => c.image ?? '');
  const now = pod.spec ?? { containers: [] };
  const before = old.spec ?? { containers: [] };
  if (images(now.containers).join('\n') !== images(before.containers).join('\n')) return true;
  if (images(now.initContainers).join('\n') !== images(before.initContainers).join('\n')) return true;
  return (now.ephemeralContainers ?? []).some((c) => {
    const was = (before.ephemeralContainers ?? []).find((o) => o.name === c.name);
    return !was || was.image !== c.image;
  });
}

export function podSecurity(config: PodSecurityConfiguration = DEFAULT_POD_SECURITY): AdmissionPlugin {
  const exemptNamespace = (ns: string): boolean => ns !== '' && config.exemptions.namespaces.includes(ns);
  const exemptUser = (user: string): boolean => user !== '' && config.exemptions.usernames.includes(user);
  const exemptRuntimeClass = (spec: PodSpec): boolean =>
    Boolean(spec.runtimeClassName) && config.exemptions.runtimeClasses.includes(spec.runtimeClassName!);
  const policyOf = (labels: Record<string, string> | undefined) => policyFromLabels(labels, config.defaults);

  /** Enforce (pods only), audit and warn one pod or template; throws 403 when enforce refuses. */
  function evaluate(
    a: Attributes,
    parsed: ReturnType<typeof policyOf>,
    meta: ObjectMeta,
    spec: PodSpec,
    enforce: boolean,
  ): void {
    if (exemptRuntimeClass(spec)) {
      a.annotate?.(AUDIT.exempt, 'runtimeClass');
      return;
    }
    const { policy, errors: labelErrors } = parsed;
    if (labelErrors.length)
      a.annotate?.(
        AUDIT.error,
        `Failed to parse policy: ${labelErrors.map((e) => `${e.field}: ${e.message}`).join(', ')}`,
      );
    const results = new Map<string, Violation[]>();
    const resultOf = (lv: LevelVersion): Violation[] => {
      const key = levelVersionString(lv);
      if (!results.has(key)) results.set(key, evaluatePod(lv, meta, spec));
      return results.get(key)!;
    };
    let refusal: string | undefined;
    if (enforce) {
      a.annotate?.(AUDIT.enforcePolicy, levelVersionString(policy.enforce));
      const found = resultOf(policy.enforce);
      if (found.length)
        refusal = `violates PodSecurity "${levelVersionString(policy.enforce)}": ${forbiddenDetail(found)}`;
    }
    const audit = resultOf(policy.audit);
    if (audit.length) {
      a.annotate?.(
        AUDIT.auditViolations,
        `would violate PodSecurity "${levelVersionString(policy.audit)}": ${forbiddenDetail(audit)}`,
      );
    }
    if (refusal) throw errors.forbiddenObject(a.resource.resource, a.resource.group, a.name, refusal);
    const warn = resultOf(policy.warn);
    if (warn.length)
      a.warn?.(`would violate PodSecurity "${levelVersionString(policy.warn)}": ${forbiddenDetail(warn)}`);
  }

  /** A namespace's labels must parse; a stricter enforce level warns about the pods already there. */
  function admitNamespace(a: Attributes, list: ListObjects): void {
    const name = a.name;
    const labels = labelsOf(a.object);
    const { policy, errors: labelErrors } = policyOf(labels);
    const invalid = () => errors.invalid('Namespace', '', name, labelErrors);
    if (a.operation === 'CREATE') {
      if (labelErrors.length) throw invalid();
      if (exemptNamespace(name)) exemptWarning(a, policy, labels ?? {});
      return;
    }
    const before = policyOf(labelsOf(a.oldObject));
    if (labelErrors.length && (!before.errors.length || JSON.stringify(labelErrors) !== JSON.stringify(before.errors)))
      throw invalid();
    const next = policy.enforce;
    const prev = before.policy.enforce;
    if (sameLevelVersion(next, prev) || next.level === 'privileged') return;
    if (sameVersion(next.version, prev.version) && compareLevels(next.level, prev.level) < 1) return;
    if (exemptNamespace(name)) {
      exemptWarning(a, policy, labels ?? {});
      return;
    }
    for (const w of existingPodWarnings(name, next, list('', 'pods', name) as Pod[])) a.warn?.(w);
  }

  function exemptWarning(a: Attributes, policy: Policy, labels: Record<string, string>): void {
    if (fullyPrivileged(policy) || policiesEquivalent(policy, config.defaults)) return;
    const has = (level: string, version: string): boolean =>
      labels[level] !== undefined || labels[version] !== undefined;
    const modes = [
      policy.enforce.level !== 'privileged' &&
        has(LABELS.enforce, LABELS.enforceVersion) &&
        `enforce=${levelVersionString(policy.enforce)}`,
      policy.audit.level !== 'privileged' &&
        has(LABELS.audit, LABELS.auditVersion) &&
        `audit=${levelVersionString(policy.audit)}`,
      policy.warn.level !== 'privileged' &&
        has(LABELS.warn, LABELS.warnVersion) &&
        `warn=${levelVersionString(policy.warn)}`,
    ].filter(Boolean);
    a.warn?.(`namespace "${a.name}" is exempt from Pod Security, and the policy (${modes.join(', ')}) will be ignored`);
  }

  /** One warning per distinct violation among the namespace's pods, naming the first pod and how many others. */
  function existingPodWarnings(ns: string, enforce: LevelVersion, pods: Pod[]): string[] {
    // One pod per controller first, so a large ReplicaSet does not hide the others.
    const seen = new Set<string>();
    const first: Pod[] = [];
    const rest: Pod[] = [];
    for (const pod of pods) {
      if (exemptRuntimeClass((pod.spec ?? { containers: [] }) as PodSpec)) continue;
      const owner = pod.metadata?.ownerReferences?.find((r) => r.controller)?.uid;
      if (owner && seen.has(owner)) rest.push(pod);
      else {
        if (owner) seen.add(owner);
        first.push(pod);
      }
    }
    const ordered = [...first, ...rest];
    const checked = ordered.slice(0, NAMESPACE_MAX_PODS_TO_CHECK);
    const byReason = new Map<string, { pod: string; count: number }>();
    for (const pod of checked) {
      const found = evaluatePod(enforce, pod.metadata ?? {}, (pod.spec ?? { containers: [] }) as PodSpec);
      if (!found.length) continue;
      const reason = forbiddenReason(found);
      const name = pod.metadata?.name ?? '';
      const c = byReason.get(reason);
      if (!c) byReason.set(reason, { pod: name, count: 1 });
      else {
        c.count++;
        if (name < c.pod) c.pod = name;
      }
    }
    const warnings: string[] = [];
    if (checked.length < ordered.length) {
      warnings.push(
        `new PodSecurity enforce level only checked against the first ${checked.length} of ${ordered.length} existing pods`,
      );
    }
    if (byReason.size) {
      warnings.push(
        `existing pods in namespace "${ns}" violate the new PodSecurity enforce level "${levelVersionString(enforce)}"`,
      );
    }
    const perReason = [...byReason].map(([reason, { pod, count }]) => {
      const others = count === 1 ? '' : count === 2 ? ' (and 1 other pod)' : ` (and ${count - 1} other pods)`;
      return `${pod}${others}: ${reason}`;
    });
    return [...warnings, ...perReason.sort()];
  }

  function namespaceLabels(get: GetObject, ns: string): Record<string, string> | undefined {
    const namespace = get('', 'namespaces', '', ns);
    if (!namespace) throw errors.internal(`failed to lookup namespace "${ns}"`);
    return labelsOf(namespace);
  }

  function admitPod(a: Attributes, get: GetObject): void {
    if (IGNORED_POD_SUBRESOURCES.has(a.subresource)) return;
    if (exemptNamespace(a.namespace)) return a.annotate?.(AUDIT.exempt, 'namespace');
    if (exemptUser(a.user.name)) return a.annotate?.(AUDIT.exempt, 'user');
    const labels = namespaceLabels(get, a.namespace);
    const parsed = policyOf(labels);
    const { policy, errors: labelErrors } = parsed;
    if (!labelErrors.length && fullyPrivileged(policy)) {
      return a.annotate?.(AUDIT.enforcePolicy, levelVersionString(PRIVILEGED_LATEST));
    }
    const pod = a.object as Pod;
    if (a.operation === 'UPDATE' && a.oldObject && !significantPodUpdate(pod, a.oldObject as Pod)) return;
    evaluate(a, parsed, pod.metadata ?? {}, (pod.spec ?? { containers: [] }) as PodSpec, true);
  }

  function admitTemplate(a: Attributes, get: GetObject, template: (o: Obj) => PodTemplateSpec | undefined): void {
    if (a.subresource !== '') return;
    if (exemptNamespace(a.namespace)) return a.annotate?.(AUDIT.exempt, 'namespace');
    if (exemptUser(a.user.name)) return a.annotate?.(AUDIT.exempt, 'user');
    const namespace = get('', 'namespaces', '', a.namespace);
    if (!namespace) return a.annotate?.(AUDIT.error, `failed to lookup namespace "${a.namespace}"`);
    const labels = labelsOf(namespace);
    const parsed = policyOf(labels);
    const { policy, errors: labelErrors } = parsed;
    if (!labelErrors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
    const t = a.object ? template(a.object) : undefined;
    if (!t) return;
    evaluate(a, parsed, t.metadata ?? {}, (t.spec ?? { containers: [] }) as PodSpec, false);
  }

  return {
    name: 'PodSecurity',
    admit(a, get, list): void {
      if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
      const key = `${a.resource.group}/${a.resource.resource}`;
      if (key === '/namespaces') {
        if (a.subresource === '') admitNamespace(a, list);
        return;
      }
      if (key === '/pods') return admitPod(a, get);
      const template = TEMPLATES[key];
      if (template) admitTemplate(a, get, template);
    },
  };
}
