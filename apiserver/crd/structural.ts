// Structural schemas (apiextensions.k8s.io/v1): what a definition's
// openAPIV3Schema must satisfy, and the kind schema in this apiserver's
// Schema form that pruning (dropUnknownFields), field validation and
// server-side apply walk.
import type { Cause } from '../api/errors.js';
import type { Schema } from '../openapi/schema.js';
import type { Obj } from '../storage/store.js';

const OBJECT_META = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const FORBIDDEN: [string, string][] = [
  ['$ref', '$ref is not supported'],
  ['id', 'id is not supported'],
  ['definitions', 'definitions is not supported'],
  ['patternProperties', 'patternProperties is not supported'],
  ['additionalItems', 'additionalItems is not supported'],
  ['dependencies', 'dependencies is not supported'],
];

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a schema is not structural, with upstream's paths (properties[spec].type) and words. */
export function structuralErrors(root: Obj, path: string, statusEnabled: boolean): Cause[] {
  const out: Cause[] = [];
  if (!isObj(root)) return [{ field: path, message: 'Invalid value: "": must be an object' }];
  if (!root.type)
    out.push({
      field: `${path}.type`,
      reason: 'FieldValueRequired',
      message: 'Required value: must not be empty at the root',
    });
  else if (root.type !== 'object')
    out.push({
      field: `${path}.type`,
      message: `Invalid value: ${JSON.stringify(root.type)}: ${statusEnabled ? 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled' : 'must be object at the root'}`,
    });
  const walk = (s: unknown, p: string, where: 'root' | 'field' | 'items' | 'logic'): void => {
    if (!isObj(s)) return;
    for (const [k, msg] of FORBIDDEN)
      if (s[k] !== undefined)
        out.push({ field: `${p}.${k}`, reason: 'FieldValueForbidden', message: `Forbidden: ${msg}` });
    if (s.type === 'null')
      out.push({ field: `${p}.type`, reason: 'FieldValueForbidden', message: 'Forbidden: type cannot be set to null' });
    if (s.uniqueItems === true)
      out.push({
        field: `${p}.uniqueItems`,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      });
    if (s['x-kubernetes-preserve-unknown-fields'] === false)
      out.push({
        field: `${p}.x-kubernetes-preserve-unknown-fields`,
        message: 'Invalid value: false: must be true or undefined',
      });
    const typeless =
      !s.type && s['x-kubernetes-int-or-string'] !== true && s['x-kubernetes-preserve-unknown-fields'] !== true;
    if (typeless && where === 'field')
      out.push({
        field: `${p}.type`,
        reason: 'FieldValueRequired',
        message: 'Required value: must not be empty for specified object fields',
      });
    if (typeless && where === 'items')
      out.push({
        field: `${p}.type`,
        reason: 'FieldValueRequired',
        message: 'Required value: must not be empty for specified array items',
      });
    if (
      isObj(s.properties) &&
      Object.keys(s.properties).length &&
      s.additionalProperties !== undefined &&
      s.additionalProperties !== true
    ) {
      out.push({
        field: `${p}.additionalProperties`,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: additionalProperties and properties are mutual exclusive',
      });
    }
    if (isObj(s.properties))
      for (const [k, v] of Object.entries(s.properties))
        walk(v, `${p}.properties[${k}]`, where === 'logic' ? 'logic' : 'field');
    if (isObj(s.additionalProperties))
      walk(s.additionalProperties, `${p}.additionalProperties`, where === 'logic' ? 'logic' : 'field');
    if (isObj(s.items)) walk(s.items, `${p}.items`, where === 'logic' ? 'logic' : 'items');
    else if (Array.isArray(s.items))
      out.push({
        field: `${p}.items`,
        reason: 'FieldValueForbidden',
        message: 'Forbidden: items must be a schema object and not an array',
      });
    for (const k of ['allOf', 'anyOf', 'oneOf'])
      if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((x, i) => walk(x, `${p}.${k}[${i}]`, 'logic'));
    if (isObj(s.not)) walk(s.not, `${p}.not`, 'logic');
  };
  walk(root, path, 'root');
  return out;
}

/**
 * The schema pruning and apply walk: the structural part only (value checks stay
 * with the validator), objects without declared fields closed (everything in them
 * pruned) unless they preserve unknown fields, and embedded resources and the root
 * given apiVersion, kind and metadata.
 */
export function toKindSchema(root: Obj, gvk: { group: string; version: string; kind: string }): Schema {
  const conv = (s: Obj): Schema => {
    const out: Schema = {};
    // Value checks and descriptions ride along for the published documents (kubectl explain); pruning and apply ignore them.
    for (const k of [
      'type',
      'format',
      'description',
      'enum',
      'default',
      'required',
      'nullable',
      'pattern',
      'minimum',
      'maximum',
      'exclusiveMinimum',
      'exclusiveMaximum',
      'minLength',
      'maxLength',
      'minItems',
      'maxItems',
      'multipleOf',
      'x-kubernetes-list-type',
      'x-kubernetes-list-map-keys',
      'x-kubernetes-map-type',
      'x-kubernetes-preserve-unknown-fields',
      'x-kubernetes-int-or-string',
      'x-kubernetes-embedded-resource',
    ]) {
      if (s[k] !== undefined) out[k] = structuredClone(s[k]);
    }
    if (isObj(s.items)) out.items = conv(s.items);
    if (isObj(s.additionalProperties)) out.additionalProperties = conv(s.additionalProperties);
    else if (s.additionalProperties === true)
      out.additionalProperties = { 'x-kubernetes-preserve-unknown-fields': true };
    if (isObj(s.properties))
      out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, conv(isObj(v) ? v : {})]));
    if (s['x-kubernetes-embedded-resource'] === true) {
      out.properties = {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { $ref: OBJECT_META },
        ...(out.properties ?? {}),
      };
    }
    if (
      out.type === 'object' &&
      !out.properties &&
      !out.additionalProperties &&
      out['x-kubernetes-preserve-unknown-fields'] !== true
    )
      out.properties = {};
    return out;
  };
  const kind = conv(root);
  kind.type = 'object';
  kind.properties = {
    ...(kind.properties ?? {}),
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { $ref: OBJECT_META },
  };
  kind['x-kubernetes-group-version-kind'] = [gvk];
  return kind;
}
