import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import protobuf from 'protobufjs';

import { assetPath } from '../../kube/assets.js';
import { seededRandom as rng } from '../../kube/seeded-random.js';
import { type MessageCodec, messageCodec } from './message-codec.js';

// The reference: protobufjs's own conversions with proto-loader's options, as the CRI client used them before.
const CONVERSION: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };
const reference = (t: protobuf.Type): MessageCodec => ({
  encode: (o) => Buffer.from(t.encode(t.fromObject(o)).finish()),
  decode: (b) => t.toObject(t.decode(b), CONVERSION),
});

const root = protobuf.Root.fromJSON(
  JSON.parse(fs.readFileSync(path.join(assetPath('proto'), 'cri/api.json'), 'utf8')) as protobuf.INamespace,
);
root.resolveAll();
const TYPES: protobuf.Type[] = [];
(function walk(ns: protobuf.NamespaceBase) {
  for (const c of ns.nestedArray) {
    if (c instanceof protobuf.Type) TYPES.push(c);
    if (c instanceof protobuf.Namespace || c instanceof protobuf.Type) walk(c as protobuf.NamespaceBase);
  }
})(root);

function randomValue(f: protobuf.Field, rand: () => number, depth: number): unknown {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const big = (bits: bigint, signed: boolean): bigint => {
    let v = 0n;
    for (let i = 0n; i < bits; i += 16n) v = (v << 16n) | BigInt(Math.floor(rand() * 65536));
    v &= (1n << bits) - 1n;
    return signed ? BigInt.asIntN(Number(bits), v) : v;
  };
  if (f.resolvedType instanceof protobuf.Enum) {
    const names = Object.keys(f.resolvedType.values);
    return pick<unknown>([pick(names), f.resolvedType.values[pick(names)], 99, -1, 'NO_SUCH_VALUE']);
  }
  if (f.resolvedType instanceof protobuf.Type) return depth > 3 ? {} : randomObject(f.resolvedType, rand, depth + 1);
  switch (f.type) {
    case 'string':
      return pick<unknown>(['', 'a', 'ünïcödé ✓', `s${Math.floor(rand() * 1e6)}`, 42]);
    case 'bool':
      return pick<unknown>([true, false, 0, 1, 'x']);
    case 'int32':
      return pick<unknown>([0, -1, 2147483647, -2147483648, Math.floor(rand() * 1e6), '17']);
    case 'uint32':
      return pick<unknown>([0, 4294967295, Math.floor(rand() * 1e9), '17']);
    case 'int64':
      return pick<unknown>([
        String(big(64n, true)),
        String(big(40n, true)),
        -5,
        0,
        Number.MAX_SAFE_INTEGER,
        '9223372036854775807',
        '-9223372036854775808',
      ]);
    case 'uint64':
      return pick<unknown>([String(big(64n, false)), 7, 0, '18446744073709551615']);
    case 'bytes':
      return pick<unknown>([Buffer.from([1, 2, 3, 255]), Buffer.alloc(0), 'AQID', new Uint8Array([9, 8])]);
    default:
      throw new Error(`no generator for ${f.type}`);
  }
}

function randomObject(t: protobuf.Type, rand: () => number, depth = 0): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of t.fieldsArray) {
    const r = rand();
    if (r < 0.25) continue;
    if (r < 0.3) {
      o[f.name] = pick3(rand, null, undefined, null);
      continue;
    }
    if (f.map) {
      const m: Record<string, unknown> = {};
      for (const k of ['a', 'b.c/d', '', 'constructor', '10', '2'].filter(() => rand() < 0.4))
        m[k] = randomValue(f, rand, depth);
      if (rand() < 0.05)
        Object.defineProperty(m, '__proto__', { value: randomValue(f, rand, depth), enumerable: true });
      o[f.name] = m;
    } else if (f.repeated)
      o[f.name] = Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(f, rand, depth));
    else o[f.name] = randomValue(f, rand, depth);
  }
  return o;
}
const pick3 = <T>(rand: () => number, a: T, b: T, c: T): T => [a, b, c][Math.floor(rand() * 3)]!;

test('every CRI message: random objects encode to the same bytes as protobufjs, and decode to the same objects', () => {
  assert.ok(TYPES.length > 100, `${TYPES.length} message types`);
  for (const [i, t] of TYPES.entries()) {
    const ours = messageCodec(t);
    const ref = reference(t);
    for (let n = 0; n < 40; n++) {
      const seed = i * 1000 + n;
      const o = randomObject(t, rng(seed));
      const bytes = ref.encode(o);
      assert.ok(Buffer.isBuffer(ours.encode(o)));
      assert.equal(
        ours.encode(o).toString('hex'),
        bytes.toString('hex'),
        `${t.fullName} seed ${seed}: ${JSON.stringify(o)}`,
      );
      assert.deepStrictEqual(ours.decode(bytes), ref.decode(bytes), `${t.fullName} seed ${seed}`);
    }
    // Nothing on the wire: every field at its default.
    assert.deepStrictEqual(ours.decode(Buffer.alloc(0)), ref.decode(Buffer.alloc(0)), t.fullName);
  }
});

test('decoding: repeated numbers written unpacked, unknown fields of every wire type, a map entry without its value', () => {
  let checked = 0;
  for (const t of TYPES) {
    const ours = messageCodec(t);
    const ref = reference(t);
    for (const f of t.fieldsArray) {
      const w = protobuf.Writer.create();
      if (f.repeated && !f.map && !f.resolvedType && f.type !== 'string' && f.type !== 'bytes') {
        // One element per field occurrence, as a writer that does not pack does.
        for (const v of ['5', '-3', '0'])
          (w.uint32((f.id << 3) | 0) as unknown as Record<string, (x: string) => protobuf.Writer>)[f.type]!(v);
        checked++;
      } else if (f.map) {
        w.uint32((f.id << 3) | 2)
          .fork()
          .uint32(10)
          .string('k')
          .ldelim();
        checked++;
      } else continue;
      // Unknown field numbers: varint, 64-bit, length-delimited, 32-bit.
      w.uint32((1000 << 3) | 0)
        .uint64(123)
        .uint32((1001 << 3) | 1)
        .fixed64(7)
        .uint32((1002 << 3) | 2)
        .string('x')
        .uint32((1003 << 3) | 5)
        .fixed32(9);
      const bytes = Buffer.from(w.finish());
      assert.deepStrictEqual(ours.decode(bytes), ref.decode(bytes), `${t.fullName}.${f.name}`);
    }
  }
  assert.ok(checked > 20, `${checked} fields checked`);
});

test('bad input fails as protobufjs fails: the message names the field', () => {
  const t = root.lookupType('runtime.v1.CreateContainerRequest');
  const ours = messageCodec(t);
  const ref = reference(t);
  for (const o of [
    { config: 'x' },
    { config: { envs: 'x' } },
    { config: { labels: 'x' } },
    { config: { mounts: ['x'] } },
    'x',
  ]) {
    const want = (() => {
      try {
        ref.encode(o as object);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    })();
    assert.throws(
      () => ours.encode(o as object),
      (e: Error) => e.message === want,
      `${JSON.stringify(o)}: ${want}`,
    );
  }
  // A nested message cut short (a string cut short is read as far as it goes, by both).
  const truncated = ref.encode({ config: { metadata: { name: 'c', attempt: 3 } } }).subarray(0, 5);
  assert.throws(() => ref.decode(truncated));
  assert.throws(() => ours.decode(truncated), RangeError);
});
