// Request bodies: JSON or YAML, at most 3 MiB (the upstream limit).
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
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
  return String(req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
}

export function decodeBody(raw: Buffer, type: string, allowed: string[]): unknown {
  if (type === 'application/vnd.kubernetes.protobuf' && allowed.includes('application/json')) return decodeProtobuf(raw);
  if (!allowed.includes(type)) throw errors.unsupportedMediaType(type);
  const text = raw.toString('utf8');
  if (text.trim() === '') throw errors.badRequest('the request body is empty');
  if (type === 'application/yaml') {
    try {
      return parseYaml(text, { version: '1.1' });
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
