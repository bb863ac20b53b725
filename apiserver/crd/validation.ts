// Custom resources against their version's openAPIV3Schema: defaulting (as
// upstream, before validation, from `default` in properties, items and
// additionalProperties) and validation with Ajv, its errors turned into
// upstream's field errors (`spec.replicas: Invalid value: "string":
// spec.replicas in body must be of type integer: "string"`).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

import type { Cause } from '../api/errors.js';
import type { Obj } from '../storage/store.js';

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fills in `default`s where a value is missing (or null and not nullable), top-down as upstream. */
export function applySchemaDefaults(value: unknown, schema: Obj | undefined): void {
  if (!isObj(schema)) return;
  if (Array.isArray(value)) {
    if (isObj(schema.items)) for (const x of value) applySchemaDefaults(x, schema.items);
    return;
  }
  if (!isObj(value)) return;
  if (isObj(schema.properties)) {
    for (const [k, ps] of Object.entries(schema.properties as Record<string, Obj>)) {
      if (!isObj(ps)) continue;
      if (ps.default !== undefined && (value[k] === undefined || (value[k] === null && ps.nullable !== true)))
        value[k] = structuredClone(ps.default);
      if (value[k] !== undefined) applySchemaDefaults(value[k], ps);
    }
  } else if (isObj(schema.additionalProperties)) {
    for (const v of Object.values(value)) applySchemaDefaults(v, schema.additionalProperties);
  }
}

/** The schema as Ajv (JSON Schema draft-07) reads it: OpenAPI 3.0's boolean exclusive bounds and nullable translated. */
function toAjv(s: unknown, root: boolean): unknown {
  if (Array.isArray(s)) return s.map((x) => toAjv(x, false));
  if (!isObj(s)) return s;
  const out: Obj = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' && isObj(v))
      out.properties = Object.fromEntries(
        Object.entries(v)
          .filter(([p]) => !(root && (p === 'metadata' || p === 'apiVersion' || p === 'kind')))
          .map(([p, ps]) => [p, toAjv(ps, false)]),
      );
    else if (k === 'items' || k === 'additionalProperties' || k === 'not')
      out[k] = typeof v === 'boolean' ? v : toAjv(v, false);
    else if (k === 'allOf' || k === 'anyOf' || k === 'oneOf') out[k] = toAjv(v, false);
    else if (
      k === 'default' ||
      k === 'example' ||
      k === 'description' ||
      k === 'title' ||
      k === 'externalDocs' ||
      k.startsWith('x-kubernetes-')
    )
      continue;
    else if (k === 'exclusiveMaximum' || k === 'exclusiveMinimum') continue;
    else if (k === 'nullable') continue;
    else out[k] = v;
  }
  if (s.exclusiveMaximum === true && typeof s.maximum === 'number') {
    out.exclusiveMaximum = s.maximum;
    delete out.maximum;
  }
  if (s.exclusiveMinimum === true && typeof s.minimum === 'number') {
    out.exclusiveMinimum = s.minimum;
    delete out.minimum;
  }
  if (s['x-kubernetes-int-or-string'] === true && !s.type && !s.anyOf && !s.oneOf) out.type = ['integer', 'string'];
  if (s.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (s.nullable === true && Array.isArray(out.type)) out.type = [...(out.type as string[]), 'null'];
  else if (s.nullable === true && out.enum) out.enum = [...(out.enum as unknown[]), null];
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, useDefaults: false });
const compiled = new WeakMap<Obj, ValidateFunction>();

function validatorOf(schema: Obj): ValidateFunction {
  let v = compiled.get(schema);
  if (!v) {
    v = ajv.compile(toAjv(schema, true) as object);
    compiled.set(schema, v);
  }
  return v;
}

/** A JSON value's type as Go's decoder names it (1 is an integer, 1.5 a number). */
function goType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const show = (v: unknown): string =>
  typeof v === 'string'
    ? JSON.stringify(v)
    : typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : JSON.stringify(v);

/** `/spec/ports/0/name` → `spec.ports[0].name`, reading the value to tell list indexes from keys. */
function fieldPath(value: unknown, pointer: string): { path: string; at: unknown } {
  let path = '';
  let cur: unknown = value;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(cur)) {
      path += `[${seg}]`;
      cur = cur[Number(seg)];
    } else {
      path += path ? `.${seg}` : seg;
      cur = isObj(cur) ? cur[seg] : undefined;
    }
  }
  return { path, at: cur };
}

function toCause(o: Obj, e: ErrorObject): Cause | undefined {
  const { path, at } = fieldPath(o, e.instancePath);
  const p = e.params as Record<string, unknown>;
  const inBody = (msg: string): Cause => ({
    field: path,
    message: `Invalid value: ${show(at)}: ${path} in body ${msg}`,
  });
  switch (e.keyword) {
    case 'required': {
      const f = path ? `${path}.${String(p.missingProperty)}` : String(p.missingProperty);
      return { field: f, reason: 'FieldValueRequired', message: 'Required value' };
    }
    case 'type': {
      const want = Array.isArray(p.type) ? (p.type as string[]).filter((t) => t !== 'null').join(',') : String(p.type);
      return {
        field: path,
        reason: 'FieldValueTypeInvalid',
        message: `Invalid value: "${goType(at)}": ${path} in body must be of type ${want}: "${goType(at)}"`,
      };
    }
    case 'enum':
      return {
        field: path,
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: ${show(at)}: supported values: ${((p.allowedValues ?? []) as unknown[]).map(show).join(', ')}`,
      };
    case 'maximum':
      return inBody(`should be less than or equal to ${String(p.limit)}`);
    case 'exclusiveMaximum':
      return inBody(`should be less than ${String(p.limit)}`);
    case 'minimum':
      return inBody(`should be greater than or equal to ${String(p.limit)}`);
    case 'exclusiveMinimum':
      return inBody(`should be greater than ${String(p.limit)}`);
    case 'maxLength':
      return {
        field: path,
        reason: 'FieldValueTooLong',
        message: `Too long: may not be more than ${String(p.limit)} bytes`,
      };
    case 'minLength':
      return inBody(`should be at least ${String(p.limit)} chars long`);
    case 'pattern':
      return inBody(`should match '${String(p.pattern)}'`);
    case 'maxItems':
      return {
        field: path,
        reason: 'FieldValueTooMany',
        message: `Too many: ${Array.isArray(at) ? at.length : 0}: must have at most ${String(p.limit)} items`,
      };
    case 'minItems':
      return inBody(`should have at least ${String(p.limit)} items`);
    case 'maxProperties':
      return {
        field: path,
        reason: 'FieldValueTooMany',
        message: `Too many: ${isObj(at) ? Object.keys(at).length : 0}: must have at most ${String(p.limit)} items`,
      };
    case 'minProperties':
      return inBody(`should have at least ${String(p.limit)} properties`);
    case 'multipleOf':
      return inBody(`should be a multiple of ${String(p.multipleOf)}`);
    case 'anyOf':
    case 'oneOf':
    case 'allOf':
    case 'not':
      return inBody(
        `must validate ${e.keyword === 'not' ? 'not' : e.keyword === 'allOf' ? 'all of' : e.keyword === 'oneOf' ? 'one and only one' : 'at least one'} schema${e.keyword === 'not' ? '' : ' (' + e.keyword + ')'}`,
      );
    case 'additionalProperties':
      return {
        field: path ? `${path}.${String(p.additionalProperty)}` : String(p.additionalProperty),
        reason: 'FieldValueForbidden',
        message: 'Forbidden: additional property is not allowed',
      };
    default:
      return inBody(e.message ?? e.keyword);
  }
}

/** The object's errors against its version's schema (metadata, apiVersion and kind are the apiserver's to check). */
export function validateCustom(o: Obj, schema: Obj): Cause[] {
  const validate = validatorOf(schema);
  const body = { ...o };
  delete body.metadata;
  delete body.apiVersion;
  delete body.kind;
  if (validate(body)) return [];
  const seen = new Set<string>();
  const out: Cause[] = [];
  for (const e of validate.errors ?? []) {
    const c = toCause(body, e);
    if (!c) continue;
    const key = `${c.field}|${c.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
  }
  return out;
}
