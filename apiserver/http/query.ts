// Query parameters parsed as kube-apiserver's conversion does (Go's
// strconv.ParseBool and ParseInt), with upstream's 400s for bad values, and
// the list options' resourceVersion rules (ValidateListOptions).
import { ApiError, errors } from '../api/errors.js';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** strconv.ParseBool of a query parameter; absent (or empty, as upstream) is `dflt`. */
export function boolParam(q: URLSearchParams, name: string, dflt = false): boolean {
  const v = q.get(name);
  if (v === null || v === '') return dflt;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw errors.badRequest(`${name}: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/** strconv.ParseInt of a query parameter, or undefined when absent. */
export function intParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^[+-]?\d+$/.test(v))
    throw errors.badRequest(`${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = Number(v);
  if (!Number.isSafeInteger(n))
    throw errors.badRequest(`${name}: strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return n;
}

/** A resourceVersion: empty, or a decimal number (ours are), else 400 as upstream's storage. */
export function resourceVersionParam(q: URLSearchParams): number | undefined {
  const v = q.get('resourceVersion');
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(v)}`);
  return Number(v);
}

/** dryRun: absent, or "All" (the only value upstream knows). */
export function dryRunParam(values: unknown): boolean {
  const list = (Array.isArray(values) ? values : values === undefined || values === null ? [] : [values]).filter(
    (v) => v !== '',
  );
  for (const v of list)
    if (v !== 'All')
      throw errors.badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
  return list.length > 0;
}

export type ResourceVersionMatch = 'NotOlderThan' | 'Exact' | undefined;

const listInvalid = (msg: string): ApiError =>
  errors.invalid('ListOptions', 'meta.k8s.io', '', [
    { field: 'resourceVersionMatch', reason: 'FieldValueForbidden', message: msg },
  ]);

/** ValidateListOptions for resourceVersionMatch (422 as upstream). */
export function resourceVersionMatchParam(q: URLSearchParams, watch: boolean): ResourceVersionMatch {
  const match = q.get('resourceVersionMatch') ?? '';
  if (!match) return undefined;
  if (watch) throw listInvalid('Forbidden: resourceVersionMatch is forbidden for watch');
  if (!q.get('resourceVersion'))
    throw listInvalid('Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
  if (q.get('continue')) throw listInvalid('Forbidden: resourceVersionMatch is forbidden when continue is provided');
  if (match !== 'Exact' && match !== 'NotOlderThan')
    throw errors.invalid('ListOptions', 'meta.k8s.io', '', [
      {
        field: 'resourceVersionMatch',
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`,
      },
    ]);
  if (match === 'Exact' && q.get('resourceVersion') === '0')
    throw listInvalid('Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  return match;
}

/** The 504 for a resourceVersion the store has not reached (upstream's watch cache, after its wait). */
export function tooLargeResourceVersion(rv: number, current: number): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${rv}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}
