import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parse } from 'yaml';

import { K8S_YAML } from './go-yaml.js';

// What sigs.k8s.io/yaml v1.6.0's YAMLToJSON makes of `v: <scalar>` (run against the real library).
const TABLE: [string, unknown][] = [
  ['~', null],
  ['null', null],
  ['Null', null],
  ['NULL', null],
  ['', null],
  ['nULL', 'nULL'],
  ['y', true],
  ['Y', true],
  ['yes', true],
  ['Yes', true],
  ['YES', true],
  ['yEs', 'yEs'],
  ['on', true],
  ['On', true],
  ['ON', true],
  ['true', true],
  ['True', true],
  ['TRUE', true],
  ['n', false],
  ['N', false],
  ['no', false],
  ['No', false],
  ['NO', false],
  ['off', false],
  ['Off', false],
  ['OFF', false],
  ['false', false],
  ['False', false],
  ['FALSE', false],
  ['0', 0],
  ['12', 12],
  ['+12', 12],
  ['-12', -12],
  ['012', 10],
  ['08', 8],
  ['0o17', 15],
  ['0x1F', 31],
  ['0X1F', 31],
  ['0b101', 5],
  ['-0b101', -5],
  ['1_000', 1000],
  ['0x_1F', 31],
  ['0777', 511],
  ['+0x1F', 31],
  ['1.5', 1.5],
  ['.5', 0.5],
  ['1.', 1],
  ['1e3', 1000],
  ['1E3', 1000],
  ['1.5e-3', 0.0015],
  ['1_0.5', 10.5],
  ['E1', 'E1'],
  ['e1', 'e1'],
  ['1e', '1e'],
  ['12:30:00', '12:30:00'],
  ['190:20:30', '190:20:30'],
  ['2001-12-14', '2001-12-14'],
  ['2001-12-14t21:59:43.10-05:00', '2001-12-14t21:59:43.10-05:00'],
  ['0.1.2', '0.1.2'],
  ['+', '+'],
  ['.', '.'],
  ['0x', '0x'],
  ['0b2', '0b2'],
  ['Infinity', 'Infinity'],
  ['NaN', 'NaN'],
  ['1,000', '1,000'],
];

test('plain scalars resolve as sigs.k8s.io/yaml resolves them', () => {
  for (const [scalar, want] of TABLE)
    assert.deepEqual((parse(`v: ${scalar}`, K8S_YAML) as { v: unknown }).v, want, JSON.stringify(scalar));
});

test('quoted scalars stay strings; infinities and NaN are refused as JSON refuses them; merge keys merge', () => {
  assert.deepEqual(parse(`a: "yes"\nb: '12'\nc: !!str 0x1F`, K8S_YAML), { a: 'yes', b: '12', c: '0x1F' });
  for (const [s, v] of [
    ['.inf', '+Inf'],
    ['-.Inf', '-Inf'],
    ['.NaN', 'NaN'],
  ])
    assert.throws(() => parse(`v: ${s}`, K8S_YAML), new RegExp(`json: unsupported value: \\${v}`));
  // Keys resolve too, and a later duplicate wins (the real library: {"1.5":5,"12":4,"true":3,"x":1}).
  assert.deepEqual(parse('{base: &b {x: 1}, child: {<<: *b, y: 2, on: 3, 12: 4, 1.5: 5}}', K8S_YAML), {
    base: { x: 1 },
    child: { '1.5': 5, '12': 4, true: 3, x: 1 },
  });
  // An env var named E1 stays a name (issue 51's server-side apply case).
  assert.deepEqual(parse('env:\n- name: E1\n  value: on', K8S_YAML), { env: [{ name: 'E1', value: true }] });
});
