// Upstream's own Pod Security fixtures (k8s.io/pod-security-admission/test/testdata):
// for every level and policy version, each "pass" pod is allowed and each "fail" pod
// is refused by the check it is named for. The module comes from the Go module proxy.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';
import { parse } from 'yaml';

import { applyPodDefaults } from '../../../kube/pod-defaults.js';
import { CHECKS, type PodSpec } from './checks.js';
import { evaluatePod, forbiddenDetail, MAX_MINOR } from './evaluator.js';
import type { LevelVersion } from './policy.js';

const MODULE = 'k8s.io/pod-security-admission@v0.37.2';

function moduleDir(): string {
  const out = execFileSync('go', ['mod', 'download', '-json', MODULE], { cwd: os.tmpdir(), encoding: 'utf8' });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

const testdata = path.join(moduleDir(), 'test', 'testdata');
/** As the apiserver sees it: defaulted (a volume without a source is an emptyDir). */
const read = (file: string): Pod => applyPodDefaults(parse(fs.readFileSync(file, 'utf8')) as Pod);

/** The check a fail fixture is named for ("procmount_restricted3" → procMount_restricted), or one overriding it. */
function checksFor(name: string): string[] {
  const id = CHECKS.find((c) => c.id.toLowerCase() === name.replace(/\d+\.yaml$/, ''))?.id;
  assert.ok(id, `a check named as ${name}`);
  const overriding = CHECKS.filter((c) => c.versions.some((v) => v.overrides?.includes(id))).map((c) => c.id);
  return [id, ...overriding];
}
const evaluate = (lv: LevelVersion, pod: Pod) => evaluatePod(lv, pod.metadata ?? {}, (pod.spec ?? {}) as PodSpec);

for (const level of ['baseline', 'restricted'] as const) {
  test(`upstream fixtures, ${level}: pass pods allowed and fail pods refused at every version`, () => {
    const versions = fs.readdirSync(path.join(testdata, level));
    assert.ok(versions.includes(`v1.${MAX_MINOR}`), `fixtures reach v1.${MAX_MINOR}: ${versions.join(' ')}`);
    let passed = 0;
    let failed = 0;
    for (const dir of versions) {
      const minor = Number(/^v1\.(\d+)$/.exec(dir)?.[1]);
      const lv: LevelVersion = { level, version: { minor } };
      for (const kind of ['pass', 'fail'] as const) {
        const folder = path.join(testdata, level, dir, kind);
        if (!fs.existsSync(folder)) continue;
        for (const name of fs.readdirSync(folder)) {
          const pod = read(path.join(folder, name));
          const found = evaluate(lv, pod);
          const where = `${level}/${dir}/${kind}/${name}`;
          if (kind === 'pass') {
            assert.deepEqual(found, [], `${where} is allowed`);
            assert.deepEqual(
              evaluate({ level: 'baseline', version: { minor } }, pod),
              [],
              `${where} passes baseline too`,
            );
            passed++;
          } else {
            const named = checksFor(name);
            assert.ok(
              found.some((f) => named.includes(f.id)),
              `${where} is refused by ${named.join(' or ')}: ${forbiddenDetail(found)}`,
            );
            assert.deepEqual(
              evaluate({ level: 'privileged', version: 'latest' }, pod),
              [],
              'privileged allows anything',
            );
            failed++;
          }
        }
      }
    }
    assert.ok(passed > 100 && failed > 500, `fixtures read: ${passed} pass, ${failed} fail`);
  });
}

test('upstream fixtures: "latest" and versions newer than the checks evaluate as the newest', () => {
  const dir = path.join(testdata, 'restricted', `v1.${MAX_MINOR}`, 'fail');
  for (const name of fs.readdirSync(dir)) {
    const pod = read(path.join(dir, name));
    const newest = forbiddenDetail(evaluate({ level: 'restricted', version: { minor: MAX_MINOR } }, pod));
    assert.equal(forbiddenDetail(evaluate({ level: 'restricted', version: 'latest' }, pod)), newest, name);
    assert.equal(
      forbiddenDetail(evaluate({ level: 'restricted', version: { minor: MAX_MINOR + 5 } }, pod)),
      newest,
      name,
    );
  }
});
