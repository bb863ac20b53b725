// Pod Security levels, policy versions and the namespace labels that pick them
// (k8s.io/pod-security-admission/api): parsing, defaulting and comparison.
import type { Cause } from '../../api/errors.js';

export type Level = 'privileged' | 'baseline' | 'restricted';

/** A policy version: v1.<minor>, or latest (newer than every numbered one). */
export type Version = { minor: number } | 'latest';

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const LABEL_PREFIX = 'pod-security.kubernetes.io/';
export const LABELS = {
  enforce: `${LABEL_PREFIX}enforce`,
  enforceVersion: `${LABEL_PREFIX}enforce-version`,
  audit: `${LABEL_PREFIX}audit`,
  auditVersion: `${LABEL_PREFIX}audit-version`,
  warn: `${LABEL_PREFIX}warn`,
  warnVersion: `${LABEL_PREFIX}warn-version`,
} as const;

const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

export const LATEST: Version = 'latest';
export const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', version: LATEST };

export const isLevel = (s: string): s is Level => (LEVELS as readonly string[]).includes(s);

/** The level, or an error text as upstream's ParseLevel. */
export function parseLevel(s: string): Level | Error {
  return isLevel(s) ? s : new Error(`must be one of ${LEVELS.join(', ')}`);
}

/** "latest" or "v1.<minor>" (no leading zeros), or an error text as upstream's ParseVersion. */
export function parseVersion(s: string): Version | Error {
  if (s === 'latest') return LATEST;
  const m = /^v1\.(0|[1-9][0-9]*)$/.exec(s);
  return m ? { minor: Number(m[1]) } : new Error('must be "latest" or "v1.x"');
}

export const versionString = (v: Version): string => (v === 'latest' ? 'latest' : `v1.${v.minor}`);
export const levelVersionString = (lv: LevelVersion): string => `${lv.level}:${versionString(lv.version)}`;

/** a < b, with latest newer than every numbered version. */
export function olderThan(a: Version, b: Version): boolean {
  if (a === 'latest') return false;
  if (b === 'latest') return true;
  return a.minor < b.minor;
}

export const sameVersion = (a: Version, b: Version): boolean => versionString(a) === versionString(b);
export const sameLevelVersion = (a: LevelVersion, b: LevelVersion): boolean =>
  a.level === b.level && sameVersion(a.version, b.version);

/** -1, 0 or 1 as a is less, as or more strict than b. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

/** Upstream's Equivalent: two privileged levels are equal whatever their versions. */
const equivalent = (a: LevelVersion, b: LevelVersion): boolean =>
  (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);

export const policiesEquivalent = (a: Policy, b: Policy): boolean =>
  equivalent(a.enforce, b.enforce) && equivalent(a.audit, b.audit) && equivalent(a.warn, b.warn);

export const fullyPrivileged = (p: Policy): boolean =>
  p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';

const invalidLabel = (label: string, value: string, e: Error): Cause => ({
  field: `metadata.labels[${label}]`,
  message: `Invalid value: ${JSON.stringify(value)}: ${e.message}`,
});

/**
 * The policy a namespace's labels ask for, over the configured defaults (upstream's PolicyToEvaluate).
 * A bad enforce label keeps its level most strict (restricted); bad audit and warn labels fail open.
 * Without a warn label, warn follows a stricter enforce level (and its version, unless warn-version is set).
 */
export function policyFromLabels(
  labels: Record<string, string> | undefined,
  defaults: Policy,
): { policy: Policy; errors: Cause[] } {
  const p: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errs: Cause[] = [];
  if (!labels || !Object.keys(labels).length) return { policy: p, errors: errs };
  const level = (label: string, failOpen: boolean): Level | undefined => {
    const value = labels[label];
    if (value === undefined) return undefined;
    const l = parseLevel(value);
    if (l instanceof Error) {
      errs.push(invalidLabel(label, value, l));
      return failOpen ? 'privileged' : 'restricted';
    }
    return l;
  };
  const version = (label: string): Version | undefined => {
    const value = labels[label];
    if (value === undefined) return undefined;
    const v = parseVersion(value);
    if (v instanceof Error) {
      errs.push(invalidLabel(label, value, v));
      return LATEST;
    }
    return v;
  };
  const enforceValid = labels[LABELS.enforce] !== undefined && isLevel(labels[LABELS.enforce]!);
  p.enforce.level = level(LABELS.enforce, false) ?? p.enforce.level;
  p.enforce.version = version(LABELS.enforceVersion) ?? p.enforce.version;
  p.audit.level = level(LABELS.audit, true) ?? p.audit.level;
  p.audit.version = version(LABELS.auditVersion) ?? p.audit.version;
  const hasWarnLevel = labels[LABELS.warn] !== undefined;
  const hasWarnVersion = labels[LABELS.warnVersion] !== undefined;
  p.warn.level = level(LABELS.warn, true) ?? p.warn.level;
  p.warn.version = version(LABELS.warnVersion) ?? p.warn.version;
  if (!hasWarnLevel && enforceValid && compareLevels(p.enforce.level, p.warn.level) > 0) {
    p.warn.level = p.enforce.level;
    if (!hasWarnVersion) p.warn.version = p.enforce.version;
  }
  return { policy: p, errors: errs };
}
