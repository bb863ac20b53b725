// Validating and MutatingWebhookConfiguration: v1 defaults and validation, as upstream's
// admissionregistration/v1 defaults and admissionregistration validation.
import type { MatchCondition, MutatingWebhook, ValidatingWebhook } from 'kubernetes-types/admissionregistration/v1.js';

import { checkDns1123Subdomain } from '../../../kube/names.js';
import type { Cause } from '../../api/errors.js';
import type { Obj } from '../../storage/store.js';
import { compileError } from './conditions.js';
import type { WebhookRule } from './match.js';

export type Webhook = Omit<ValidatingWebhook, 'rules'> &
  Partial<Pick<MutatingWebhook, 'reinvocationPolicy'>> & { rules?: WebhookRule[] };

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** SetDefaults_{Validating,Mutating}Webhook, SetDefaults_Rule and SetDefaults_ServiceReference. */
export function defaultWebhookConfiguration(o: Obj, mutating: boolean): void {
  for (const w of (o.webhooks ?? []) as Webhook[]) {
    w.failurePolicy ??= 'Fail';
    w.matchPolicy ??= 'Equivalent';
    w.namespaceSelector ??= {};
    w.objectSelector ??= {};
    w.timeoutSeconds ??= 10;
    if (mutating) w.reinvocationPolicy ??= 'Never';
    for (const r of w.rules ?? []) r.scope ??= '*';
    if (w.clientConfig?.service) w.clientConfig.service.port ??= 443;
  }
}

export function validateWebhookConfiguration(o: Obj, mutating: boolean): Cause[] {
  const causes: Cause[] = [];
  const names = new Set<string>();
  ((o.webhooks ?? []) as Webhook[]).forEach((w, i) => {
    const at = `webhooks[${i}]`;
    if (names.has(w.name))
      causes.push({
        field: `${at}.name`,
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${JSON.stringify(w.name)}`,
      });
    names.add(w.name);
    causes.push(...validateWebhook(w, at, mutating));
  });
  return causes;
}

function validateWebhook(w: Webhook, at: string, mutating: boolean): Cause[] {
  const causes: Cause[] = [];
  if (!w.name) causes.push({ field: `${at}.name`, reason: 'FieldValueRequired', message: 'Required value' });
  else if (checkDns1123Subdomain(w.name) || w.name.split('.').length < 3)
    causes.push({
      field: `${at}.name`,
      message: `Invalid value: ${JSON.stringify(w.name)}: should be a domain with at least three segments separated by dots`,
    });
  (w.rules ?? []).forEach((r, j) => causes.push(...validateRule(r, `${at}.rules[${j}]`)));
  const notSupported = (field: string, v: unknown, allowed: string[]): Cause => ({
    field: `${at}.${field}`,
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${JSON.stringify(v)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  });
  if (w.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(w.failurePolicy))
    causes.push(notSupported('failurePolicy', w.failurePolicy, ['Fail', 'Ignore']));
  if (w.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(w.matchPolicy))
    causes.push(notSupported('matchPolicy', w.matchPolicy, ['Equivalent', 'Exact']));
  if (w.sideEffects === undefined)
    causes.push({
      field: `${at}.sideEffects`,
      reason: 'FieldValueRequired',
      message: `Required value: must specify one of ${SIDE_EFFECTS.join(', ')}`,
    });
  else if (!SIDE_EFFECTS.includes(w.sideEffects)) causes.push(notSupported('sideEffects', w.sideEffects, SIDE_EFFECTS));
  if (w.timeoutSeconds !== undefined && (w.timeoutSeconds < 1 || w.timeoutSeconds > 30))
    causes.push({
      field: `${at}.timeoutSeconds`,
      message: `Invalid value: ${w.timeoutSeconds}: the timeout value must be between 1 and 30 seconds`,
    });
  if (mutating && w.reinvocationPolicy !== undefined && !['IfNeeded', 'Never'].includes(w.reinvocationPolicy))
    causes.push(notSupported('reinvocationPolicy', w.reinvocationPolicy, ['IfNeeded', 'Never']));
  const versions = w.admissionReviewVersions ?? [];
  if (!versions.some((v) => REVIEW_VERSIONS.includes(v)))
    causes.push({
      field: `${at}.admissionReviewVersions`,
      reason: 'FieldValueRequired',
      message: `Required value: must specify one of ${REVIEW_VERSIONS.join(', ')}`,
    });
  const cc = w.clientConfig ?? {};
  if ((cc.url === undefined) === (cc.service === undefined))
    causes.push({
      field: `${at}.clientConfig`,
      reason: 'FieldValueRequired',
      message: 'Required value: exactly one of url or service is required',
    });
  else if (cc.url !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(cc.url);
    } catch {
      u = undefined;
    }
    if (!u || u.protocol !== 'https:')
      causes.push({
        field: `${at}.clientConfig.url`,
        message: `Invalid value: ${JSON.stringify(cc.url)}: 'https' is the only allowed URL scheme`,
      });
  } else if (cc.service) {
    if (!cc.service.name)
      causes.push({
        field: `${at}.clientConfig.service.name`,
        reason: 'FieldValueRequired',
        message: 'Required value: service name is required',
      });
    if (!cc.service.namespace)
      causes.push({
        field: `${at}.clientConfig.service.namespace`,
        reason: 'FieldValueRequired',
        message: 'Required value: service namespace is required',
      });
    causes.push(...validateServicePath(cc.service.path, `${at}.clientConfig.service.path`));
    const port = cc.service.port;
    if (port !== undefined && (port < 1 || port > 65535))
      causes.push({
        field: `${at}.clientConfig.service.port`,
        message: `Invalid value: ${port}: port is not valid: must be between 1 and 65535, inclusive`,
      });
  }
  causes.push(...validateMatchConditions(w.matchConditions ?? [], `${at}.matchConditions`));
  return causes;
}

/** ValidateWebhookService's path: empty or "/", else "/"-led DNS-subdomain segments. */
function validateServicePath(p: string | undefined, field: string): Cause[] {
  if (p === undefined || p === '' || p === '/') return [];
  const invalid = (why: string): Cause => ({ field, message: `Invalid value: ${JSON.stringify(p)}: ${why}` });
  if (p === '//') return [invalid('segment[0] may not be empty')];
  const causes: Cause[] = [];
  if (!p.startsWith('/')) causes.push(invalid("must start with a '/'"));
  const steps = p.slice(1).replace(/\/$/, '').split('/');
  steps.forEach((step, i) => {
    if (!step) causes.push(invalid(`segment[${i}] may not be empty`));
    else {
      const bad = checkDns1123Subdomain(step);
      if (bad) causes.push(invalid(`segment[${i}]: ${bad}`));
    }
  });
  return causes;
}

function validateRule(r: WebhookRule, at: string): Cause[] {
  const causes: Cause[] = [];
  const required = (field: string): Cause => ({
    field: `${at}.${field}`,
    reason: 'FieldValueRequired',
    message: 'Required value',
  });
  if (!r.operations?.length) causes.push(required('operations'));
  else
    r.operations.forEach((op, k) => {
      if (!OPERATIONS.includes(op))
        causes.push({
          field: `${at}.operations[${k}]`,
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(op)}: supported values: ${OPERATIONS.map((x) => JSON.stringify(x)).join(', ')}`,
        });
    });
  if (!r.apiGroups?.length) causes.push(required('apiGroups'));
  if (!r.apiVersions?.length) causes.push(required('apiVersions'));
  if (!r.resources?.length) causes.push(required('resources'));
  if (r.scope !== undefined && !['*', 'Cluster', 'Namespaced'].includes(r.scope))
    causes.push({
      field: `${at}.scope`,
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(r.scope)}: supported values: "*", "Cluster", "Namespaced"`,
    });
  return causes;
}

function validateMatchConditions(conditions: MatchCondition[], at: string): Cause[] {
  const causes: Cause[] = [];
  if (conditions.length > 64)
    causes.push({
      field: at,
      reason: 'FieldValueTooMany',
      message: `Too many: ${conditions.length}: must have at most 64 items`,
    });
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const expr = (c.expression ?? '').trim();
    if (!expr)
      causes.push({ field: `${at}[${i}].expression`, reason: 'FieldValueRequired', message: 'Required value' });
    else {
      const why = compileError(expr);
      if (why)
        causes.push({ field: `${at}[${i}].expression`, message: `Invalid value: ${JSON.stringify(expr)}: ${why}` });
    }
    if (!c.name) causes.push({ field: `${at}[${i}].name`, reason: 'FieldValueRequired', message: 'Required value' });
    else if (seen.has(c.name))
      causes.push({
        field: `${at}[${i}].name`,
        reason: 'FieldValueDuplicate',
        message: `Duplicate value: ${JSON.stringify(c.name)}`,
      });
    seen.add(c.name);
  });
  return causes;
}
