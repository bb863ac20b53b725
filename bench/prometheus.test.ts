import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeMetricFamilies, sample } from './prometheus.js';

// Protobuf wire format by hand: a field's key is (number << 3 | wire type); 2 = length-delimited, 1 = 64-bit.
const bytes = (field: number, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
const text = (field: number, s: string): Buffer => bytes(field, Buffer.from(s));
const double = (field: number, x: number): Buffer => {
  const b = Buffer.alloc(9);
  b[0] = (field << 3) | 1;
  b.writeDoubleLE(x, 1);
  return b;
};
const varint = (field: number, x: number): Buffer => Buffer.from([field << 3, x]);
const delimited = (msg: Buffer): Buffer => Buffer.concat([Buffer.from([msg.length]), msg]);

test('protobuf exposition: gauges with labels, counters and histograms, several families in one stream', () => {
  const label = (name: string, value: string): Buffer => bytes(1, Buffer.concat([text(1, name), text(2, value)]));
  const gauge = Buffer.concat([
    text(1, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds'),
    bytes(4, Buffer.concat([label('ip_family', 'IPv4'), bytes(2, double(1, 1796654511.834))])),
    bytes(4, Buffer.concat([label('ip_family', 'IPv6'), bytes(2, double(1, 1796654511.9))])),
  ]);
  const counter = Buffer.concat([
    text(1, 'kubeproxy_sync_proxy_rules_endpoint_changes_total'),
    bytes(4, bytes(3, double(1, 1002))),
  ]);
  const histogram = Buffer.concat([
    text(1, 'kubeproxy_sync_full_proxy_rules_duration_seconds'),
    bytes(4, Buffer.concat([label('ip_family', 'IPv4'), bytes(7, Buffer.concat([varint(1, 2), double(2, 0.5)]))])),
  ]);
  const m = decodeMetricFamilies(Buffer.concat([delimited(gauge), delimited(counter), delimited(histogram)]));
  assert.equal(
    sample(m, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', { ip_family: 'IPv4' })?.value,
    1796654511.834,
  );
  assert.equal(
    sample(m, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', { ip_family: 'IPv6' })?.value,
    1796654511.9,
  );
  assert.equal(sample(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_total')?.value, 1002);
  assert.deepEqual(sample(m, 'kubeproxy_sync_full_proxy_rules_duration_seconds', { ip_family: 'IPv4' }), {
    labels: { ip_family: 'IPv4' },
    count: 2,
    sum: 0.5,
  });
  assert.equal(sample(m, 'kubeproxy_sync_full_proxy_rules_duration_seconds', { ip_family: 'IPv6' }), undefined);
  assert.equal(sample(m, 'absent'), undefined);
});
