import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Container } from 'kubernetes-types/core/v1.js';

import { containerShouldRestart, matchingRestartRule } from './restart-rules.js';

const withRules = (restartPolicy: string | undefined, rules: object[] = []): Container =>
  ({ name: 'c', image: 'i', restartPolicy, restartPolicyRules: rules }) as Container;

test('restart rules: the first rule whose exit codes match (In, NotIn); unknown operators never match', () => {
  const c = withRules('Never', [
    { action: 'Restart', exitCodes: { operator: 'In', values: [42, 43] } },
    { action: 'Restart', exitCodes: { operator: 'NotIn', values: [0, 1] } },
    { action: 'Restart', exitCodes: { operator: 'Bogus', values: [1] } },
  ]);
  assert.deepEqual(matchingRestartRule(c, 43)?.exitCodes?.values, [42, 43]);
  assert.equal(matchingRestartRule(c, 7)?.exitCodes?.operator, 'NotIn');
  assert.equal(matchingRestartRule(c, 1), undefined);
});

test("containerShouldRestart: a matching Restart rule, then the container's policy, then the pod's", () => {
  const never = { containers: [], restartPolicy: 'Never' };
  const always = { containers: [], restartPolicy: 'Always' };
  const rule42 = withRules('Never', [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }]);
  assert.equal(containerShouldRestart(rule42, never, 42), true, 'the rule restarts it in a Never pod');
  assert.equal(containerShouldRestart(rule42, always, 1), false, "the container's Never wins over the pod's Always");
  assert.equal(containerShouldRestart(withRules('OnFailure'), never, 1), true);
  assert.equal(containerShouldRestart(withRules('OnFailure'), always, 0), false);
  const plain = { name: 'c', image: 'i' };
  assert.equal(containerShouldRestart(plain, never, 1), false);
  assert.equal(containerShouldRestart(plain, { containers: [], restartPolicy: 'OnFailure' }, 0), false);
  assert.equal(containerShouldRestart(plain, { containers: [] }, 0), true, 'the default policy is Always');
});
