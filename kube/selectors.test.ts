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
