// Label and field selectors, parsed the way apimachinery does
// (k8s.io/apimachinery/pkg/labels and pkg/fields).
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';

export type Requirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: '=' | '!='; values: [string] }
  | { key: string; op: 'gt' | 'lt'; values: [string] }
  | { key: string; op: 'exists' | '!'; values: [] };

export class SelectorError extends Error {}

const KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) throw new SelectorError(`unbalanced parentheses in "${s}"`);
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

function checkKey(k: string, whole: string): string {
  if (!KEY.test(k) || k.length > 316) throw new SelectorError(`invalid label key "${k}" in selector "${whole}"`);
  return k;
}
function checkValue(v: string, whole: string): string {
  if (!VALUE.test(v) || v.length > 63) throw new SelectorError(`invalid label value "${v}" in selector "${whole}"`);
  return v;
}

export function parseLabelSelector(s: string): Requirement[] {
  const reqs: Requirement[] = [];
  for (const part of splitTop(s)) {
    let m: RegExpExecArray | null;
    if ((m = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part))) {
      const values = m[3]!.split(',').map((v) => checkValue(v.trim(), s));
      reqs.push({ key: checkKey(m[1]!, s), op: m[2] as 'in' | 'notin', values });
    } else if ((m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part))) {
      reqs.push({ key: checkKey(m[1]!, s), op: m[2] === '!=' ? '!=' : '=', values: [checkValue(m[3]!, s)] });
    } else if ((m = /^([^<>\s]+)\s*([<>])\s*(\S+)$/.exec(part))) {
      // Gt and Lt compare a label's value as an integer, as upstream's selectors do.
      if (!/^[-+]?[0-9]+$/.test(m[3]!))
        throw new SelectorError(
          `unable to parse requirement: values[0]: Invalid value: ${JSON.stringify(m[3])}: for 'Gt', 'Lt' operators, the value must be an integer`,
        );
      reqs.push({ key: checkKey(m[1]!, s), op: m[2] === '>' ? 'gt' : 'lt', values: [m[3]!] });
    } else if ((m = /^!\s*(\S+)$/.exec(part))) {
      reqs.push({ key: checkKey(m[1]!, s), op: '!', values: [] });
    } else if (/^\S+$/.test(part)) {
      reqs.push({ key: checkKey(part, s), op: 'exists', values: [] });
    } else {
      throw new SelectorError(`unable to parse requirement "${part}" in selector "${s}"`);
    }
  }
  return reqs;
}

export function matchLabels(reqs: Requirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case '=':
        return has && v === r.values[0];
      case '!=':
        return !has || v !== r.values[0];
      case 'in':
        return has && r.values.includes(v!);
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'exists':
        return has;
      case '!':
        return !has;
      case 'gt':
      case 'lt': {
        if (!has || !/^[-+]?[0-9]+$/.test(v!)) return false;
        const [have, want] = [BigInt(v!), BigInt(r.values[0])];
        return r.op === 'gt' ? have > want : have < want;
      }
    }
  });
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export function parseFieldSelector(s: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const part of s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(part);
    if (!m) throw new SelectorError(`invalid selector: '${s}'; can't understand '${part}'`);
    out.push({ field: m[1]!.trim(), op: m[2] === '!=' ? '!=' : '=', value: m[3]!.trim() });
  }
  return out;
}

export function matchFields(reqs: FieldRequirement[], fields: Record<string, string>): boolean {
  return reqs.every((r) => ((fields[r.field] ?? '') === r.value) === (r.op === '='));
}

/** Whether a metav1.LabelSelector selects `labels` (LabelSelectorAsSelector(sel).Matches(labels)). */
export function labelSelectorMatches(sel: LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const vals = e.values ?? [];
    if (e.operator === 'In' && !(has && vals.includes(labels[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && vals.includes(labels[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}
