// The AdmissionReview a webhook is sent and what its answer may say (k8s.io/apiserver's webhook/request package).
import { randomUUID } from 'node:crypto';

import type { Status } from 'kubernetes-types/meta/v1.js';

import type { User } from '../../api/admission.js';
import type { Obj } from '../../storage/store.js';
import type { WebhookOperation } from './match.js';

export interface ReviewSubject {
  operation: WebhookOperation;
  group: string;
  version: string;
  /** The request body's kind: the resource's, or the subresource's (Scale, PodAttachOptions, …). */
  kind: { group: string; version: string; kind: string };
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  object?: Obj;
  oldObject?: Obj;
  /** CreateOptions, UpdateOptions, DeleteOptions, or the CONNECT subresource's options (PodAttachOptions, …). */
  options?: Obj;
  user: User;
  dryRun: boolean;
}

export interface ReviewRequest {
  uid: string;
  version: 'v1' | 'v1beta1';
  body: Obj;
}

/** The request body, in the first version the webhook accepts that this server speaks. */
export function admissionReview(
  s: ReviewSubject,
  accepted: readonly string[],
  uid: string = randomUUID(),
): ReviewRequest {
  const version = accepted.find((v) => v === 'v1' || v === 'v1beta1') as 'v1' | 'v1beta1';
  const kind = s.kind;
  const resource = { group: s.group, version: s.version, resource: s.resource };
  const request: Obj = {
    uid,
    kind,
    resource,
    ...(s.subresource ? { subResource: s.subresource } : {}),
    requestKind: kind,
    requestResource: resource,
    ...(s.subresource ? { requestSubResource: s.subresource } : {}),
    ...(s.name ? { name: s.name } : {}),
    ...(s.namespace ? { namespace: s.namespace } : {}),
    operation: s.operation,
    userInfo: {
      username: s.user.name,
      ...(s.user.uid ? { uid: s.user.uid } : {}),
      groups: s.user.groups,
      ...(s.user.extra && Object.keys(s.user.extra).length ? { extra: s.user.extra } : {}),
    },
    object: s.object ?? null,
    oldObject: s.oldObject ?? null,
    dryRun: s.dryRun,
    options: s.options ?? null,
  };
  return { uid, version, body: { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request } };
}

export interface ReviewResult {
  allowed: boolean;
  result?: Status;
  /** The decoded JSON Patch operations, when the webhook sent one. */
  patch?: unknown[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** VerifyAdmissionResponse: a v1 answer must echo the uid, kind and apiVersion; a patch must be a JSONPatch. */
export function readReview(req: ReviewRequest, answer: unknown): ReviewResult {
  const review = (answer ?? {}) as Obj;
  const response = review.response as Obj | undefined;
  if (!response) throw new Error('webhook response was absent');
  if (req.version === 'v1') {
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview')
      throw new Error(
        `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`,
      );
    if (response.uid !== req.uid)
      throw new Error(`expected response.uid=${JSON.stringify(req.uid)}, got ${JSON.stringify(response.uid ?? '')}`);
  }
  let patch: unknown[] | undefined;
  if (response.patch !== undefined && response.patch !== null && response.patch !== '') {
    if (req.version === 'v1' && response.patchType !== 'JSONPatch')
      throw new Error(
        response.patchType === undefined
          ? 'webhook returned response.patch but not response.patchType'
          : `webhook returned invalid response.patchType of ${JSON.stringify(response.patchType)}`,
      );
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(String(response.patch), 'base64').toString('utf8'));
    } catch (e) {
      throw new Error(`received undecodable patch in webhook response: ${(e as Error).message}`, { cause: e });
    }
    if (!Array.isArray(decoded)) throw new Error('received undecodable patch in webhook response: not a JSON Patch');
    patch = decoded;
  }
  return {
    allowed: response.allowed === true,
    ...(response.status ? { result: response.status as Status } : {}),
    ...(patch ? { patch } : {}),
    warnings: Array.isArray(response.warnings) ? (response.warnings as string[]) : [],
    auditAnnotations: (response.auditAnnotations ?? {}) as Record<string, string>,
  };
}
