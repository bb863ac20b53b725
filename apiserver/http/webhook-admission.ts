// Admission webhooks around a write. The Api's writes are synchronous and webhooks are not, so a write the webhooks
// take is first run as a dry run (defaulting and built-in admission, nothing stored); the mutating webhooks see that
// object, the write is previewed again with what they changed (defaults after mutation, as upstream), the validating
// webhooks see the result, and only then is the write made.
import type {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from 'kubernetes-types/admissionregistration/v1.js';

import { WebhookDispatcher } from '../admission/webhook/dispatcher.js';
import type { WebhookOperation } from '../admission/webhook/match.js';
import type { ReviewSubject } from '../admission/webhook/review.js';
import type { User } from '../api/admission.js';
import type { Api } from '../api/api.js';
import type { ResourceDef } from '../resources.js';
import type { Obj } from '../storage/store.js';
import { subresourceKind } from './discovery.js';

export function webhookDispatcher(api: Api): WebhookDispatcher {
  const list = <T>(resource: string): T[] => {
    const r = api.res('admissionregistration.k8s.io', resource);
    return (api.list(r, undefined).items ?? []) as T[];
  };
  return new WebhookDispatcher({
    validating: () => list<ValidatingWebhookConfiguration>('validatingwebhookconfigurations'),
    mutating: () => list<MutatingWebhookConfiguration>('mutatingwebhookconfigurations'),
    namespaceLabels: (name) =>
      api.find(api.res('', 'namespaces'), '', name)?.metadata?.labels as Record<string, string> | undefined,
    resolve: (namespace, name) => {
      const svc = api.find(api.res('', 'services'), namespace, name);
      if (!svc) throw new Error(`service "${name}" not found`);
      const ip = svc.spec?.clusterIP as string | undefined;
      if (!ip || ip === 'None') throw new Error(`service "${namespace}/${name}" has no cluster IP`);
      return ip;
    },
  });
}

export interface WriteRequest {
  user: User;
  r: ResourceDef;
  subresource: string;
  operation: WebhookOperation;
  namespace: string;
  name: string;
  dryRun: boolean;
  options?: Obj;
  /** The stored object an UPDATE or DELETE changes. */
  oldObject?: Obj;
  /** Where the webhooks' warnings go. */
  warnings: string[];
}

export function reviewSubject(w: WriteRequest, object: Obj | undefined): ReviewSubject {
  return {
    operation: w.operation,
    group: w.r.group,
    version: w.r.version,
    kind: subresourceKind(w.r, w.subresource),
    resource: w.r.resource,
    subresource: w.subresource,
    namespace: w.namespace,
    name: w.name || (object?.metadata?.name as string | undefined) || '',
    ...(object ? { object } : {}),
    ...(w.oldObject ? { oldObject: w.oldObject } : {}),
    ...(w.options ? { options: w.options } : {}),
    user: w.user,
    dryRun: w.dryRun,
  };
}

/**
 * Runs a create or update through the webhooks. `run(final, replacement)` makes the write as asked (`final`), or a dry
 * run of it to preview the object (not final); given a replacement (what the mutating webhooks left), it writes that
 * object instead of the request's.
 */
export async function admitWrite(
  d: WebhookDispatcher,
  w: WriteRequest,
  run: (final: boolean, replacement?: Obj) => Obj,
): Promise<Obj> {
  if (!d.wants(reviewSubject(w, w.oldObject))) return run(true);
  let preview = run(false);
  const mutation = await d.mutate(reviewSubject(w, preview));
  w.warnings.push(...mutation.warnings);
  let replacement: Obj | undefined;
  if (mutation.mutated) {
    replacement = resubmittable(mutation.mutated, w.operation);
    preview = run(false, replacement);
  }
  const validation = await d.validate(reviewSubject(w, preview));
  w.warnings.push(...validation.warnings);
  return run(true, replacement);
}

/** A mutated object as a request body again: what the server sets on create is its own to set. */
function resubmittable(o: Obj, op: WebhookOperation): Obj {
  const out = structuredClone(o);
  if (op === 'CREATE' && out.metadata) {
    for (const f of ['uid', 'creationTimestamp', 'resourceVersion', 'generation', 'managedFields'])
      delete out.metadata[f];
  }
  return out;
}

/** DELETE and CONNECT: the webhooks see the stored object or the connect options; nothing is mutated. */
export async function admitOperation(d: WebhookDispatcher, w: WriteRequest, object?: Obj): Promise<void> {
  const s = reviewSubject(w, object);
  if (!d.wants(s)) return;
  const mutation = await d.mutate(s);
  w.warnings.push(...mutation.warnings);
  const validation = await d.validate(s);
  w.warnings.push(...validation.warnings);
}
