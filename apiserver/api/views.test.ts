// events.k8s.io/v1: the same Events as core/v1, with
// upstream's field names, through every verb.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { KubeApiError } from '../../kube/client.js';
import { useTestApiServer } from '../../testing/apiserver.js';
import { EVENTS_V1 } from './views.js';

const V1 = '/apis/events.k8s.io/v1/namespaces/default/events';
const CORE = '/api/v1/namespaces/default/events';
const s = useTestApiServer('n1');

test('conversion renames fields both ways and field selectors follow', () => {
  const v1 = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'e' },
    regarding: { kind: 'Pod', name: 'p' },
    note: 'n',
    reportingController: 'c',
    deprecatedCount: 3,
    deprecatedSource: { component: 'x' },
  };
  const core = EVENTS_V1.toStorage(v1);
  assert.deepEqual(core, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'e' },
    involvedObject: { kind: 'Pod', name: 'p' },
    message: 'n',
    reportingComponent: 'c',
    count: 3,
    source: { component: 'x' },
  });
  assert.deepEqual(EVENTS_V1.fromStorage(core), v1);
  assert.equal(EVENTS_V1.field('regarding.name'), 'involvedObject.name');
  assert.equal(EVENTS_V1.field('reportingController'), 'reportingComponent');
  assert.equal(EVENTS_V1.field('type'), 'type');
});

test('an events.k8s.io/v1 Event is a core Event and back: create, get, list by field, patch, watch, delete; v1 requires its fields', async () => {
  const created = await s.api.admin.create(V1, {
    metadata: { name: 'e1' },
    eventTime: '2026-12-03T07:00:00.000000Z',
    reportingController: 'example.com/ctl',
    reportingInstance: 'i',
    action: 'Sync',
    reason: 'Synced',
    type: 'Normal',
    note: 'hello',
    regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
  });
  assert.equal(created.apiVersion, 'events.k8s.io/v1');
  assert.equal(created.note, 'hello');
  const core = await s.api.admin.get(`${CORE}/e1`);
  assert.equal(core.message, 'hello');
  assert.equal(core.involvedObject.name, 'web');
  assert.equal(core.reportingComponent, 'example.com/ctl');
  await s.api.admin.create(CORE, {
    metadata: { name: 'c1' },
    involvedObject: { kind: 'Pod', name: 'db' },
    reason: 'Pulled',
    message: 'from core',
    type: 'Normal',
    count: 2,
  });
  const viaV1 = await s.api.admin.get(`${V1}/c1`);
  assert.deepEqual(
    [viaV1.note, viaV1.regarding.name, viaV1.deprecatedCount, viaV1.message],
    ['from core', 'db', 2, undefined],
  );
  // core/v1's `source` selects by source.component, or else the reporting controller.
  const bySource = await s.api.admin.get(CORE, { fieldSelector: 'source=example.com/ctl' });
  assert.deepEqual(
    bySource.items.map((e: { metadata: { name: string } }) => e.metadata.name),
    ['e1'],
  );
  const list = await s.api.admin.get(V1, { fieldSelector: 'regarding.name=web' });
  assert.equal(list.kind, 'EventList');
  assert.equal(list.apiVersion, 'events.k8s.io/v1');
  assert.deepEqual(
    list.items.map((e: { metadata: { name: string } }) => e.metadata.name),
    ['e1'],
  );
  const patched = await s.api.admin.patch(`${V1}/e1`, { note: 'patched' }, 'merge');
  assert.equal(patched.note, 'patched');
  assert.equal((await s.api.admin.get(`${CORE}/e1`)).message, 'patched');
  const ac = new AbortController();
  const seen: string[] = [];
  const done = (async () => {
    for await (const ev of s.api.admin.watch(V1, { resourceVersion: list.metadata.resourceVersion }, ac.signal)) {
      seen.push(`${ev.type}:${ev.object.apiVersion}:${ev.object.note}`);
      if (ev.type === 'DELETED') ac.abort();
    }
  })().catch(() => {});
  await s.api.admin.delete(`${CORE}/e1`);
  await done;
  assert.deepEqual(seen, ['MODIFIED:events.k8s.io/v1:patched', 'DELETED:events.k8s.io/v1:patched']);
  await assert.rejects(s.api.admin.create(V1, { metadata: { name: 'bad' } }), (e: KubeApiError) => {
    assert.equal(e.code, 422);
    assert.match(
      e.message,
      /Event.events.k8s.io "bad" is invalid: eventTime: Required value, reportingController: Required value, reportingInstance: Required value, action: Required value, reason: Required value/,
    );
    return true;
  });
});
