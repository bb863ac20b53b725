// metav1.Status errors with upstream codes and reasons.
export interface Cause {
  reason?: string;
  message: string;
  field?: string;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: { name?: string; group?: string; kind?: string; causes?: Cause[]; retryAfterSeconds?: number },
    /** The Status's ListMeta (an expired continue's new token). */
    readonly listMeta?: { continue?: string },
  ) {
    super(message);
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: { ...this.listMeta },
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

const gr = (resource: string, group: string): string => (group ? `${resource}.${group}` : resource);

export const errors = {
  notFound: (resource: string, group: string, name: string) =>
    new ApiError(404, 'NotFound', `${gr(resource, group)} "${name}" not found`, { name, group, kind: resource }),
  alreadyExists: (resource: string, group: string, name: string) =>
    new ApiError(409, 'AlreadyExists', `${gr(resource, group)} "${name}" already exists`, {
      name,
      group,
      kind: resource,
    }),
  conflict: (resource: string, group: string, name: string, why: string) =>
    new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${gr(resource, group)} "${name}": ${why}`, {
      name,
      group,
      kind: resource,
    }),
  invalid: (kind: string, group: string, name: string, causes: Cause[]) =>
    new ApiError(
      422,
      'Invalid',
      `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
      {
        name,
        group,
        kind,
        causes: causes.map((c) => ({ reason: c.reason ?? 'FieldValueInvalid', message: c.message, field: c.field })),
      },
    ),
  badRequest: (msg: string) => new ApiError(400, 'BadRequest', msg),
  serviceUnavailable: (msg: string) => new ApiError(503, 'ServiceUnavailable', msg),
  /** A patch that fails to apply: upstream answers 422 with only this message, for JSON patches and merge patches alike. */
  patchFailed: () => new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {}),
  expired: (msg: string) => new ApiError(410, 'Expired', msg),
  gone: (msg: string) => new ApiError(410, 'Gone', msg),
  methodNotAllowed: (msg: string) => new ApiError(405, 'MethodNotAllowed', msg),
  unsupportedMediaType: (ct: string) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format (${ct}) - accepted media types include: application/json, application/yaml`,
    ),
  tooLarge: () => new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  /** The authorizer's 403: `pods "x" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace "ns"[: reason]`. */
  forbidden: (
    user: string,
    verb: string,
    resource: string,
    group: string,
    ns?: string,
    name?: string,
    reason?: string,
  ) =>
    new ApiError(
      403,
      'Forbidden',
      `${resource.split('/')[0]}${group ? `.${group}` : ''}${name ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${group}"${ns ? ` in the namespace "${ns}"` : ' at the cluster scope'}${reason ? `: ${reason}` : ''}`,
      { ...(name ? { name } : {}), group, kind: resource.split('/')[0] },
    ),
  /** admission.NewForbidden: `pods "web" is forbidden: <why>`. */
  forbiddenObject: (resource: string, group: string, name: string, why: string) =>
    new ApiError(403, 'Forbidden', `${gr(resource, group)} "${name}" is forbidden: ${why}`, {
      name,
      group,
      kind: resource,
    }),
  forbiddenPath: (user: string, verb: string, path: string) =>
    new ApiError(403, 'Forbidden', `forbidden: User "${user}" cannot ${verb} path "${path}"`),
  internal: (msg: string) => new ApiError(500, 'InternalError', `Internal error occurred: ${msg}`),
};
