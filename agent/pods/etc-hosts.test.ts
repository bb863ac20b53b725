// The pod's /etc/hosts: upstream's managed file, FQDN with a subdomain, hostAliases, host network.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { etcHostsContent, mountsEtcHosts, podHostnameAndDomain } from './etc-hosts.js';

const pod = (spec: Partial<Pod['spec']> = {}, name = 'web'): Pod => ({
  metadata: { name, namespace: 'shop', uid: 'u' },
  spec: { containers: [{ name: 'c' }], ...spec },
});

test('managed file: localhost, the IPv6 names, the pod IP under its hostname, then hostAliases', () => {
  assert.equal(
    etcHostsContent(
      pod({
        hostAliases: [
          { ip: '10.1.2.3', hostnames: ['foo.local', 'bar.local'] },
          { ip: '10.1.2.4', hostnames: ['baz'] },
        ],
      }),
      { podIPs: ['10.244.0.5'], clusterDomain: 'cluster.local' },
    ),
    '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.244.0.5\tweb\n\n# Entries added by HostAliases.\n10.1.2.3\tfoo.local\tbar.local\n10.1.2.4\tbaz\n',
  );
});

test('hostname and subdomain give the FQDN line; long names are cut to 63 characters without a trailing dash', () => {
  const c = etcHostsContent(pod({ hostname: 'db-0', subdomain: 'db' }), {
    podIPs: ['10.244.0.7'],
    clusterDomain: 'cluster.local',
  });
  assert.match(c, /\n10\.244\.0\.7\tdb-0\.db\.shop\.svc\.cluster\.local\tdb-0\n$/);
  assert.deepEqual(podHostnameAndDomain(pod({}, `${'a'.repeat(62)}-bbb`), 'cluster.local'), {
    hostname: 'a'.repeat(62),
    domain: '',
  });
  // hostnameOverride wins over hostname and subdomain: the hostname alone, no FQDN.
  const override = pod({ hostname: 'db-0', subdomain: 'db', hostnameOverride: 'override-host' } as object);
  assert.deepEqual(podHostnameAndDomain(override, 'cluster.local'), { hostname: 'override-host', domain: '' });
  assert.match(
    etcHostsContent(override, { podIPs: ['10.244.0.7'], clusterDomain: 'cluster.local' }),
    /\n10\.244\.0\.7\toverride-host\n$/,
  );
});

test("host network: the node's own hosts file under the host-network header, with the aliases", () => {
  assert.equal(
    etcHostsContent(pod({ hostNetwork: true, hostAliases: [{ ip: '10.1.2.3', hostnames: ['foo'] }] }), {
      podIPs: ['192.0.2.1'],
      clusterDomain: 'cluster.local',
      nodeHosts: '127.0.0.1 localhost\n192.0.2.1 node-a\n',
    }),
    '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n192.0.2.1 node-a\n\n# Entries added by HostAliases.\n10.1.2.3\tfoo\n',
  );
});

test('the kubelet mounts its file unless the container mounts /etc/hosts itself or the pod has no IP yet', () => {
  assert.equal(mountsEtcHosts({}, ['10.244.0.5']), true);
  assert.equal(mountsEtcHosts({ volumeMounts: [{ mountPath: '/etc/hosts' }] }, ['10.244.0.5']), false);
  assert.equal(mountsEtcHosts({}, []), false);
});
