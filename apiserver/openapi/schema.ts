// The OpenAPI definitions of the kinds this apiserver serves (derived from
// upstream's spec by scripts/gen-openapi.ts): one schema source for the
// published /openapi documents, field validation and server-side apply.
import { readFileSync } from 'node:fs';

import { assetPath } from '../../kube/assets.js';
import { apiVersionOf, type ResourceDef } from '../resources.js';

export interface Schema {
  type?: string;
  format?: string;
  $ref?: string;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  'x-kubernetes-group-version-kind'?: { group: string; version: string; kind: string }[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  [ext: string]: unknown;
}

export const DEFINITIONS: Record<string, Schema> = (
  JSON.parse(readFileSync(assetPath('apiserver/openapi/schemas.json'), 'utf8')) as {
    definitions: Record<string, Schema>;
  }
).definitions;

const REF = '#/definitions/';

/** A schema with its $ref followed (refs point only at definitions). */
export function resolve(s: Schema | undefined): Schema | undefined {
  let cur = s;
  for (let i = 0; cur?.$ref && i < 8; i++) cur = DEFINITIONS[cur.$ref.slice(REF.length)];
  return cur;
}

/** The definition name of apiVersion/kind, e.g. io.k8s.api.core.v1.Pod. */
const BY_GVK = new Map<string, string>();
for (const [name, d] of Object.entries(DEFINITIONS)) {
  const gvks = d['x-kubernetes-group-version-kind'] ?? [];
  // Multi-GVK definitions (DeleteOptions, WatchEvent) are meta types, not kinds of a group.
  if (gvks.length !== 1) continue;
  const g = gvks[0]!;
  BY_GVK.set(`${g.group ? `${g.group}/` : ''}${g.version}/${g.kind}`, name);
}

export function definitionOf(apiVersion: string, kind: string): string | undefined {
  return BY_GVK.get(`${apiVersion}/${kind}`);
}

export function kindSchema(r: ResourceDef): Schema | undefined {
  if (r.custom) return r.custom.schema;
  const name = definitionOf(apiVersionOf(r), r.kind);
  return name ? DEFINITIONS[name] : undefined;
}

/** A free-form object: no declared fields, so anything in it is kept (RawExtension, FieldsV1). */
export function isFreeForm(s: Schema): boolean {
  return (
    (s.type === 'object' && !s.properties && s.additionalProperties === undefined) ||
    s['x-kubernetes-preserve-unknown-fields'] === true
  );
}
