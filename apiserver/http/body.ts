// Request bodies: JSON or YAML, at most 3 MiB (the upstream limit).
import type { IncomingMessage } from 'node:http';

import { isScalar, LineCounter, parse as parseYaml, parseDocument, visit } from 'yaml';

import { K8S_YAML } from '../../kube/go-yaml.js';
import { errors } from '../api/errors.js';
import { decodeProtobuf } from './protobuf.js';

export const MAX_BODY = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) {
      req.resume();
      throw errors.tooLarge();
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

export function mediaType(req: IncomingMessage): string {
  return String(req.headers['content-type'] ?? 'application/json')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** Nesting allowed in a request body: deeper objects are refused at decode time, before anything copies them. */
export const MAX_DEPTH = 500;

/** Depth of nested objects and arrays, counted without recursion (a hostile body must not overflow the stack). */
export function nestingDepth(v: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [cur, d] = stack.pop()!;
    if (typeof cur !== 'object' || cur === null) continue;
    if (d + 1 > max) max = d + 1;
    if (max > limit) return max;
    for (const child of Object.values(cur as object))
      if (typeof child === 'object' && child !== null) stack.push([child, d + 1]);
  }
  return max;
}

function checkDepth<T>(v: T): T {
  if (nestingDepth(v, MAX_DEPTH) > MAX_DEPTH)
    throw errors.badRequest(`the object is too deeply nested: exceeded max depth of ${MAX_DEPTH}`);
  return v;
}

/** Keys a YAML body repeats, as go-yaml's strict decoding reports them: `line 9: key "foo" already set in map`. */
export function yamlDuplicateKeys(text: string): string[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { ...K8S_YAML, uniqueKeys: false, lineCounter: lines });
  const out: string[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        if (seen.has(key))
          out.push(
            `line ${lines.linePos(pair.key.range?.[0] ?? 0).line}: key ${JSON.stringify(key)} already set in map`,
          );
        seen.add(key);
      }
    },
  });
  return out;
}

export function decodeBody(raw: Buffer, type: string, allowed: string[]): unknown {
  try {
    return checkDepth(decodeRaw(raw, type, allowed));
  } catch (e) {
    // A parser that overflowed its stack on a deep document: the same refusal.
    if (e instanceof RangeError)
      throw errors.badRequest(`the object is too deeply nested: exceeded max depth of ${MAX_DEPTH}`);
    throw e;
  }
}

function decodeRaw(raw: Buffer, type: string, allowed: string[]): unknown {
  if (type === 'application/vnd.kubernetes.protobuf' && allowed.includes('application/json'))
    return decodeProtobuf(raw);
  if (!allowed.includes(type)) throw errors.unsupportedMediaType(type);
  const text = raw.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the request body is empty');
  if (type === 'application/yaml') {
    try {
      return parseYaml(text, K8S_YAML);
    } catch (e) {
      throw errors.badRequest(`error decoding YAML: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}
