import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseUdpFlows, staleUdpFilters } from './conntrack.js';

const LIST = `udp      17 29 src=10.250.0.1 dst=10.96.0.10 sport=40053 dport=53 src=10.244.0.5 dst=10.250.0.1 sport=53 dport=40053 mark=0 use=1
udp      17 28 src=10.250.0.1 dst=10.96.0.10 sport=40054 dport=53 src=10.244.0.6 dst=10.250.0.1 sport=53 dport=40054 [ASSURED] mark=0 use=1
udp      17 27 src=10.250.0.1 dst=10.96.0.10 sport=40055 dport=53 [UNREPLIED] src=10.96.0.10 dst=10.250.0.1 sport=53 dport=40055 mark=0 use=1
udp      17 26 src=192.0.2.7 dst=10.250.0.1 sport=5000 dport=30053 src=10.244.0.5 dst=192.0.2.7 sport=53 dport=5000 mark=0 use=1
udp      17 25 src=10.250.0.1 dst=8.8.8.8 sport=5001 dport=53 src=8.8.8.8 dst=10.250.0.1 sport=53 dport=5001 mark=0 use=1
conntrack v1.4.7 (conntrack-tools): 5 flow entries have been shown.`;

test('conntrack listings parse to the original destination and the reply source', () => {
  const flows = parseUdpFlows(LIST);
  assert.equal(flows.length, 5);
  assert.deepEqual(flows[2], { origDst: '10.96.0.10', origDport: 53, replySrc: '10.96.0.10' });
  assert.deepEqual(flows[3], { origDst: '10.250.0.1', origDport: 30053, replySrc: '10.244.0.5' });
});

test('stale: replies from anything but a serving endpoint, to the Service IPs or its NodePort; other traffic and endpoint-less Services untouched', () => {
  const flows = parseUdpFlows(LIST);
  const dns = { ips: ['10.96.0.10'], port: 53, nodePort: 30053, serving: new Set(['10.244.0.6']) };
  assert.deepEqual(staleUdpFilters(flows, [dns]), [
    ['-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53', '--reply-src', '10.244.0.5'],
    ['-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53', '--reply-src', '10.96.0.10'],
    ['-p', 'udp', '--orig-port-dst', '30053', '--reply-src', '10.244.0.5'],
  ]);
  assert.deepEqual(staleUdpFilters(flows, [{ ...dns, serving: new Set() }]), [], 'no serving endpoint: left alone');
  assert.deepEqual(staleUdpFilters(flows, [{ ...dns, serving: new Set(['10.244.0.5', '10.244.0.6']) }]), [
    ['-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53', '--reply-src', '10.96.0.10'],
  ]);
});
