import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { memoryLogger } from '../../kube/log.js';
import { HttpSource } from './http.js';

test('manifest URL: Pod or PodList bodies become SETs; errors keep the last SET; empty is empty; headers are sent', async () => {
  let body = '';
  let code = 200;
  const seenHeaders: (string | undefined)[] = [];
  const srv = http.createServer((req, res) => {
    seenHeaders.push(req.headers['x-token'] as string | undefined);
    res.writeHead(code, { 'Content-Type': 'application/yaml' });
    res.end(body);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/pods`;
  const sets: Pod[][] = [];
  const log = memoryLogger();
  const src = new HttpSource({
    url,
    headers: { 'X-Token': ['abc'] },
    nodeName: 'n1',
    checkFrequencyMs: 60_000,
    log,
    onSet: (p) => sets.push(p),
  });
  try {
    body =
      'apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: [{name: c, image: "i:1"}]}\n- metadata: {name: b}\n  spec: {containers: [{name: c, image: "i:1"}]}\n';
    await src.start();
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['a-n1', 'b-n1'],
    );
    assert.equal(sets.at(-1)![0]!.metadata!.annotations!['kubernetes.io/config.source'], 'http');
    assert.ok(sets.at(-1)![0]!.metadata!.annotations!['kubernetes.io/config.seen']);
    assert.equal(seenHeaders[0], 'abc');
    await src.poll();
    assert.equal(sets.length, 1, 'an unchanged body is not a new SET');
    code = 500;
    await src.poll();
    await src.poll();
    assert.equal(sets.length, 1, 'a failed fetch keeps the last SET');
    assert.equal(
      log.lines.filter((l) => l.includes('static pod manifest URL failed')).length,
      1,
      'the same failure is logged once',
    );
    assert.match(log.lines.join('\n'), /\/pods: HTTP 500/);
    code = 200;
    body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a' },
      spec: { containers: [{ name: 'c', image: 'i:1' }] },
    });
    await src.poll();
    assert.deepEqual(
      sets.at(-1)!.map((p) => p.metadata!.name),
      ['a-n1'],
    );
    body = 'kind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c}]}\n';
    await src.poll();
    assert.deepEqual(sets.at(-1), [], 'a broken manifest is no pods');
    assert.match(
      log.lines.join('\n'),
      /static pod manifest rejected: http:\/\/127\.0\.0\.1:\d+\/pods: Pod "bad": spec\.containers\[0\]\.image: Required value/,
    );
    body = '';
    await src.poll();
    assert.deepEqual(sets.at(-1), []);
  } finally {
    src.stop();
    srv.close();
  }
});
