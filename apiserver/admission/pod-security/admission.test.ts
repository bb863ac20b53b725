import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { User } from '../../api/admission.js';
import { Api, type FieldCheck } from '../../api/api.js';
import { ApiError } from '../../api/errors.js';
import { storageKey } from '../../resources.js';
import { Store } from '../../storage/store.js';
import { DEFAULT_POD_SECURITY, podSecurity, type PodSecurityConfiguration } from './admission.js';

const admin: User = { name: 'kubernetes-admin', groups: ['system:masters'] };
const rsController: User = {
  name: 'system:serviceaccount:kube-system:replicaset-controller',
  groups: ['system:serviceaccounts'],
};

const ROOT_POD = {
  metadata: { name: 'root' },
  spec: {
    hostPID: true,
    containers: [
      {
        name: 'sh',
        image: 'busybox:1',
        securityContext: { privileged: true },
        volumeMounts: [{ name: 'host', mountPath: '/host' }],
      },
    ],
    volumes: [{ name: 'host', hostPath: { path: '/' } }],
  },
};
const ROOT_DETAIL =
  'host namespaces (hostPID=true), privileged (container "sh" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "sh" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "sh" must set securityContext.capabilities.drop=["ALL"]), restricted volume types (volume "host" uses restricted volume type "hostPath"), runAsNonRoot != true (pod or container "sh" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "sh" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';
const RESTRICTED_POD = {
  metadata: { name: 'good' },
  spec: {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'c',
        image: 'app:1',
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      },
    ],
  },
};
const HOSTNET_POD = {
  metadata: { name: 'hostnet' },
  spec: { hostNetwork: true, containers: [{ name: 'c', image: 'app:1' }] },
};

function setup(config: PodSecurityConfiguration = DEFAULT_POD_SECURITY) {
  const api = new Api(new Store(), '10.96.0.0/12', [podSecurity(config)]);
  const audit: string[] = [];
  api.onAuditAnnotation = (a, key, value) => audit.push(`${a.name} ${key}=${value}`);
  const namespaces = api.res('', 'namespaces');
  const pods = api.res('', 'pods');
  /** Runs a call as `user` and returns its result with the warnings it produced. */
  const as = <T>(user: User, fn: () => T): { result: T; warnings: string[] } => {
    const fields: FieldCheck = { mode: 'Ignore', warnings: [] };
    const result = api.runAs(user, fn, { fields });
    return { result, warnings: fields.warnings ?? [] };
  };
  const namespace = (name: string, labels: Record<string, string> = {}) =>
    as(admin, () => api.create(namespaces, '', { metadata: { name, labels } }));
  const createPod = (ns: string, pod: object, user: User = admin) =>
    as(user, () => api.create(pods, ns, structuredClone(pod)));
  return { api, audit, namespaces, pods, as, namespace, createPod };
}

const refusal = (code: number, message: string) => (e: unknown) => {
  assert.ok(e instanceof ApiError, String(e));
  assert.equal(e.message, message);
  assert.equal(e.code, code);
  return true;
};

test('enforce=restricted refuses a privileged hostPID pod with hostPath / (403, every violation named) and admits a restricted pod', () => {
  const { namespace, createPod } = setup();
  namespace('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  assert.throws(
    () => createPod('locked', ROOT_POD),
    refusal(403, `pods "root" is forbidden: violates PodSecurity "restricted:latest": ${ROOT_DETAIL}`),
  );
  assert.deepEqual(createPod('locked', RESTRICTED_POD).warnings, [], 'warn follows enforce, and the pod meets it');
  namespace('pinned', {
    'pod-security.kubernetes.io/enforce': 'baseline',
    'pod-security.kubernetes.io/enforce-version': 'v1.22',
  });
  assert.throws(
    () => createPod('pinned', HOSTNET_POD),
    refusal(
      403,
      'pods "hostnet" is forbidden: violates PodSecurity "baseline:v1.22": host namespaces (hostNetwork=true)',
    ),
  );
  namespace('open');
  assert.equal(createPod('open', ROOT_POD).result.metadata.name, 'root', 'no labels: the defaults, privileged');
});

test('warn and audit levels: the pod is admitted, the warning comes back and the audit violation is recorded', () => {
  const { namespace, createPod, audit } = setup();
  namespace('watched', {
    'pod-security.kubernetes.io/warn': 'baseline',
    'pod-security.kubernetes.io/audit': 'restricted',
  });
  const { result, warnings } = createPod('watched', HOSTNET_POD);
  assert.equal(result.metadata.name, 'hostnet');
  assert.deepEqual(warnings, ['would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)']);
  assert.ok(
    audit.some((l) =>
      l.startsWith(
        'hostnet pod-security.kubernetes.io/audit-violations=would violate PodSecurity "restricted:latest": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false',
      ),
    ),
    audit.join('\n'),
  );
  namespace('strict-enforce', {
    'pod-security.kubernetes.io/enforce': 'baseline',
    'pod-security.kubernetes.io/warn': 'restricted',
  });
  const restrictedOnly = { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'app:1' }] } };
  assert.match(
    createPod('strict-enforce', restrictedOnly).warnings[0]!,
    /^would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false/,
  );
});

test('bad labels: a namespace is refused with upstream field errors; pods in a namespace that kept bad labels are held to restricted', () => {
  const { api, namespaces, namespace, as, createPod } = setup();
  assert.throws(
    () =>
      namespace('bad', {
        'pod-security.kubernetes.io/enforce': 'strict',
        'pod-security.kubernetes.io/warn-version': '1.25',
      }),
    refusal(
      422,
      'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"',
    ),
  );
  namespace('ok');
  assert.throws(
    () =>
      as(admin, () =>
        api.patch(namespaces, '', 'ok', 'merge', {
          metadata: { labels: { 'pod-security.kubernetes.io/enforce-version': 'v1.022' } },
        }),
      ),
    refusal(
      422,
      'Namespace "ok" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "v1.022": must be "latest" or "v1.x"',
    ),
  );
  // A namespace stored before the plugin with a bad enforce label: enforce fails closed (restricted).
  namespace('legacy');
  const key = storageKey(namespaces, '', 'legacy');
  const stored = api.store.get(key)!;
  api.store.update(key, {
    ...stored,
    metadata: { ...stored.metadata, labels: { 'pod-security.kubernetes.io/enforce': 'oops' } },
  });
  assert.throws(() => createPod('legacy', HOSTNET_POD), /violates PodSecurity "restricted:latest"/);
});

test('workloads: templates are never refused, only warned about; the pods their controllers create are refused', () => {
  const { api, namespace, as, createPod } = setup();
  namespace('locked', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  const template = { metadata: { labels: { app: 'x' } }, spec: ROOT_POD.spec };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { selector: { matchLabels: { app: 'x' } }, template },
  };
  const created = as(admin, () => api.create(api.res('apps', 'deployments'), 'locked', structuredClone(deployment)));
  assert.equal(created.result.metadata.name, 'd');
  assert.deepEqual(created.warnings, [`would violate PodSecurity "restricted:latest": ${ROOT_DETAIL}`]);
  const cronJob = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'c' },
    spec: {
      schedule: '* * * * *',
      jobTemplate: { spec: { template: { spec: { ...RESTRICTED_POD.spec, restartPolicy: 'Never' } } } },
    },
  };
  assert.deepEqual(
    as(admin, () => api.create(api.res('batch', 'cronjobs'), 'locked', cronJob)).warnings,
    [],
    'a restricted template draws no warning',
  );
  assert.throws(
    () => createPod('locked', { ...ROOT_POD, metadata: { name: 'd-abc12' } }, rsController),
    refusal(403, `pods "d-abc12" is forbidden: violates PodSecurity "restricted:latest": ${ROOT_DETAIL}`),
  );
});

test('raising the enforce level warns about the pods already there, one line per distinct violation', () => {
  const { api, namespaces, namespace, as, createPod } = setup();
  namespace('team');
  createPod('team', { ...HOSTNET_POD, metadata: { name: 'b' } });
  createPod('team', { ...HOSTNET_POD, metadata: { name: 'a' } });
  createPod('team', { ...HOSTNET_POD, metadata: { name: 'c' } });
  createPod('team', ROOT_POD);
  createPod('team', RESTRICTED_POD);
  const label = (labels: Record<string, string>) =>
    as(admin, () => api.patch(namespaces, '', 'team', 'merge', { metadata: { labels } })).warnings;
  assert.deepEqual(label({ 'pod-security.kubernetes.io/enforce': 'baseline' }), [
    'existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest"',
    'a (and 2 other pods): host namespaces',
    'root: host namespaces, hostPath volumes, privileged',
  ]);
  assert.deepEqual(
    label({ 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/audit': 'restricted' }),
    [],
    'enforce unchanged: no check',
  );
  assert.deepEqual(label({ 'pod-security.kubernetes.io/enforce': 'privileged' }), [], 'lowering: no check');
});

test('pod updates are checked again only when an image or the set of containers changes', () => {
  const { api, namespaces, pods, namespace, as, createPod } = setup();
  namespace('team');
  createPod('team', HOSTNET_POD);
  as(admin, () =>
    api.patch(namespaces, '', 'team', 'merge', {
      metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } },
    }),
  );
  as(admin, () => api.patch(pods, 'team', 'hostnet', 'merge', { metadata: { labels: { touched: 'yes' } } }));
  assert.throws(
    () =>
      as(admin, () =>
        api.patch(pods, 'team', 'hostnet', 'strategic', { spec: { containers: [{ name: 'c', image: 'app:2' }] } }),
      ),
    refusal(
      403,
      'pods "hostnet" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)',
    ),
  );
});

test('exemptions: namespaces, users and runtime classes from the configuration; configured defaults; kube-system is not exempt by default', () => {
  const config: PodSecurityConfiguration = {
    defaults: { ...DEFAULT_POD_SECURITY.defaults, enforce: { level: 'baseline', version: 'latest' } },
    exemptions: { namespaces: ['ops'], usernames: ['deployer'], runtimeClasses: ['sandboxed'] },
  };
  const { api, namespace, createPod, as } = setup(config);
  assert.throws(
    () => createPod('default', HOSTNET_POD),
    /violates PodSecurity "baseline:latest"/,
    'the configured default applies to unlabelled namespaces',
  );
  assert.throws(
    () => createPod('kube-system', HOSTNET_POD),
    /violates PodSecurity "baseline:latest"/,
    'as upstream, kube-system is held to the defaults',
  );
  assert.deepEqual(namespace('ops', { 'pod-security.kubernetes.io/enforce': 'restricted' }).warnings, [
    'namespace "ops" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored',
  ]);
  assert.equal(createPod('ops', ROOT_POD).result.metadata.name, 'root');
  assert.equal(
    createPod('default', ROOT_POD, { name: 'deployer', groups: ['system:authenticated'] }).result.metadata.name,
    'root',
  );
  as(admin, () =>
    api.create(api.res('node.k8s.io', 'runtimeclasses'), '', {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: 'sandboxed' },
      handler: 'kata',
    }),
  );
  const sandboxed = { metadata: { name: 'vm' }, spec: { ...ROOT_POD.spec, runtimeClassName: 'sandboxed' } };
  assert.equal(createPod('default', sandboxed).result.metadata.name, 'vm');
});
