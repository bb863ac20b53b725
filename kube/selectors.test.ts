import assert from 'node:assert/strict';
import { test } from 'node:test';

import { matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from './selectors.js';

test('label selectors: equality, sets, existence', () => {
  const l = { app: 'web', tier: 'front', 'example.com/x': '1' };
  const m = (s: string) => matchLabels(parseLabelSelector(s), l);
  assert.equal(m('app=web'), true);
  assert.equal(m('app==web,tier=front'), true);
  assert.equal(m('app!=web'), false);
  assert.equal(m('missing!=x'), true);
  assert.equal(m('app in (web, db)'), true);
  assert.equal(m('app notin (web)'), false);
  assert.equal(m('example.com/x'), true);
  assert.equal(m('!tier'), false);
  assert.equal(m(''), true);
  assert.throws(() => parseLabelSelector('app in (a'), /unbalanced/);
  assert.throws(() => parseLabelSelector('a=b c'), /unable to parse|invalid label value/);
  assert.throws(() => parseLabelSelector('-bad=x'), /invalid label key/);
});

test('field selectors', () => {
  const f = { 'metadata.name': 'a', 'spec.nodeName': 'n1' };
  assert.equal(matchFields(parseFieldSelector('spec.nodeName=n1'), f), true);
  assert.equal(matchFields(parseFieldSelector('spec.nodeName!=n1'), f), false);
  assert.equal(matchFields(parseFieldSelector('spec.nodeName=,metadata.name=a'), f), false);
  assert.throws(() => parseFieldSelector('nonsense'), /invalid selector/);
});

test('label selectors: n>5 and n<5 compare integer values; a value that is not an integer is refused', () => {
  const reqs = parseLabelSelector('n>5,m<10');
  assert.equal(matchLabels(reqs, { n: '6', m: '9' }), true);
  assert.equal(matchLabels(reqs, { n: '5', m: '9' }), false);
  assert.equal(matchLabels(reqs, { n: 'six', m: '9' }), false, 'a label that is not an integer never matches');
  assert.equal(matchLabels(reqs, { m: '9' }), false);
  assert.throws(
    () => parseLabelSelector('n>x'),
    /^Error: unable to parse requirement: values\[0\]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer$/,
  );
});
