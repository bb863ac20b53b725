import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { memoryLogger } from '../kube/log.js';
import { applyConntrackSysctls, CONNTRACK_DEFAULTS, conntrackSysctls } from './conntrack-sysctls.js';

test('conntrack sysctls from the configuration: the table size from maxPerCore and min, timeouts; 0 leaves a setting alone', () => {
  assert.deepEqual(conntrackSysctls(CONNTRACK_DEFAULTS, 2), [
    { name: 'nf_conntrack_max', value: 131072, raiseOnly: true },
    { name: 'nf_conntrack_tcp_timeout_established', value: 86400 },
    { name: 'nf_conntrack_tcp_timeout_close_wait', value: 3600 },
  ]);
  assert.equal(conntrackSysctls(CONNTRACK_DEFAULTS, 8)[0]!.value, 262144, 'maxPerCore × CPUs when above min');
  assert.deepEqual(
    conntrackSysctls(
      {
        ...CONNTRACK_DEFAULTS,
        maxPerCore: 0,
        tcpEstablishedTimeout: 0,
        tcpCloseWaitTimeout: 0,
        tcpBeLiberal: true,
        udpTimeout: 30,
        udpStreamTimeout: 120,
      },
      2,
    ),
    [
      { name: 'nf_conntrack_tcp_be_liberal', value: 1 },
      { name: 'nf_conntrack_udp_timeout', value: 30 },
      { name: 'nf_conntrack_udp_timeout_stream', value: 120 },
    ],
  );
});

test('applying: nf_conntrack_max only raised, others written when different, an unwritable one logged and skipped', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ct-sysctl-'));
  try {
    fs.writeFileSync(path.join(dir, 'nf_conntrack_max'), '262144\n');
    fs.writeFileSync(path.join(dir, 'nf_conntrack_tcp_timeout_established'), '432000\n');
    fs.mkdirSync(path.join(dir, 'nf_conntrack_tcp_timeout_close_wait')); // a write fails here
    const log = memoryLogger();
    applyConntrackSysctls(conntrackSysctls(CONNTRACK_DEFAULTS, 2), log, dir);
    assert.equal(fs.readFileSync(path.join(dir, 'nf_conntrack_max'), 'utf8').trim(), '262144', 'never lowered');
    assert.equal(fs.readFileSync(path.join(dir, 'nf_conntrack_tcp_timeout_established'), 'utf8').trim(), '86400');
    assert.match(log.lines.join('\n'), /set sysctl net\/netfilter\/nf_conntrack_tcp_timeout_established to 86400/);
    assert.match(log.lines.join('\n'), /conntrack: cannot read .*nf_conntrack_tcp_timeout_close_wait/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
