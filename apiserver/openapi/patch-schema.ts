// The strategic merge patch view of a kind's OpenAPI schema: each field's x-kubernetes-patch-strategy and
// x-kubernetes-patch-merge-key (declared on the field, beside its $ref), and the schemas of its parts.
import type { PatchSchema } from '../../kube/strategic-merge.js';
import { resolve, type Schema } from './schema.js';

export function patchSchemaOf(field: Schema | undefined): PatchSchema | undefined {
  if (!field) return undefined;
  const body = resolve(field);
  return {
    strategy: field['x-kubernetes-patch-strategy'],
    mergeKey: field['x-kubernetes-patch-merge-key'],
    property: (name) =>
      patchSchemaOf(
        body?.properties?.[name] ??
          (typeof body?.additionalProperties === 'object' ? body.additionalProperties : undefined),
      ),
    items: () => patchSchemaOf(body?.items),
  };
}
