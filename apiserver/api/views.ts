// Resources served in two API versions over one storage, as upstream does
// for Events: events.k8s.io/v1 Event is core/v1 Event with renamed fields
// (upstream's pkg/apis/events/v1 conversion). A view converts its objects to
// the stored form and back, and its field selectors to the stored fields.
import type { Obj } from '../storage/store.js';
import type { Cause } from './errors.js';

export interface View {
  /** The stored resource (group, resource). */
  storage: { group: string; resource: string };
  toStorage(o: Obj): Obj;
  fromStorage(o: Obj): Obj;
  /** A field selector's field in the stored form. */
  field(f: string): string;
  /** What this version requires on create (upstream's per-version validation). */
  validateCreate(o: Obj): Cause[];
}

// events.k8s.io/v1 name → core/v1 name.
const EVENT_FIELDS: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function rename(o: Obj, pairs: [string, string][], apiVersion: string): Obj {
  const out: Obj = { ...o, apiVersion };
  for (const [from, to] of pairs) {
    delete out[from];
    if (o[from] !== undefined) out[to] = o[from];
  }
  return out;
}

export const EVENTS_V1: View = {
  storage: { group: '', resource: 'events' },
  toStorage: (o) => rename(o, EVENT_FIELDS, 'v1'),
  fromStorage: (o) =>
    rename(
      o,
      EVENT_FIELDS.map(([a, b]) => [b, a]),
      'events.k8s.io/v1',
    ),
  field: (f) => {
    for (const [v1, core] of EVENT_FIELDS) if (f === v1 || f.startsWith(`${v1}.`)) return core + f.slice(v1.length);
    return f;
  },
  validateCreate: (o) => {
    const causes: Cause[] = [];
    for (const f of ['eventTime', 'reportingController', 'reportingInstance', 'action', 'reason']) {
      if (o[f] === undefined || o[f] === '' || o[f] === null)
        causes.push({ field: f, reason: 'FieldValueRequired', message: 'Required value' });
    }
    return causes;
  },
};

/** Views by `group/resource`. */
export const VIEWS: Record<string, View> = { 'events.k8s.io/events': EVENTS_V1 };

/** A custom resource served in a version other than its storage version: conversion None changes only apiVersion. */
export function versionView(r: {
  group: string;
  version: string;
  resource: string;
  custom?: { storageVersion: string };
}): View {
  const served = `${r.group}/${r.version}`;
  const stored = `${r.group}/${r.custom!.storageVersion}`;
  return {
    storage: { group: r.group, resource: r.resource },
    toStorage: (o) => ({ ...o, apiVersion: stored }),
    fromStorage: (o) => ({ ...o, apiVersion: served }),
    field: (f) => f,
    validateCreate: () => [],
  };
}
