import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ApiEventRecorder } from '../../kube/events.js';
import { memoryLogger } from '../../kube/log.js';
import { useTestApiServer } from '../../testing/apiserver.js';
import { expireEvents } from './event-ttl.js';

const t = useTestApiServer('n1');

test('Events expire an --event-ttl after their last write; a repeat of an expired one creates it again with its count', async () => {
  const rec = new ApiEventRecorder(t.node, { component: 'kubelet', host: 'n1' }, memoryLogger());
  const ref = { kind: 'Pod' as const, namespace: 'default', name: 'ttl', uid: 'u-ttl' };
  const mine = async () =>
    (await t.node.get('/api/v1/namespaces/default/events', { fieldSelector: 'involvedObject.uid=u-ttl' })).items;
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c');
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c');
  await rec.flush();
  const [first] = await mine();
  assert.equal(first.count, 2);
  const api = t.api.srv.api;
  assert.equal(expireEvents(api, 3600_000), 0, 'nothing is an hour old');
  // An hour and a bit after its last write it goes (the other test's events too).
  assert.ok(expireEvents(api, 3600_000, Date.parse(first.lastTimestamp) + 3601_000) >= 1);
  assert.equal((await mine()).length, 0);
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c');
  await rec.flush();
  const again = await mine();
  assert.equal(again.length, 1, 'created again instead of failing on a 404 patch');
  assert.equal(again[0].count, 3);
  assert.equal(again[0].firstTimestamp, first.firstTimestamp);
  rec.event(ref, 'Warning', 'BackOff', 'Back-off restarting failed container c');
  await rec.flush();
  assert.equal((await mine())[0].count, 4, 'and patched from then on');
});
