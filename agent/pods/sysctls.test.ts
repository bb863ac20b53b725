// Sysctls, seccomp and AppArmor as upstream's kubelet admits and maps them to CRI.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Pod } from 'kubernetes-types/core/v1.js';

import { applyPodDefaults } from '../../kube/pod-defaults.js';
import { buildContainerConfig, buildSandboxConfig } from './cri-config.js';
import { admitSysctls, checkAllowedUnsafe } from './sysctls.js';

const node = { nodeName: 'n1', podLogsDir: '/var/log/pods', rootDir: '/var/lib/kubelet', hostIP: '192.0.2.1' };
const mk = (spec: Partial<NonNullable<Pod['spec']>>, annotations: Record<string, string> = {}): Pod =>
  applyPodDefaults({
    metadata: { name: 'p', namespace: 'default', uid: 'u', annotations },
    spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
  });
const sysctls = (...s: [string, string][]) => ({
  securityContext: { sysctls: s.map(([name, value]) => ({ name, value })) },
});

test("sysctls: the safe set passes, others need --allowed-unsafe-sysctls, net ones are refused with the host network; rejected with upstream's reason and message", () => {
  assert.equal(
    admitSysctls(mk(sysctls(['net.ipv4.ip_local_port_range', '1024 65000'], ['kernel/shm_rmid_forced', '1'])), []),
    undefined,
  );
  assert.deepEqual(admitSysctls(mk(sysctls(['net.core.somaxconn', '1024'])), []), {
    reason: 'SysctlForbidden',
    message: 'forbidden sysctl: "net.core.somaxconn" not allowlisted',
  });
  assert.equal(admitSysctls(mk(sysctls(['net.core.somaxconn', '1024'])), ['net.core.*']), undefined);
  assert.equal(admitSysctls(mk(sysctls(['kernel.msgmax', '65536'])), ['kernel.msgmax']), undefined);
  assert.deepEqual(admitSysctls(mk({ hostNetwork: true, ...sysctls(['net.ipv4.tcp_syncookies', '1']) }), []), {
    reason: 'SysctlForbidden',
    message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host net enabled',
  });
  assert.throws(
    () => checkAllowedUnsafe(['kernel.panic']),
    /the sysctls "kernel.panic" are not known to be namespaced/,
  );
  assert.throws(() => checkAllowedUnsafe(['Net.*']), /must have at most 253 characters/);
  checkAllowedUnsafe(['net.*', 'kernel.msg*', 'fs.mqueue.msg_max']);
});

test("the sandbox gets the sysctls, the pod's seccomp and AppArmor profiles, and is privileged when any container is, init containers included", () => {
  const pod = mk({
    ...sysctls(['net.ipv4.tcp_syncookies', '1']),
    securityContext: {
      sysctls: [{ name: 'net/ipv4/tcp_syncookies', value: '1' }],
      seccompProfile: { type: 'RuntimeDefault' },
      appArmorProfile: { type: 'Unconfined' },
    } as never,
    initContainers: [{ name: 'setup', image: 'i', securityContext: { privileged: true } }],
  });
  const sb = buildSandboxConfig(pod, 0, node);
  assert.deepEqual(sb.linux!.sysctls, { 'net.ipv4.tcp_syncookies': '1' });
  assert.equal(sb.linux!.security_context!.privileged, true);
  assert.deepEqual(sb.linux!.security_context!.seccomp, { profile_type: 'RuntimeDefault' });
  assert.deepEqual(sb.linux!.security_context!.apparmor, { profile_type: 'Unconfined' });
  assert.equal(
    buildSandboxConfig(mk({}), 0, node).linux!.security_context!.seccomp,
    undefined,
    'unset stays the runtime default',
  );
});

test("containers: their own profiles over the pod's, Localhost seccomp under <root-dir>/seccomp, the legacy AppArmor annotation", () => {
  const pod = mk(
    {
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'a',
          image: 'i',
          securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } },
        },
        { name: 'b', image: 'i' },
      ],
    },
    { 'container.apparmor.security.beta.kubernetes.io/b': 'localhost/k8s-deny-write' },
  );
  const cfg = (i: number) =>
    buildContainerConfig(pod, pod.spec!.containers[i]!, 'container', 0, 'sha', new Map(), [], '/var/lib/kubelet').linux!
      .security_context!;
  assert.deepEqual(cfg(0).seccomp, {
    profile_type: 'Localhost',
    localhost_ref: '/var/lib/kubelet/seccomp/profiles/audit.json',
  });
  assert.deepEqual(cfg(1).seccomp, { profile_type: 'RuntimeDefault' });
  assert.deepEqual(cfg(1).apparmor, { profile_type: 'Localhost', localhost_ref: 'k8s-deny-write' });
  assert.equal(cfg(0).apparmor, undefined);
});
