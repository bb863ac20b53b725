// Dynamic admission: the mutating webhooks one after another, then the validating ones all at once, with each
// webhook's failure policy and upstream's error texts (k8s.io/apiserver's webhook/{mutating,validating} dispatchers).
import type {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from 'kubernetes-types/admissionregistration/v1.js';
import type { Status } from 'kubernetes-types/meta/v1.js';

import { jsonPatch } from '../../../kube/patch.js';
import { ApiError, errors } from '../../api/errors.js';
import type { Obj } from '../../storage/store.js';
import { postReview, type ServiceResolver } from './client.js';
import { evaluateConditions } from './conditions.js';
import type { Webhook } from './configuration.js';
import { isExempt, namespaceMatches, objectMatches, ruleMatches } from './match.js';
import { admissionReview, readReview, type ReviewSubject } from './review.js';

export interface WebhookSource {
  validating(): ValidatingWebhookConfiguration[];
  mutating(): MutatingWebhookConfiguration[];
  namespaceLabels(name: string): Record<string, string> | undefined;
  resolve: ServiceResolver;
}

/** What a dispatch adds to the response. */
export interface DispatchOutcome {
  warnings: string[];
  /** The object as the mutating webhooks left it, when one of them changed it. */
  mutated?: Obj;
}

class CallFailure extends Error {}

/** ToStatusErr: a webhook's refusal, `admission webhook "<name>" denied the request: <why>`. */
export function denial(webhook: string, result: Status | undefined): ApiError {
  const deniedBy = `admission webhook ${JSON.stringify(webhook)} denied the request`;
  const message = result?.message
    ? `${deniedBy}: ${result.message}`
    : result?.reason
      ? `${deniedBy}: ${result.reason}`
      : `${deniedBy} without explanation`;
  const code = result?.code !== undefined && result.code >= 400 ? result.code : 400;
  return new ApiError(code, result?.reason ?? '', message, result?.details as ApiError['details']);
}

const byName = <T extends { metadata?: { name?: string } }>(a: T, b: T): number =>
  (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');

export class WebhookDispatcher {
  constructor(private readonly source: WebhookSource) {}

  /** The webhooks of one kind that take this request, in upstream's order (configurations by name). */
  private hooks(mutating: boolean, s: ReviewSubject): Webhook[] {
    if (isExempt(s)) return [];
    const configs = mutating ? this.source.mutating() : this.source.validating();
    const out: Webhook[] = [];
    for (const c of [...configs].sort(byName))
      for (const w of (c.webhooks ?? []) as Webhook[])
        if (
          (w.rules ?? []).some((r) => ruleMatches(r, s)) &&
          namespaceMatches(w.namespaceSelector, s, (n) => this.source.namespaceLabels(n)) &&
          objectMatches(w.objectSelector, s)
        )
          out.push(w);
    return out;
  }

  /** Whether a rule of any webhook takes this request (the selectors and conditions are read when it is made). */
  wants(s: ReviewSubject): boolean {
    if (isExempt(s)) return false;
    return [...this.source.mutating(), ...this.source.validating()].some((c) =>
      (c.webhooks ?? []).some((w) => (w.rules ?? []).some((r) => ruleMatches(r, s))),
    );
  }

  async mutate(s: ReviewSubject): Promise<DispatchOutcome> {
    const warnings: string[] = [];
    let subject = s;
    let mutated: Obj | undefined;
    for (const w of this.hooks(true, s)) {
      let patch: unknown[] | undefined;
      try {
        if (!this.conditionsMatch(w, subject)) continue;
        patch = await this.call(w, subject, warnings);
      } catch (e) {
        if (e instanceof CallFailure && w.failurePolicy === 'Ignore') continue;
        throw e instanceof CallFailure ? errors.internal(e.message) : e;
      }
      if (!patch?.length) continue;
      if (!subject.object)
        throw errors.internal(
          `admission webhook ${JSON.stringify(w.name)} attempted to modify the object, which is not supported for this operation`,
        );
      let next: Obj;
      try {
        next = jsonPatch(subject.object, patch) as Obj;
      } catch (e) {
        throw errors.internal((e as Error).message);
      }
      subject = { ...subject, object: next };
      mutated = next;
    }
    return { warnings, ...(mutated ? { mutated } : {}) };
  }

  async validate(s: ReviewSubject): Promise<DispatchOutcome> {
    const warnings: string[] = [];
    const results = await Promise.all(
      this.hooks(false, s).map(async (w): Promise<ApiError | undefined> => {
        try {
          if (!this.conditionsMatch(w, s)) return undefined;
          await this.call(w, s, warnings);
          return undefined;
        } catch (e) {
          if (e instanceof CallFailure) return w.failurePolicy === 'Ignore' ? undefined : errors.internal(e.message);
          return e instanceof ApiError ? e : errors.internal((e as Error).message);
        }
      }),
    );
    const refused = results.find((r) => r !== undefined);
    if (refused) throw refused;
    return { warnings };
  }

  /** Match conditions; an evaluation error is a call failure, for the failure policy. */
  private conditionsMatch(w: Webhook, s: ReviewSubject): boolean {
    const request = admissionReview(s, ['v1'], '').body.request;
    const { matched, error } = evaluateConditions(w.matchConditions ?? [], {
      object: s.object,
      oldObject: s.oldObject,
      request,
    });
    if (error) throw new CallFailure(`failed calling webhook ${JSON.stringify(w.name)}: ${error}`);
    return matched;
  }

  /** One call: the patch a mutating webhook sent, a refusal as its ApiError, a failure to call as CallFailure. */
  private async call(w: Webhook, s: ReviewSubject, warnings: string[]): Promise<unknown[] | undefined> {
    if (s.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun')
      throw errors.badRequest(`admission webhook ${JSON.stringify(w.name)} does not support dry run`);
    const req = admissionReview(s, w.admissionReviewVersions ?? ['v1']);
    let answer: unknown;
    try {
      answer = await postReview(w.clientConfig, req.body, w.timeoutSeconds ?? 10, this.source.resolve);
    } catch (e) {
      throw new CallFailure(
        `failed calling webhook ${JSON.stringify(w.name)}: failed to call webhook: ${(e as Error).message}`,
      );
    }
    let result;
    try {
      result = readReview(req, answer);
    } catch (e) {
      throw new CallFailure(
        `failed calling webhook ${JSON.stringify(w.name)}: received invalid webhook response: ${(e as Error).message}`,
      );
    }
    warnings.push(...result.warnings);
    if (!result.allowed) throw denial(w.name, result.result);
    return result.patch;
  }
}
