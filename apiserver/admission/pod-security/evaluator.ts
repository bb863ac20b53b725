// Which checks a level and version run, and how their verdicts read together
// (upstream's checkRegistry and AggregateCheckResult).
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

import { type Check, type CheckPod, CHECKS, type Forbidden, type PodSpec } from './checks.js';
import type { LevelVersion } from './policy.js';

/** The newest policy version any check knows; "latest" and newer versions evaluate as it. */
export const MAX_MINOR = Math.max(...CHECKS.map((c) => c.versions[c.versions.length - 1]!.minMinor));

const revisionAt = (c: Check, minor: number) => c.versions.filter((v) => v.minMinor <= minor).pop();

/** The checks of one level at one version, baseline ones first, each group in ID order. */
function checksAt(level: 'baseline' | 'restricted', minor: number): { id: string; check: CheckPod }[] {
  const byId = (a: Check, b: Check): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const restricted = level === 'restricted' ? CHECKS.filter((c) => c.level === 'restricted') : [];
  const overridden = new Set(restricted.flatMap((c) => revisionAt(c, minor)?.overrides ?? []));
  const baseline = CHECKS.filter((c) => c.level === 'baseline' && !overridden.has(c.id));
  return [...baseline.sort(byId), ...restricted.sort(byId)]
    .map((c) => ({ id: c.id, check: revisionAt(c, minor)?.check }))
    .filter((c): c is { id: string; check: CheckPod } => c.check !== undefined);
}

const TABLE = {
  baseline: Array.from({ length: MAX_MINOR + 1 }, (_, minor) => checksAt('baseline', minor)),
  restricted: Array.from({ length: MAX_MINOR + 1 }, (_, minor) => checksAt('restricted', minor)),
};

export interface Violation extends Forbidden {
  /** The check that refused. */
  id: string;
}

/** What a pod violates at a level and version, in upstream's order; empty when it is allowed. */
export function evaluatePod(lv: LevelVersion, meta: ObjectMeta, spec: PodSpec): Violation[] {
  if (lv.level === 'privileged') return [];
  const minor = lv.version === 'latest' ? MAX_MINOR : Math.min(lv.version.minor, MAX_MINOR);
  return TABLE[lv.level][minor]!.flatMap(({ id, check }) => {
    const found = check(meta, spec);
    return found ? [{ id, ...found }] : [];
  });
}

/** "reason (detail), reason, ..." as in a refusal or a warning about one object. */
export const forbiddenDetail = (found: Forbidden[]): string =>
  found.map((f) => (f.detail ? `${f.reason} (${f.detail})` : f.reason)).join(', ');

/** "reason, reason, ..." as in a warning about many pods. */
export const forbiddenReason = (found: Forbidden[]): string => found.map((f) => f.reason).join(', ');
