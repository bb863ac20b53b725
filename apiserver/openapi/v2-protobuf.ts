// /openapi/v2 in the protobuf form client-go asks for
// (application/com.github.proto-openapi.spec.v2@v1.0+protobuf): gnostic's
// openapi.v2.Document. kubectl validates `kind: List` files and Helm its
// charts against it. Only the messages a definitions-only document needs are
// declared here (field numbers from gnostic's OpenAPIv2.proto); vendor
// extensions travel as YAML text, as gnostic stores them (JSON is YAML).
import protobuf from 'protobufjs';

import type { Schema } from './schema.js';

const named = (value: string) => ({ fields: { name: { type: 'string', id: 1 }, value: { type: value, id: 2 } } });
const ROOT = protobuf.Root.fromJSON({
  nested: {
    openapi: {
      nested: {
        v2: {
          nested: {
            Document: {
              fields: {
                swagger: { type: 'string', id: 1 },
                info: { type: 'Info', id: 2 },
                definitions: { type: 'Definitions', id: 9 },
              },
            },
            Info: { fields: { title: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
            Definitions: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
            Properties: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
            NamedSchema: named('Schema'),
            NamedAny: named('Any'),
            Any: { fields: { yaml: { type: 'string', id: 2 } } },
            TypeItem: { fields: { value: { rule: 'repeated', type: 'string', id: 1 } } },
            ItemsItem: { fields: { schema: { rule: 'repeated', type: 'Schema', id: 1 } } },
            AdditionalPropertiesItem: {
              oneofs: { oneof: { oneof: ['schema', 'boolean'] } },
              fields: { schema: { type: 'Schema', id: 1 }, boolean: { type: 'bool', id: 2 } },
            },
            Schema: {
              fields: {
                ref: { type: 'string', id: 1 },
                format: { type: 'string', id: 2 },
                default: { type: 'Any', id: 5 },
                required: { rule: 'repeated', type: 'string', id: 19 },
                enum: { rule: 'repeated', type: 'Any', id: 20 },
                additionalProperties: { type: 'AdditionalPropertiesItem', id: 21 },
                type: { type: 'TypeItem', id: 22 },
                items: { type: 'ItemsItem', id: 23 },
                properties: { type: 'Properties', id: 25 },
                vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 31 },
              },
            },
          },
        },
      },
    },
  },
});
const DOCUMENT = ROOT.lookupType('openapi.v2.Document');

type Msg = Record<string, unknown>;
const any = (v: unknown): Msg => ({ yaml: JSON.stringify(v) });

function schemaMsg(s: Schema): Msg {
  const m: Msg = {};
  if (s.$ref) m.ref = s.$ref;
  if (s.format) m.format = s.format;
  if (s.type) m.type = { value: [s.type] };
  if (s.default !== undefined) m.default = any(s.default);
  if (s.required) m.required = s.required;
  if (Array.isArray(s.enum)) m.enum = (s.enum as unknown[]).map(any);
  if (s.items) m.items = { schema: [schemaMsg(s.items)] };
  if (typeof s.additionalProperties === 'boolean') m.additionalProperties = { boolean: s.additionalProperties };
  else if (s.additionalProperties) m.additionalProperties = { schema: schemaMsg(s.additionalProperties) };
  if (s.properties)
    m.properties = {
      additionalProperties: Object.entries(s.properties).map(([name, v]) => ({ name, value: schemaMsg(v) })),
    };
  const ext = Object.entries(s).filter(([k]) => k.startsWith('x-'));
  if (ext.length) m.vendorExtension = ext.map(([name, v]) => ({ name, value: any(v) }));
  return m;
}

export function encodeV2Document(doc: {
  swagger: string;
  info: { title: string; version: string };
  definitions: Record<string, Schema>;
}): Buffer {
  const msg = {
    swagger: doc.swagger,
    info: doc.info,
    definitions: {
      additionalProperties: Object.entries(doc.definitions).map(([name, s]) => ({ name, value: schemaMsg(s) })),
    },
  };
  return Buffer.from(DOCUMENT.encode(DOCUMENT.fromObject(msg)).finish());
}

export function decodeV2Document(buf: Uint8Array): Msg {
  return DOCUMENT.toObject(DOCUMENT.decode(buf)) as Msg;
}
