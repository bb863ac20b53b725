// The registry's config: the loopback listener takes pushes; the node-address listener is read-only.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parse } from 'yaml';

import { registryConfig } from './containerd-config.js';

test('registryConfig: writable by default; readOnly turns on maintenance.readonly and off deletes', () => {
  const rw = parse(registryConfig('/d', '127.0.0.1:5000'));
  assert.deepEqual(rw.storage, { filesystem: { rootdirectory: '/d' }, delete: { enabled: true } });
  assert.equal(rw.http.addr, '127.0.0.1:5000');
  const ro = parse(registryConfig('/d', '192.0.2.1:5000', { readOnly: true }));
  assert.deepEqual(ro.storage, {
    filesystem: { rootdirectory: '/d' },
    delete: { enabled: false },
    maintenance: { readonly: { enabled: true } },
  });
  assert.equal(ro.http.addr, '192.0.2.1:5000');
});
