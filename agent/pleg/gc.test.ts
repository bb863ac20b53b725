import assert from 'node:assert/strict';
import { test } from 'node:test';

import { selectGarbage } from './gc.js';
import type { RuntimeSnapshot } from './relist.js';

type Lists = Pick<RuntimeSnapshot, 'sandboxes' | 'containers'>;

const c = (id: string, uid: string, name: string, state: string, created: number, sandbox = `sb-${uid}`) =>
  ({
    id,
    pod_sandbox_id: sandbox,
    state,
    created_at: String(created),
    labels: { 'io.kubernetes.pod.uid': uid, 'io.kubernetes.container.name': name },
  }) as unknown as RuntimeSnapshot['containers'][number];
const s = (id: string, uid: string, state: string, created: number) =>
  ({
    id,
    state,
    created_at: String(created),
    labels: { 'io.kubernetes.pod.uid': uid },
  }) as unknown as RuntimeSnapshot['sandboxes'][number];

test('keeps the newest exited instance per container, removes older ones', () => {
  const snap: Lists = {
    sandboxes: [s('sb-u1', 'u1', 'SANDBOX_READY', 1)],
    containers: [
      c('a0', 'u1', 'a', 'CONTAINER_EXITED', 1),
      c('a1', 'u1', 'a', 'CONTAINER_EXITED', 2),
      c('a2', 'u1', 'a', 'CONTAINER_EXITED', 3),
      c('a3', 'u1', 'a', 'CONTAINER_RUNNING', 4),
      c('b0', 'u1', 'b', 'CONTAINER_EXITED', 1),
    ],
  };
  assert.deepEqual(selectGarbage(snap, new Set(['u1'])), { containers: ['a1', 'a0'], sandboxes: [] });
});

test('dead sandboxes of gone pods and old dead sandboxes of live pods are removed', () => {
  const snap: Lists = {
    sandboxes: [
      s('old', 'u1', 'SANDBOX_NOTREADY', 1),
      s('cur', 'u1', 'SANDBOX_READY', 2),
      s('gone', 'u9', 'SANDBOX_NOTREADY', 1),
      s('holding', 'u1', 'SANDBOX_NOTREADY', 0),
    ],
    containers: [
      c('x', 'u9', 'a', 'CONTAINER_EXITED', 1, 'gone'),
      c('keep', 'u1', 'a', 'CONTAINER_EXITED', 5, 'holding'),
    ],
  };
  const g = selectGarbage(snap, new Set(['u1']));
  assert.deepEqual(g.containers, ['x']);
  assert.deepEqual(g.sandboxes.sort(), ['gone', 'old']);
});

test('the newest sandbox of a live pod stays even when not ready', () => {
  const snap: Lists = { sandboxes: [s('only', 'u1', 'SANDBOX_NOTREADY', 1)], containers: [] };
  assert.deepEqual(selectGarbage(snap, new Set(['u1'])).sandboxes, []);
  assert.deepEqual(selectGarbage(snap, new Set()).sandboxes, ['only']);
});

test('containers stuck in created go, unless one is the newest instance of a live pod (it may be starting)', () => {
  const snap: Lists = {
    sandboxes: [s('sb-u1', 'u1', 'SANDBOX_READY', 1)],
    containers: [
      c('stuck', 'u1', 'a', 'CONTAINER_CREATED', 1),
      c('prev', 'u1', 'a', 'CONTAINER_EXITED', 2),
      c('cur', 'u1', 'a', 'CONTAINER_RUNNING', 3),
      c('starting', 'u1', 'b', 'CONTAINER_CREATED', 5),
      c('orphan', 'u9', 'a', 'CONTAINER_CREATED', 1, 'sb-u9'),
    ],
  };
  assert.deepEqual(selectGarbage(snap, new Set(['u1'])).containers.sort(), ['orphan', 'stuck']);
});
