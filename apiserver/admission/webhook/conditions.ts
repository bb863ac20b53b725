// Webhook match conditions: CEL expressions over `object`, `oldObject`, `request` (and `authorizer`, declared so
// expressions using it compile; calls on it fail at evaluation here). As upstream's matchconditions package.
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import type { MatchCondition } from 'kubernetes-types/admissionregistration/v1.js';

const env = new Environment({ unlistedVariablesAreDyn: false })
  .registerVariable('object', 'dyn')
  .registerVariable('oldObject', 'dyn')
  .registerVariable('request', 'dyn')
  .registerVariable('authorizer', 'dyn')
  .registerVariable('params', 'dyn');

/** Why an expression does not compile to a bool, as the upstream validation's "compilation failed: …" detail. */
export function compileError(expression: string): string | undefined {
  let why: string | undefined;
  try {
    const checked = env.check(expression);
    if (!checked.valid) why = checked.error?.message ?? 'invalid expression';
    else if (checked.type !== 'bool' && checked.type !== 'dyn') why = `must evaluate to bool, found ${checked.type}`;
  } catch (e) {
    why = (e as Error).message;
  }
  return why === undefined ? undefined : `compilation failed: ERROR: <input>: ${why}`;
}

const compiled = new Map<string, ParseResult>();

function program(expression: string): ParseResult {
  let p = compiled.get(expression);
  if (!p) {
    p = env.parse(expression);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(expression, p);
  }
  return p;
}

/** CEL reads JSON integers as int and other numbers as double. */
function celValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(celValue);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = celValue(x);
    return out;
  }
  return v;
}

export interface ConditionVariables {
  object: unknown;
  oldObject: unknown;
  request: unknown;
}

/**
 * Whether every condition is true. The first false one ends it (`matched: false`); an evaluation error is reported
 * with the condition's name, for the webhook's failure policy to decide.
 */
export function evaluateConditions(
  conditions: readonly MatchCondition[],
  vars: ConditionVariables,
): { matched: boolean; error?: string } {
  if (conditions.length === 0) return { matched: true };
  const ctx = {
    object: celValue(vars.object ?? null),
    oldObject: celValue(vars.oldObject ?? null),
    request: celValue(vars.request),
    authorizer: null,
    params: null,
  };
  let error: string | undefined;
  for (const c of conditions) {
    try {
      const v: unknown = program(c.expression)(ctx);
      if (v === false) return { matched: false };
      if (v !== true) error ??= `expression '${c.name}' resulted in error: must evaluate to bool`;
    } catch (e) {
      error ??= `expression '${c.name}' resulted in error: ${(e as Error).message.split('\n')[0]}`;
    }
  }
  return error ? { matched: false, error } : { matched: true };
}
