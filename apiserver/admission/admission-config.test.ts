import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { loadAdmissionConfig } from './admission-config.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admission-config-'));
const write = (name: string, text: string): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

test('AdmissionConfiguration: PodSecurity inline or from a file beside it; unset defaults are privileged:latest', () => {
  const inline = write(
    'inline.yaml',
    `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      enforce-version: v1.30
      warn: restricted
    exemptions:
      namespaces: [kube-system]
      usernames: ["system:serviceaccount:kube-system:replicaset-controller"]
`,
  );
  const c = loadAdmissionConfig(inline).podSecurity;
  assert.deepEqual(c.defaults, {
    enforce: { level: 'baseline', version: { minor: 30 } },
    warn: { level: 'restricted', version: 'latest' },
    audit: { level: 'privileged', version: 'latest' },
  });
  assert.deepEqual(c.exemptions, {
    namespaces: ['kube-system'],
    runtimeClasses: [],
    usernames: ['system:serviceaccount:kube-system:replicaset-controller'],
  });
  write(
    'pss.yaml',
    'apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults: {audit: restricted}\n',
  );
  const byPath = write(
    'by-path.yaml',
    'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: pss.yaml\n',
  );
  assert.equal(loadAdmissionConfig(byPath).podSecurity.defaults.audit.level, 'restricted');
  const none = write(
    'none.yaml',
    'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n',
  );
  assert.equal(loadAdmissionConfig(none).podSecurity.defaults.enforce.level, 'privileged');
});

test('AdmissionConfiguration: every mistake names the file and the field', () => {
  const bad = write(
    'bad.yaml',
    `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: strict, warn-version: "1.30"}
    exemptions: {namespaces: [Bad_NS, ops, ops], usernames: [""]}
`,
  );
  assert.throws(
    () => loadAdmissionConfig(bad),
    (e: Error) => {
      assert.match(e.message, new RegExp(`^${bad}: plugins\\[0\\]\\.configuration: `));
      assert.match(
        e.message,
        /defaults\.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted/,
      );
      assert.match(e.message, /defaults\.warn-version: Invalid value: "1\.30": must be "latest" or "v1\.x"/);
      assert.match(e.message, /exemptions\.namespaces\[0\]: Invalid value: "Bad_NS": a lowercase RFC 1123 label/);
      assert.match(e.message, /exemptions\.namespaces\[2\]: Duplicate value: "ops"/);
      assert.match(e.message, /exemptions\.usernames\[0\]: Invalid value: "": username must not be empty/);
      return true;
    },
  );
  const wrongKind = write('kind.yaml', 'apiVersion: v1\nkind: ConfigMap\n');
  assert.throws(
    () => loadAdmissionConfig(wrongKind),
    new RegExp(`^Error: ${wrongKind}: not an AdmissionConfiguration`),
  );
  assert.throws(() => loadAdmissionConfig(path.join(dir, 'missing.yaml')), /missing\.yaml: ENOENT/);
});
