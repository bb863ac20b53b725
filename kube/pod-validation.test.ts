// ValidatePodSpec, compared with upstream's field.ErrorList wording.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseQuantity, portNameErrors, validatePodSpec } from './pod-validation.js';

const msgs = (errs: { field?: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

test('containers: ports in range with known protocols and IANA names, env names, mounts of declared volumes, requests within limits, one probe handler', () => {
  const spec = {
    volumes: [
      { name: 'data', emptyDir: {} },
      { name: 'data', emptyDir: {} },
      { name: 'Bad_Vol', emptyDir: {} },
    ],
    containers: [
      {
        name: 'web',
        image: 'x',
        imagePullPolicy: 'Sometimes',
        ports: [
          { containerPort: 0 },
          { containerPort: 80, protocol: 'tcp', name: 'http' },
          { containerPort: 81, name: 'http' },
          { containerPort: 82, hostPort: 70000, name: 'very-long-port-name' },
        ],
        env: [{ name: 'A=B' }, { name: '1_RELAXED_IS_FINE' }],
        volumeMounts: [{ name: 'missing', mountPath: '/m' }, { name: 'data' }],
        resources: { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '1', memory: '2Gi' } },
        livenessProbe: { exec: { command: ['true'] }, httpGet: { port: 80 } },
        readinessProbe: { periodSeconds: 1 },
      },
    ],
    dnsPolicy: 'Cluster',
  };
  assert.deepEqual(msgs(validatePodSpec(spec, 'spec')), [
    'spec.volumes[1].name: Duplicate value: "data"',
    `spec.volumes[2].name: Invalid value: "Bad_Vol": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
    'spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive',
    'spec.containers[0].ports[1].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"',
    'spec.containers[0].ports[2].name: Duplicate value: "http"',
    'spec.containers[0].ports[3].hostPort: Invalid value: 70000: must be between 0 and 65535, inclusive',
    'spec.containers[0].ports[3].name: Invalid value: "very-long-port-name": must be no more than 15 characters',
    'spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than \'=\'',
    'spec.containers[0].volumeMounts[0].name: Not found: "missing"',
    'spec.containers[0].volumeMounts[1].mountPath: Required value',
    'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    'spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type',
    'spec.containers[0].readinessProbe: Required value: must specify a handler type',
    'spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
  ]);
  assert.deepEqual(portNameErrors('9090'), ['must contain at least one letter (a-z)']);
  assert.equal(parseQuantity('500m'), 0.5);
  assert.equal(parseQuantity('1Gi'), 2 ** 30);
});

test('dnsConfig: None needs nameservers; at most 3 nameserver IPs, 32 search domains of 2048 characters, named options', () => {
  const pod = (extra: Record<string, unknown>) => ({ containers: [{ name: 'c', image: 'i' }], ...extra });
  assert.deepEqual(msgs(validatePodSpec(pod({ dnsPolicy: 'None' }), 'spec')), [
    'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None',
  ]);
  assert.deepEqual(msgs(validatePodSpec(pod({ dnsPolicy: 'None', dnsConfig: { searches: ['a.b'] } }), 'spec')), [
    'spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None',
  ]);
  const bad = {
    nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', 'dns.local'],
    searches: ['ok.example.', 'Bad_Domain', ...Array.from({ length: 31 }, (_, i) => `s${i}.test`)],
    options: [{ name: 'ndots', value: '2' }, { value: '1' }],
  };
  assert.deepEqual(msgs(validatePodSpec(pod({ dnsConfig: bad }), 'spec')), [
    'spec.dnsConfig.nameservers: Invalid value: []string{"1.1.1.1", "2.2.2.2", "3.3.3.3", "dns.local"}: must not have more than 3 nameservers',
    'spec.dnsConfig.nameservers[3]: Invalid value: "dns.local": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
    `spec.dnsConfig.searches: Invalid value: []string{${bad.searches.map((s) => JSON.stringify(s)).join(', ')}}: must not have more than 32 search paths`,
    "spec.dnsConfig.searches[1]: Invalid value: \"Bad_Domain\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    'spec.dnsConfig.options[1]: Required value: must not be empty',
  ]);
  const long = [
    'a'.repeat(63) + '.' + 'b'.repeat(63),
    ...Array.from({ length: 16 }, () => 'c'.repeat(63) + '.' + 'd'.repeat(63)),
  ];
  assert.match(
    msgs(validatePodSpec(pod({ dnsConfig: { searches: long } }), 'spec')).join('\n'),
    /must not have more than 2048 characters \(including spaces\) in the search list/,
  );
  assert.deepEqual(
    validatePodSpec(
      pod({
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['10.96.0.10', 'fd00::a'],
          searches: ['default.svc.cluster.local.'],
          options: [{ name: 'ndots', value: '2' }],
        },
      }),
      'spec',
    ),
    [],
  );
});

test('container restartPolicy and restartPolicyRules (v1.35+); init containers without Always take no probes or hooks', () => {
  const spec = {
    initContainers: [
      { name: 'sc', image: 'i', restartPolicy: 'Always', readinessProbe: { exec: { command: ['true'] } } },
      { name: 'i1', image: 'i', restartPolicy: 'OnFailure' },
      { name: 'i2', image: 'i', livenessProbe: { exec: { command: ['true'] } } },
      { name: 'i3', image: 'i', restartPolicy: 'Sometimes' },
    ],
    containers: [
      {
        name: 'c',
        image: 'i',
        restartPolicy: 'Never',
        restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
      },
      {
        name: 'd',
        image: 'i',
        restartPolicyRules: [
          { action: 'Explode', exitCodes: { operator: 'Maybe', values: [1] } },
          { action: 'Restart' },
        ],
      },
    ],
  };
  assert.deepEqual(msgs(validatePodSpec(spec, 'spec')), [
    'spec.containers[1].restartPolicy: Required value: must specify restartPolicy when restart rules are used',
    'spec.containers[1].restartPolicyRules[0].action: Unsupported value: "Explode": supported values: "Restart", "RestartAllContainers"',
    'spec.containers[1].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Maybe": supported values: "In", "NotIn"',
    'spec.containers[1].restartPolicyRules[1].exitCodes: Required value: must be specified',
    'spec.initContainers[2].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always',
    'spec.initContainers[3].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
  ]);
});

test('sysctls: names as the kernel spells them, once each, with string values', () => {
  const spec = {
    containers: [{ name: 'c', image: 'i' }],
    securityContext: {
      sysctls: [
        { name: 'net.ipv4.tcp_syncookies', value: '1' },
        { name: 'Net.Bad', value: '1' },
        { name: 'net.ipv4.tcp_syncookies', value: '0' },
        { name: 5, value: 1 },
      ],
    },
  };
  assert.deepEqual(msgs(validatePodSpec(spec, 'spec')), [
    'spec.securityContext.sysctls[1].name: Invalid value: "Net.Bad": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\.\\/])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$',
    'spec.securityContext.sysctls[2].name: Duplicate value: "net.ipv4.tcp_syncookies"',
    'spec.securityContext.sysctls[3].name: Required value',
  ]);
});

test('resizePolicy: cpu and memory once each, NotRequired or RestartContainer, only NotRequired in a Never pod', () => {
  const spec = (policy: unknown[], restartPolicy = 'Always') => ({
    restartPolicy,
    containers: [{ name: 'c', image: 'i', resizePolicy: policy }],
  });
  assert.deepEqual(
    validatePodSpec(
      spec([
        { resourceName: 'cpu', restartPolicy: 'NotRequired' },
        { resourceName: 'memory', restartPolicy: 'RestartContainer' },
      ]),
      'spec',
    ),
    [],
  );
  assert.deepEqual(
    validatePodSpec(
      spec([
        { resourceName: 'cpu', restartPolicy: 'NotRequired' },
        { resourceName: 'cpu', restartPolicy: 'NotRequired' },
      ]),
      'spec',
    ).map((e) => e.message),
    ['Duplicate value: "cpu"'],
  );
  assert.deepEqual(
    validatePodSpec(spec([{ resourceName: 'gpu', restartPolicy: 'Later' }]), 'spec').map((e) => e.message),
    [
      'Unsupported value: "gpu": supported values: "cpu", "memory"',
      'Unsupported value: "Later": supported values: "NotRequired", "RestartContainer"',
    ],
  );
  assert.deepEqual(
    validatePodSpec(spec([{ resourceName: 'memory', restartPolicy: 'RestartContainer' }], 'Never'), 'spec').map(
      (e) => `${e.field}: ${e.message}`,
    ),
    [
      "spec.containers[0].resizePolicy: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'",
    ],
  );
});

test('hostnameOverride: a DNS subdomain of at most 64 characters, not with setHostnameAsFQDN or hostNetwork', () => {
  const spec = (extra: Record<string, unknown>) => ({ containers: [{ name: 'c', image: 'i' }], ...extra });
  assert.deepEqual(msgs(validatePodSpec(spec({ hostnameOverride: 'web-1.example' }), 'spec')), []);
  assert.deepEqual(msgs(validatePodSpec(spec({ hostnameOverride: 'Web_1' }), 'spec')), [
    "spec.hostnameOverride: Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ]);
  assert.deepEqual(msgs(validatePodSpec(spec({ hostnameOverride: 'web', setHostnameAsFQDN: true }), 'spec')), [
    'spec.hostnameOverride: Forbidden: may not be specified when setHostnameAsFQDN is true',
  ]);
  assert.deepEqual(msgs(validatePodSpec(spec({ hostnameOverride: 'web', hostNetwork: true }), 'spec')), [
    'spec.hostnameOverride: Forbidden: may not be specified when hostNetwork is true',
  ]);
});

test('podCertificate projections: a known key type; maxExpirationSeconds from 3600 to 91 days, a day for kubernetes.io signers', () => {
  const spec = (pc: Record<string, unknown>) => ({
    containers: [{ name: 'c', image: 'i' }],
    volumes: [
      {
        name: 'v',
        projected: {
          sources: [
            { podCertificate: { signerName: 'example.com/s', keyType: 'ED25519', credentialBundlePath: 'b', ...pc } },
          ],
        },
      },
    ],
  });
  const at = 'spec.volumes[0].projected.sources[0].podCertificate';
  assert.deepEqual(msgs(validatePodSpec(spec({ maxExpirationSeconds: 86400 }), 'spec')), []);
  assert.deepEqual(msgs(validatePodSpec(spec({ maxExpirationSeconds: 91 * 86400 + 1 }), 'spec')), [
    `${at}.maxExpirationSeconds: Invalid value: 7862401: if provided, maxExpirationSeconds must be <= 7862400`,
  ]);
  assert.deepEqual(
    msgs(validatePodSpec(spec({ signerName: 'kubernetes.io/x', maxExpirationSeconds: 86401 }), 'spec')),
    [`${at}.maxExpirationSeconds: Invalid value: 86401: if provided, maxExpirationSeconds must be <= 86400`],
  );
  assert.deepEqual(msgs(validatePodSpec(spec({ maxExpirationSeconds: 60, keyType: 'DSA' }), 'spec')), [
    `${at}.keyType: Unsupported value: "DSA": supported values: "RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"`,
    `${at}.maxExpirationSeconds: Invalid value: 60: if provided, maxExpirationSeconds must be >= 3600`,
  ]);
});
