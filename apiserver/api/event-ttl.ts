// event-ttl: Events go a while after their last write (kube-apiserver's
// --event-ttl, default 1h), so that a long-running dev cluster does not keep
// every event it ever saw. The last write is the newest of the Event's own
// timestamps, which recorders move forward on every repeat.
import type { Obj } from '../storage/store.js';
import type { Api } from './api.js';

export function lastWrite(e: Obj): number {
  const times = [e.metadata?.creationTimestamp, e.lastTimestamp, e.eventTime, e.series?.lastObservedTime]
    .map((x) => (typeof x === 'string' ? Date.parse(x) : NaN))
    .filter(Number.isFinite);
  return times.length ? Math.max(...times) : 0;
}

/** Deletes the Events last written more than ttlMs ago; returns how many went. */
export function expireEvents(api: Api, ttlMs: number, now = Date.now()): number {
  const r = api.res('', 'events');
  let n = 0;
  for (const e of api.list(r, undefined).items as Obj[]) {
    if (lastWrite(e) + ttlMs > now) continue;
    api.delete(r, e.metadata.namespace, e.metadata.name);
    n++;
  }
  return n;
}
