import assert from 'node:assert/strict';
import { test } from 'node:test';

// Test-only: the dev apiserver stands in for a real one.
import { useTestApiServer } from '../testing/apiserver.js';
import { KubeClient } from './client.js';
import { ApiEventRecorder, LogEventRecorder } from './events.js';
import { memoryLogger } from './log.js';

const t = useTestApiServer('n1');

test('events are posted from kubelet/<node>, and repeats are aggregated by count', async () => {
  const log = memoryLogger();
  const rec = new ApiEventRecorder(t.node, { component: 'kubelet', host: 'n1' }, log, new LogEventRecorder(log));
  const ref = { kind: 'Pod' as const, namespace: 'default', name: 'web', uid: 'u-1', fieldPath: 'spec.containers{c}' };
  rec.event(ref, 'Normal', 'Pulled', 'Container image "i:1" already present on machine');
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod web_default(u-1)');
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod web_default(u-1)');
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c in pod web_default(u-1)');
  await rec.flush();
  const list = await t.node.get('/api/v1/namespaces/default/events', { fieldSelector: 'involvedObject.uid=u-1' });
  const by = Object.fromEntries(list.items.map((e: any) => [e.reason, e]));
  assert.equal(list.items.length, 2);
  assert.equal(by.BackOff.count, 3);
  assert.equal(by.BackOff.type, 'Warning');
  assert.equal(by.Pulled.count, 1);
  assert.deepEqual(by.Pulled.source, { component: 'kubelet', host: 'n1' });
  assert.deepEqual(by.Pulled.involvedObject, {
    apiVersion: 'v1',
    kind: 'Pod',
    name: 'web',
    namespace: 'default',
    uid: 'u-1',
    fieldPath: 'spec.containers{c}',
  });
  assert.ok(
    log.lines.some((l) => l.includes('event Warning BackOff pod/default/web')),
    'still logged',
  );
});

test('an unreachable apiserver drops events without blocking the caller', async () => {
  const dead = new KubeClient({ server: 'https://127.0.0.1:1' });
  const rec = new ApiEventRecorder(dead, { component: 'kubelet', host: 'n1' }, memoryLogger());
  const t0 = Date.now();
  rec.event({ kind: 'Pod', namespace: 'default', name: 'x' }, 'Normal', 'Started', 'Started container c');
  assert.ok(Date.now() - t0 < 50, 'event() returns at once');
  await rec.flush();
  assert.equal(rec.posted, 0);
  dead.close();
});

test('from the 10th different message for one object and reason within 10 minutes, events fold into one "(combined from similar events)" Event', async () => {
  const rec = new ApiEventRecorder(t.node, { component: 'kubelet', host: 'n1' }, memoryLogger());
  const ref = { kind: 'Pod' as const, namespace: 'default', name: 'many', uid: 'u-many' };
  for (let i = 1; i <= 12; i++)
    rec.event(
      { ...ref, fieldPath: `spec.containers{c${i % 2}}` },
      'Warning',
      'Unhealthy',
      `Readiness probe failed: HTTP probe failed with statuscode: ${500 + i}`,
    );
  rec.event(ref, 'Normal', 'Pulled', 'another reason is not folded in');
  await rec.flush();
  const items = (await t.node.get('/api/v1/namespaces/default/events', { fieldSelector: 'involvedObject.uid=u-many' }))
    .items as any[];
  const unhealthy = items.filter((e) => e.reason === 'Unhealthy');
  assert.equal(unhealthy.length, 10, '9 single events and one combined');
  const combined = unhealthy.filter((e) => e.message.startsWith('(combined from similar events): '));
  assert.equal(combined.length, 1);
  assert.equal(
    combined[0].message,
    '(combined from similar events): Readiness probe failed: HTTP probe failed with statuscode: 512',
  );
  assert.equal(combined[0].count, 3);
  assert.equal(items.filter((e) => e.reason === 'Pulled').length, 1);
});
