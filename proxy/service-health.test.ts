import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';

import { memoryLogger } from '../kube/log.js';
import { healthBody, ServiceHealthServer } from './service-health.js';

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

test('health check node port: 200 with local ready endpoints and a healthy proxy, 503 otherwise; upstream body and headers; closed with the Service', async () => {
  let healthy = true;
  const log = memoryLogger();
  const hs = new ServiceHealthServer(
    () => ['127.0.0.1'],
    () => healthy,
    log,
  );
  const port = await freePort();
  const get = async () => {
    const r = await fetch(`http://127.0.0.1:${port}/`);
    return {
      code: r.status,
      type: r.headers.get('content-type'),
      nosniff: r.headers.get('x-content-type-options'),
      body: await r.text(),
    };
  };
  try {
    await hs.set('default/lb', port, 2);
    assert.deepEqual(await get(), {
      code: 200,
      type: 'application/json',
      nosniff: 'nosniff',
      body: '{\n\t"service": {\n\t\t"namespace": "default",\n\t\t"name": "lb"\n\t},\n\t"localEndpoints": 2,\n\t"serviceProxyHealthy": true\n}',
    });
    await hs.set('default/lb', port, 0);
    assert.equal((await get()).code, 503);
    await hs.set('default/lb', port, 1);
    healthy = false;
    const r = await get();
    assert.equal(r.code, 503);
    assert.equal(r.body, healthBody('default/lb', 1, false));
    await hs.set('default/lb', 0, 1);
    await assert.rejects(get(), 'the port is closed once the Service has none');
  } finally {
    await hs.close();
  }
});

test('a health check port that cannot be opened is logged as upstream, not fatal', async () => {
  const blocker = net.createServer();
  const port = await new Promise<number>((r) =>
    blocker.listen(0, '127.0.0.1', () => r((blocker.address() as net.AddressInfo).port)),
  );
  const log = memoryLogger();
  const hs = new ServiceHealthServer(
    () => ['127.0.0.1'],
    () => true,
    log,
  );
  try {
    await hs.set('default/lb', port, 1);
    assert.match(log.lines.join('\n'), new RegExp(`node failed to start healthcheck "default/lb" on port ${port}`));
  } finally {
    await hs.close();
    blocker.close();
  }
});
