import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Container } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';

import type { PodSpec } from './checks.js';
import { evaluatePod, forbiddenDetail, forbiddenReason } from './evaluator.js';
import type { LevelVersion } from './policy.js';

const BASELINE: LevelVersion = { level: 'baseline', version: 'latest' };
const RESTRICTED: LevelVersion = { level: 'restricted', version: 'latest' };
const at = (level: 'baseline' | 'restricted', minor: number): LevelVersion => ({ level, version: { minor } });

/** A container that passes restricted. */
const good = (name: string, extra: Partial<Container> = {}): Container => ({
  name,
  image: 'i',
  ...extra,
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, ...extra.securityContext },
});
const restrictedPod = (spec: Partial<PodSpec> = {}): PodSpec => ({
  containers: [good('a')],
  ...spec,
  securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, ...spec.securityContext },
});
const detail = (lv: LevelVersion, spec: PodSpec, meta: ObjectMeta = {}): string =>
  forbiddenDetail(evaluatePod(lv, meta, spec));

test('a pod that meets restricted passes every level; privileged checks nothing', () => {
  assert.equal(detail(RESTRICTED, restrictedPod()), '');
  assert.equal(detail(BASELINE, restrictedPod()), '');
  const worst: PodSpec = {
    hostPID: true,
    containers: [{ name: 'a', image: 'i', securityContext: { privileged: true } }],
  };
  assert.deepEqual(evaluatePod({ level: 'privileged', version: 'latest' }, {}, worst), []);
});

test('baseline checks, with upstream reasons and details', () => {
  const cases: [string, PodSpec, string, ObjectMeta?][] = [
    [
      'host namespaces',
      { hostNetwork: true, hostPID: true, hostIPC: true, containers: [{ name: 'a' }] },
      'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)',
    ],
    [
      'privileged',
      {
        containers: [
          { name: 'c' },
          { name: 'd', securityContext: { privileged: true } },
          { name: 'e', securityContext: { privileged: true } },
        ],
      },
      'privileged (containers "d", "e" must not set securityContext.privileged=true)',
    ],
    [
      'capabilities',
      {
        containers: [
          { name: 'a', securityContext: { capabilities: { add: ['FOO', 'CHOWN', 'BAR'] } } },
          { name: 'b', securityContext: { capabilities: { add: ['BAZ'] } } },
        ],
      },
      'non-default capabilities (containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add)',
    ],
    [
      'hostPath',
      {
        containers: [{ name: 'a' }],
        volumes: [
          { name: 'a', hostPath: { path: '/' } },
          { name: 'e', emptyDir: {} },
          { name: 'b', hostPath: { path: '/x' } },
        ],
      },
      'hostPath volumes (volumes "a", "b")',
    ],
    [
      'hostPorts',
      {
        containers: [
          { name: 'a', ports: [{ containerPort: 1 }] },
          {
            name: 'b',
            ports: [
              { containerPort: 1, hostPort: 20 },
              { containerPort: 2, hostPort: 10 },
            ],
          },
          { name: 'c', ports: [{ containerPort: 3, hostPort: 30 }] },
        ],
      },
      'hostPort (containers "b", "c" use hostPorts 10, 20, 30)',
    ],
    [
      'one hostPort',
      { containers: [{ name: 'b', ports: [{ containerPort: 1, hostPort: 20 }] }] },
      'hostPort (container "b" uses hostPort 20)',
    ],
    [
      'AppArmor',
      {
        securityContext: { appArmorProfile: { type: 'Unconfined' } },
        containers: [{ name: 'foo', securityContext: { appArmorProfile: { type: 'Unconfined' } } }],
      },
      'forbidden AppArmor profile (pod and container "foo" must not set AppArmor profile type to "Unconfined")',
    ],
    [
      'AppArmor annotations',
      { containers: [{ name: 'a' }] },
      // Upstream quotes the values inside quotes without escaping them.
      'forbidden AppArmor profiles (annotations must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/a="unconfined"", "container.apparmor.security.beta.kubernetes.io/b="x"")',
      {
        annotations: {
          'container.apparmor.security.beta.kubernetes.io/b': 'x',
          'container.apparmor.security.beta.kubernetes.io/a': 'unconfined',
          'container.apparmor.security.beta.kubernetes.io/c': 'localhost/p',
        },
      },
    ],
    [
      'seLinuxOptions',
      {
        securityContext: { seLinuxOptions: { type: 'foo' } },
        containers: [
          { name: 'e', securityContext: { seLinuxOptions: { type: 'bar', user: 'u', role: 'r' } } },
          { name: 'f', securityContext: { seLinuxOptions: { type: 'container_t' } } },
        ],
      },
      'seLinuxOptions (pod and container "e" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set)',
    ],
    [
      'procMount',
      {
        containers: [
          { name: 'd', securityContext: { procMount: 'Unmasked' } },
          { name: 'e', securityContext: { procMount: 'Default' } },
        ],
      },
      'procMount (container "d" must not set securityContext.procMount to "Unmasked")',
    ],
    [
      'seccomp',
      {
        securityContext: { seccompProfile: { type: 'Unconfined' } },
        containers: [
          { name: 'c', securityContext: { seccompProfile: { type: 'Unconfined' } } },
          { name: 'd', securityContext: { seccompProfile: { type: 'Unconfined' } } },
        ],
      },
      'seccompProfile (pod and containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    [
      'sysctls',
      {
        securityContext: {
          sysctls: [
            { name: 'kernel.msgmax', value: '1' },
            { name: 'net.ipv4.tcp_syncookies', value: '1' },
            { name: 'a.b', value: '2' },
          ],
        },
        containers: [{ name: 'a' }],
      },
      'forbidden sysctls (kernel.msgmax, a.b)',
    ],
    [
      'hostProcess',
      {
        securityContext: { windowsOptions: { hostProcess: true } },
        containers: [
          { name: 'e', securityContext: { windowsOptions: { hostProcess: true } } },
          { name: 'f', securityContext: { windowsOptions: { hostProcess: true } } },
        ],
      },
      'hostProcess (pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true)',
    ],
    [
      'probe hosts',
      {
        containers: [
          {
            name: 'a',
            livenessProbe: { httpGet: { host: 'localhost', port: 80 } },
            readinessProbe: { tcpSocket: { host: '127.0.0.1', port: 80 } },
            lifecycle: { preStop: { httpGet: { host: '::1', port: 80 } } },
          },
          { name: 'b', startupProbe: { httpGet: { path: '/', port: 80 } } },
        ],
      },
      'probe or lifecycle host (container "a" uses probe or lifecycle hosts "127.0.0.1", "::1", "localhost")',
    ],
  ];
  for (const [what, spec, want, meta] of cases) assert.equal(detail(BASELINE, spec, meta), want, what);
});

test('restricted checks, with upstream reasons and details', () => {
  const cases: [string, PodSpec, string][] = [
    [
      'allowPrivilegeEscalation',
      restrictedPod({
        containers: [
          good('a', { securityContext: { allowPrivilegeEscalation: true } }),
          { name: 'b', securityContext: { capabilities: { drop: ['ALL'] } } },
        ],
      }),
      'allowPrivilegeEscalation != false (containers "a", "b" must set securityContext.allowPrivilegeEscalation=false)',
    ],
    [
      'capabilities',
      restrictedPod({
        containers: [
          { name: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ['FOO'] } } },
          { name: 'b', securityContext: { allowPrivilegeEscalation: false } },
          good('c', { securityContext: { capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'CHOWN'] } } }),
        ],
      }),
      'unrestricted capabilities (containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "c" must not include "CHOWN", "FOO" in securityContext.capabilities.add)',
    ],
    [
      'volumes',
      restrictedPod({
        volumes: [
          { name: 'ok', configMap: { name: 'c' } },
          { name: 'a', hostPath: { path: '/' } },
          { name: 'b', nfs: { server: 's', path: '/' } },
          { name: 'c' },
        ],
      }),
      'restricted volume types (volumes "a", "b", "c" use restricted volume types "hostPath", "nfs", "unknown")',
    ],
    [
      'runAsNonRoot implicit',
      {
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        containers: [good('a'), good('b', { securityContext: { runAsNonRoot: true } })],
      },
      'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)',
    ],
    [
      'runAsNonRoot explicit',
      restrictedPod({
        securityContext: { runAsNonRoot: false },
        containers: [good('c', { securityContext: { runAsNonRoot: false } })],
      }),
      'runAsNonRoot != true (pod and container "c" must not set securityContext.runAsNonRoot=false)',
    ],
    [
      'runAsUser',
      restrictedPod({
        securityContext: { runAsUser: 0 },
        containers: [
          good('c', { securityContext: { runAsUser: 0 } }),
          good('d', { securityContext: { runAsUser: 1 } }),
        ],
      }),
      'runAsUser=0 (pod and container "c" must not set runAsUser=0)',
    ],
    [
      'seccomp unset',
      {
        securityContext: { runAsNonRoot: true },
        containers: [
          good('a'),
          good('b'),
          good('c', { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'p' } } }),
        ],
      },
      'seccompProfile (pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ],
  ];
  for (const [what, spec, want] of cases) assert.equal(detail(RESTRICTED, spec), want, what);
});

test('reasons come baseline first, each group in check ID order; one refusal names them all', () => {
  const spec: PodSpec = {
    hostPID: true,
    containers: [{ name: 'c', image: 'i', securityContext: { privileged: true } }],
    volumes: [{ name: 'root', hostPath: { path: '/' } }],
  };
  const found = evaluatePod(RESTRICTED, {}, spec);
  assert.equal(
    forbiddenReason(found),
    'host namespaces, privileged, allowPrivilegeEscalation != false, unrestricted capabilities, restricted volume types, runAsNonRoot != true, seccompProfile',
  );
  assert.equal(
    forbiddenDetail(found),
    'host namespaces (hostPID=true), privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), restricted volume types (volume "root" uses restricted volume type "hostPath"), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  );
  assert.equal(
    forbiddenDetail(evaluatePod(BASELINE, {}, spec)),
    'host namespaces (hostPID=true), hostPath volumes (volume "root"), privileged (container "c" must not set securityContext.privileged=true)',
  );
});

test('versions: each check applies from its version; older pinned versions are laxer', () => {
  const noSeccomp: PodSpec = { securityContext: { runAsNonRoot: true }, containers: [good('a')] };
  assert.match(detail(at('restricted', 19), noSeccomp), /seccompProfile/);
  assert.equal(detail(at('restricted', 18), noSeccomp), '', 'restricted seccomp from v1.19');
  const caps = restrictedPod({ containers: [{ name: 'a', securityContext: { allowPrivilegeEscalation: false } }] });
  assert.equal(detail(at('restricted', 21), caps), '', 'drop ALL from v1.22');
  assert.match(detail(at('restricted', 22), caps), /unrestricted capabilities/);
  const root = restrictedPod({ securityContext: { runAsUser: 0 } });
  assert.equal(detail(at('restricted', 22), root), '');
  assert.match(detail(at('restricted', 23), root), /runAsUser=0/);
  const probeHost = { containers: [{ name: 'a', livenessProbe: { tcpSocket: { host: 'x', port: 1 } } }] };
  assert.equal(detail(at('baseline', 33), probeHost), '');
  assert.match(detail(at('baseline', 34), probeHost), /probe or lifecycle host/);
  const sysctl = {
    securityContext: { sysctls: [{ name: 'net.ipv4.tcp_notsent_lowat', value: '1' }] },
    containers: [{ name: 'a' }],
  };
  assert.match(detail(at('baseline', 36), sysctl), /forbidden sysctls/);
  assert.equal(detail(at('baseline', 37), sysctl), '', 'allowed from v1.37');
  const engine = { containers: [{ name: 'a', securityContext: { seLinuxOptions: { type: 'container_engine_t' } } }] };
  assert.match(detail(at('baseline', 30), engine), /seLinuxOptions/);
  assert.equal(detail(at('baseline', 31), engine), '');
});

test('user namespaces (hostUsers: false) relax runAsNonRoot, runAsUser and baseline procMount from v1.35; Windows pods skip Linux-only checks from v1.25', () => {
  const userns: PodSpec = {
    hostUsers: false,
    securityContext: { seccompProfile: { type: 'RuntimeDefault' }, runAsUser: 0 },
    containers: [good('a')],
  };
  assert.equal(detail(at('restricted', 35), userns), '');
  assert.equal(
    detail(at('restricted', 34), userns),
    'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true), runAsUser=0 (pod must not set runAsUser=0)',
  );
  const unmasked: PodSpec = {
    hostUsers: false,
    containers: [{ name: 'a', securityContext: { procMount: 'Unmasked' } }],
  };
  assert.equal(detail(at('baseline', 35), unmasked), '');
  assert.match(detail(at('baseline', 34), unmasked), /procMount/);
  const restrictedUnmasked = restrictedPod({
    hostUsers: false,
    containers: [good('a', { securityContext: { procMount: 'Unmasked' } })],
  });
  assert.equal(
    detail(at('restricted', 35), restrictedUnmasked),
    'procMount (container "a" must not set securityContext.procMount to "Unmasked")',
    'restricted keeps procMount even in a user namespace',
  );
  const windows: PodSpec = {
    os: { name: 'windows' },
    securityContext: { runAsNonRoot: true },
    containers: [{ name: 'a' }],
  };
  assert.equal(detail(at('restricted', 25), windows), '');
  assert.match(detail(at('restricted', 24), windows), /allowPrivilegeEscalation/);
});
